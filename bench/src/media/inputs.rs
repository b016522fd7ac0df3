//! The files section `media` sends, made here so nothing is downloaded and every run sends the
//! same bytes: a PNG of a handwritten digit of about 1 KB, the same digit photographed large
//! (a 1000 x 1000 JPEG: paper with uneven light, grain and blue ink), and one second of 16 kHz
//! speech-like sound as a 16-bit WAV. The digit is the first example of models/digits, so the
//! pictures are ones the model reads as a digit, not noise.

use anyhow::{Context, Result};
use base64::Engine;
use image::imageops::FilterType;
use image::{DynamicImage, GrayImage, ImageFormat, Rgb, RgbImage};
use std::io::Cursor;
use std::path::Path;

/// The size the small PNG aims at (issue 58: "a 1 KB PNG").
const PNG_BYTES: usize = 1024;
/// The side of the photographed digit (one megapixel).
pub const PHOTO_SIDE: u32 = 1000;
/// The sound's rate and length: the spoken-digits model's own.
pub const RATE: u32 = 16_000;

pub struct Inputs {
    pub png: Vec<u8>,
    pub jpeg: Vec<u8>,
    pub wav: Vec<u8>,
}

impl Inputs {
    /// Makes the three files from the first example of `digits` (a model directory).
    pub fn make(digits: &Path) -> Result<Self> {
        let digit = first_example(digits)?;
        Ok(Self {
            png: small_png(&digit)?,
            jpeg: photo_jpeg(&digit)?,
            wav: spoken_wav(),
        })
    }
}

/// The first `image` of `[[test_examples.examples]]` of `dir/model.toml`, decoded.
fn first_example(dir: &Path) -> Result<GrayImage> {
    let file = dir.join("model.toml");
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("reading {} (run from the repository root)", file.display()))?;
    let table: toml::Table = toml::from_str(&text).with_context(|| file.display().to_string())?;
    let b64 = table
        .get("test_examples")
        .and_then(|t| t.get("examples"))
        .and_then(|e| e.as_array())
        .and_then(|e| e.iter().find_map(|x| x.get("image")?.as_str()))
        .with_context(|| format!("{}: no example image", file.display()))?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64)?;
    Ok(image::load_from_memory(&bytes)?.to_luma8())
}

fn encode(picture: DynamicImage, format: ImageFormat) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    picture.write_to(&mut out, format)?;
    Ok(out.into_inner())
}

/// The digit enlarged smoothly to the square whose PNG comes nearest [`PNG_BYTES`].
fn small_png(digit: &GrayImage) -> Result<Vec<u8>> {
    let mut best: Option<Vec<u8>> = None;
    for side in (16..=48).step_by(2) {
        let big = image::imageops::resize(digit, side, side, FilterType::CatmullRom);
        let png = encode(big.into(), ImageFormat::Png)?;
        let off = |p: &Vec<u8>| p.len().abs_diff(PNG_BYTES);
        if best.as_ref().is_none_or(|b| off(&png) < off(b)) {
            best = Some(png);
        }
    }
    Ok(best.expect("at least one size tried"))
}

/// A small deterministic generator (xorshift): the same grain every run, no dependency.
struct Grain(u64);

impl Grain {
    /// A value in [-1, 1).
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// The digit as a photo of a page: 1000 x 1000 RGB, its ink (the digit enlarged to 800 px)
/// dark blue on off-white paper lit unevenly, with sensor grain; JPEG at quality 85.
fn photo_jpeg(digit: &GrayImage) -> Result<Vec<u8>> {
    let inner = 800;
    let ink = image::imageops::resize(digit, inner, inner, FilterType::CatmullRom);
    let margin = (PHOTO_SIDE - inner) / 2;
    let mut grain = Grain(0x9E37_79B9_7F4A_7C15);
    let side = PHOTO_SIDE as f32;
    let photo = RgbImage::from_fn(PHOTO_SIDE, PHOTO_SIDE, |x, y| {
        // Light falling off from the top-left corner, as under a desk lamp.
        let light = 1.0 - 0.18 * (x as f32 + y as f32) / (2.0 * side);
        let inked =
            if (margin..margin + inner).contains(&x) && (margin..margin + inner).contains(&y) {
                // The example is dark on light: 255 - level is how much ink.
                f32::from(255 - ink.get_pixel(x - margin, y - margin)[0]) / 255.0
            } else {
                0.0
            };
        let noise = 6.0 * grain.next();
        let paper = [238.0, 234.0, 222.0];
        let pen = [40.0, 48.0, 110.0];
        let channel = |c: usize| {
            let v = (paper[c] * (1.0 - inked) + pen[c] * inked) * light + noise;
            v.clamp(0.0, 255.0) as u8
        };
        Rgb([channel(0), channel(1), channel(2)])
    });
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85).encode_image(&photo)?;
    Ok(out)
}

/// One second at [`RATE`]: 0.2 s of quiet, a 0.55 s voiced sound (a falling 140-110 Hz
/// pitch, its harmonics shaped by three vowel formants, rising and fading), then quiet; low
/// noise throughout, as a recording has. 16-bit PCM mono WAV.
fn spoken_wav() -> Vec<u8> {
    let n = RATE as usize;
    let mut grain = Grain(0x2545_F491_4F6C_DD1D);
    let formants = [(700.0f32, 130.0f32), (1220.0, 70.0), (2600.0, 160.0)];
    let (start, length) = (0.2f32, 0.55f32);
    let mut phase = 0.0f32;
    let samples: Vec<i16> = (0..n)
        .map(|i| {
            let t = i as f32 / RATE as f32;
            let u = (t - start) / length;
            let mut v = 0.002 * grain.next();
            if (0.0..1.0).contains(&u) {
                let pitch = 140.0 - 30.0 * u;
                phase += std::f32::consts::TAU * pitch / RATE as f32;
                let envelope = (std::f32::consts::PI * u).sin().powf(0.6);
                let mut voiced = 0.0;
                for h in 1..=28 {
                    let f = pitch * h as f32;
                    let gain: f32 = formants
                        .iter()
                        .map(|(c, w)| 1.0 / (1.0 + ((f - c) / w).powi(2)))
                        .sum();
                    voiced += gain * (phase * h as f32).sin() / h as f32;
                }
                v += 0.25 * envelope * voiced;
            }
            (v.clamp(-1.0, 1.0) * 32767.0) as i16
        })
        .collect();
    wav16(&samples, RATE)
}

/// A 16-bit PCM mono WAV file of `samples` at `rate`.
fn wav16(samples: &[i16], rate: u32) -> Vec<u8> {
    let data = (samples.len() * 2) as u32;
    let mut out = Vec::with_capacity(44 + data as usize);
    out.extend(b"RIFF");
    out.extend((36 + data).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend(1u16.to_le_bytes()); // PCM
    out.extend(1u16.to_le_bytes()); // mono
    out.extend(rate.to_le_bytes());
    out.extend((rate * 2).to_le_bytes());
    out.extend(2u16.to_le_bytes());
    out.extend(16u16.to_le_bytes());
    out.extend(b"data");
    out.extend(data.to_le_bytes());
    out.extend(samples.iter().flat_map(|s| s.to_le_bytes()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Inputs {
        // Tests run in the bench's directory; the models are one level up.
        Inputs::make(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/digits")).unwrap()
    }

    #[test]
    fn the_png_is_about_a_kilobyte_and_the_jpeg_one_megapixel() {
        let i = inputs();
        assert!((800..=1300).contains(&i.png.len()), "{} bytes", i.png.len());
        assert_eq!(image::guess_format(&i.png).unwrap(), ImageFormat::Png);
        let photo = image::load_from_memory(&i.jpeg).unwrap();
        assert_eq!((photo.width(), photo.height()), (PHOTO_SIDE, PHOTO_SIDE));
        assert_eq!(image::guess_format(&i.jpeg).unwrap(), ImageFormat::Jpeg);
        // Fits the host's default 1 MiB request body once in base64.
        assert!(i.jpeg.len() * 4 / 3 < 1 << 20, "{} bytes", i.jpeg.len());
    }

    #[test]
    fn the_photo_shows_the_digit_dark_in_the_middle_and_paper_at_the_edge() {
        let photo = image::load_from_memory(&inputs().jpeg).unwrap().to_luma8();
        let mean = |x0: u32, y0: u32, side: u32| {
            let mut sum = 0u64;
            for y in y0..y0 + side {
                for x in x0..x0 + side {
                    sum += u64::from(photo.get_pixel(x, y)[0]);
                }
            }
            sum as f64 / f64::from(side * side)
        };
        let edge = mean(0, 0, 80);
        let darkest = (0..10)
            .flat_map(|i| (0..10).map(move |j| (100 + 80 * i, 100 + 80 * j)))
            .map(|(x, y)| mean(x, y, 80))
            .fold(f64::MAX, f64::min);
        assert!(edge > 200.0, "paper {edge}");
        assert!(darkest < 120.0, "ink {darkest}");
    }

    #[test]
    fn the_sound_is_one_second_of_16_khz_mono_that_the_media_crate_reads() {
        let wav = inputs().wav;
        assert_eq!(wav.len(), 44 + 2 * RATE as usize);
        let spec: model_manifest::AudioSpec = toml::from_str(
            "sample_rate = 16000\nseconds = 1.0\nfeatures = \"waveform\"\n[training_data]",
        )
        .unwrap();
        let sound = ::media::audio::Featurizer::new(&spec)
            .to_tensor(wav)
            .unwrap();
        assert_eq!(sound.sample_rate, RATE);
        assert_eq!(sound.channels, 1);
        assert!((sound.seconds - 1.0).abs() < 1e-9);
        let loud = |range: std::ops::Range<usize>| {
            sound.values[range].iter().fold(0f32, |m, v| m.max(v.abs()))
        };
        // Quiet before 0.2 s and after 0.75 s, the voice between.
        assert!(loud(0..3000) < 0.01);
        assert!(loud(5000..10000) > 0.1);
        assert!(loud(13000..16000) < 0.01);
    }
}
