//! A picture (PNG, JPEG, GIF, BMP or WebP) made into the graph's input: decoded, flattened
//! onto the background, turned grey or kept in colour, fitted to the model's size, then
//! scaled and normalized per channel, in the layout the graph takes.

use crate::error::{MediaError, check_size};
use image::imageops::{self, FilterType};
use image::{DynamicImage, GrayImage, ImageDecoder, ImageFormat, ImageReader, RgbImage};
use model_manifest::{Color, Fit, ImageSpec, Layout};
use std::io::Cursor;

/// A picture ready for the graph, and what it was.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageTensor {
    /// The tensor's values for this picture, in `spec.shape()`'s order.
    pub values: Vec<f32>,
    /// The file's format (`png`, `jpeg`, ...) and size as sent.
    pub format: &'static str,
    pub width: u32,
    pub height: u32,
}

impl ImageTensor {
    /// The tensor's values and the facts, apart.
    pub fn into_parts(self) -> (Vec<f32>, serde_json::Value) {
        let facts = self.facts();
        (self.values, facts)
    }

    /// What a result echoes of its input (never the pixels).
    pub fn facts(&self) -> serde_json::Value {
        serde_json::json!({"format": self.format, "width": self.width, "height": self.height})
    }
}

/// Room for what a decoder allocates beside the picture (palettes, rows, metadata).
const HEADER_ALLOC: u64 = 4 << 20;

/// How much larger than the model's size a picture may be before the filter resizes it: a
/// larger one is first shrunk by area averaging (`image`'s thumbnail: integer arithmetic into
/// the smaller picture only). The triangle filter's intermediate holds the input's full width
/// in floats (16 bytes a pixel): a 16,000,000 x 1 picture took 2 GB.
const FILTER_SPAN: u32 = 4;

/// The formats decoded, by name, for messages.
pub const FORMATS: &str = "PNG, JPEG, GIF, BMP or WebP";

/// Decodes `bytes` and makes the tensor `spec` describes.
pub fn to_tensor(bytes: &[u8], spec: &ImageSpec) -> Result<ImageTensor, MediaError> {
    let (picture, format) = decode(bytes, spec)?;
    let (width, height) = (picture.width(), picture.height());
    let fitted = fit(flatten(picture, spec), spec);
    Ok(ImageTensor {
        values: tensor(&fitted, spec),
        format,
        width,
        height,
    })
}

/// Reads the header, refuses what is too large, then decodes.
fn decode(bytes: &[u8], spec: &ImageSpec) -> Result<(DynamicImage, &'static str), MediaError> {
    check_size(bytes, spec.max_bytes, "image")?;
    // A PNG's colour profile is inflated as its header is read (a 400 kB chunk grew to 800 MB
    // under the decoder's default limit), and no model reads it: it is left out.
    let stripped = png_without_profile(bytes);
    let bytes = stripped.as_deref().unwrap_or(bytes);
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| MediaError::Unsupported(format!("cannot read the image: {e}")))?;
    // Some decoders fix their budget as they read the header (the PNG one does): the largest
    // picture the model takes, as 8-bit RGBA.
    let mut header = image::Limits::default();
    header.max_alloc = Some(spec.max_pixels.saturating_mul(4) + HEADER_ALLOC);
    reader.limits(header);
    let format = match reader.format() {
        Some(ImageFormat::Png) => "png",
        Some(ImageFormat::Jpeg) => "jpeg",
        Some(ImageFormat::Gif) => "gif",
        Some(ImageFormat::Bmp) => "bmp",
        Some(ImageFormat::WebP) => "webp",
        Some(other) => {
            return Err(MediaError::Unsupported(format!(
                "a {other:?} image; this model takes {FORMATS}"
            )));
        }
        None => {
            return Err(MediaError::Unsupported(format!(
                "not a {FORMATS} file (its first bytes are no known image signature)"
            )));
        }
    };
    if format == "jpeg" && !jpeg_is_complete(bytes) {
        return Err(MediaError::Truncated(
            "the JPEG file ends before its last scan does (no end-of-image marker): it was cut \
             short"
                .into(),
        ));
    }
    let mut decoder = reader.into_decoder().map_err(|e| failed(format, e))?;
    let (w, h) = decoder.dimensions();
    let pixels = u64::from(w) * u64::from(h);
    if pixels > spec.max_pixels {
        return Err(MediaError::TooLarge(format!(
            "the {format} declares {w} x {h} pixels ({pixels}); this model takes at most {} \
             (refused before decoding)",
            spec.max_pixels
        )));
    }
    if pixels == 0 {
        return Err(MediaError::Unsupported(format!(
            "the {format} declares {w} x {h} pixels: nothing to see"
        )));
    }
    // The picture as 8-bit RGBA, one frame: what a 16-megapixel picture may take (64 MB of an
    // instance's 128 MiB). A 16-bit picture of that size, or a GIF frame larger than its
    // screen, needs more and is refused rather than running the instance out of memory.
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(pixels.saturating_mul(4) + HEADER_ALLOC);
    decoder.set_limits(limits).map_err(|e| failed(format, e))?;
    // Not every decoder checks its output against the limits (the PNG one does not).
    let needs = decoder.total_bytes();
    let budget = pixels.saturating_mul(4) + HEADER_ALLOC;
    if needs > budget {
        return Err(MediaError::TooLarge(format!(
            "the {format} needs {needs} bytes decoded ({w} x {h} pixels of {:?}); this model \
             decodes at most 4 bytes a pixel (8-bit RGBA): send an 8-bit picture",
            decoder.color_type()
        )));
    }
    let picture = DynamicImage::from_decoder(decoder).map_err(|e| failed(format, e))?;
    Ok((picture, format))
}

/// `bytes` without their `iCCP` chunks when they are a PNG that has any (a chunk: its length,
/// type, data and CRC; a malformed file is left for the decoder to refuse).
fn png_without_profile(bytes: &[u8]) -> Option<Vec<u8>> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if !bytes.starts_with(SIGNATURE) {
        return None;
    }
    let mut kept = SIGNATURE.to_vec();
    let mut at = SIGNATURE.len();
    let mut dropped = false;
    while at + 8 <= bytes.len() {
        let length = u32::from_be_bytes(bytes[at..at + 4].try_into().ok()?) as usize;
        let end = at.checked_add(12)?.checked_add(length)?.min(bytes.len());
        if &bytes[at + 4..at + 8] == b"iCCP" {
            dropped = true;
        } else {
            kept.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    kept.extend_from_slice(&bytes[at..]);
    dropped.then_some(kept)
}

/// A JPEG's last scan (the last start-of-scan marker, FF DA) is followed by its end-of-image
/// marker (FF D9). Entropy-coded data never holds FF DA or FF D9 (an FF there is stuffed as
/// FF 00), so a file cut anywhere in its last scan lacks the end marker. The JPEG decoder
/// itself fills a cut-off scan with grey rather than failing.
fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let last_scan = bytes
        .windows(2)
        .rposition(|w| w == [0xFF, 0xDA])
        .unwrap_or(0);
    bytes[last_scan..].windows(2).any(|w| w == [0xFF, 0xD9])
}

/// A decoder's error, as truncated or undecodable.
fn failed(format: &str, e: image::ImageError) -> MediaError {
    let said = e.to_string();
    let lower = said.to_lowercase();
    let cut_short = matches!(&e, image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof)
        || [
            "eof",
            "end of file",
            "truncat",
            "unexpected end",
            "not enough data",
            "no more data",
        ]
        .iter()
        .any(|w| lower.contains(w));
    if cut_short {
        MediaError::Truncated(format!(
            "the {format} file ends before its data does: {said}"
        ))
    } else if let image::ImageError::Limits(_) = e {
        MediaError::TooLarge(format!(
            "the {format} needs more memory to decode than allowed: {said}"
        ))
    } else {
        MediaError::Unsupported(format!("cannot decode the {format}: {said}"))
    }
}

/// The picture as 8-bit grey or RGB, transparent pixels laid over the background. Taken by
/// value, so a picture already in the wanted form is not copied (16 megapixels of RGBA are
/// 64 MB; an instance has 128 MiB by default).
fn flatten(picture: DynamicImage, spec: &ImageSpec) -> DynamicImage {
    let bg = u32::from(spec.background);
    let over = |c: u8, a: u8| {
        ((u32::from(c) * u32::from(a) + bg * (255 - u32::from(a)) + 127) / 255) as u8
    };
    let grey_of = |r: u8, g: u8, b: u8| {
        // ITU-R 601-2 luma, as Pillow's convert("L") computes it, so a training pipeline in
        // Python and this one see the same grey.
        ((u32::from(r) * 299 + u32::from(g) * 587 + u32::from(b) * 114 + 500) / 1000) as u8
    };
    let (w, h) = (picture.width(), picture.height());
    let kind = picture.color();
    match (spec.color, kind.has_color(), kind.has_alpha()) {
        (Color::Grayscale, false, false) => picture.into_luma8().into(),
        (Color::Grayscale, false, true) => {
            let la = picture.into_luma_alpha8();
            GrayImage::from_fn(w, h, |x, y| {
                let p = la.get_pixel(x, y);
                image::Luma([over(p[0], p[1])])
            })
            .into()
        }
        (Color::Grayscale, true, false) => {
            let rgb = picture.into_rgb8();
            GrayImage::from_fn(w, h, |x, y| {
                let p = rgb.get_pixel(x, y);
                image::Luma([grey_of(p[0], p[1], p[2])])
            })
            .into()
        }
        (Color::Grayscale, true, true) => {
            let rgba = picture.into_rgba8();
            GrayImage::from_fn(w, h, |x, y| {
                let p = rgba.get_pixel(x, y);
                image::Luma([over(grey_of(p[0], p[1], p[2]), p[3])])
            })
            .into()
        }
        (Color::Rgb, _, false) => picture.into_rgb8().into(),
        (Color::Rgb, _, true) => {
            let rgba = picture.into_rgba8();
            RgbImage::from_fn(w, h, |x, y| {
                let p = rgba.get_pixel(x, y);
                image::Rgb([over(p[0], p[3]), over(p[1], p[3]), over(p[2], p[3])])
            })
            .into()
        }
    }
}

/// Brings the picture to the model's size as `spec.fit` says. A picture already of that
/// size is left as it is (training images pass through unchanged).
fn fit(picture: DynamicImage, spec: &ImageSpec) -> DynamicImage {
    let (tw, th) = (spec.width, spec.height);
    let (w, h) = (picture.width(), picture.height());
    if (w, h) == (tw, th) {
        return picture;
    }
    let (sx, sy) = (f64::from(tw) / f64::from(w), f64::from(th) / f64::from(h));
    let scaled = |s: f64, v: u32| ((f64::from(v) * s).round() as u32).max(1);
    match spec.fit {
        Fit::Stretch => resize(&picture, tw, th),
        Fit::Pad => {
            let s = sx.min(sy);
            let (nw, nh) = (scaled(s, w).min(tw), scaled(s, h).min(th));
            let inner = resize(&picture, nw, nh);
            let mut canvas = blank(&picture, tw, th, spec.background);
            imageops::overlay(
                &mut canvas,
                &inner,
                i64::from((tw - nw) / 2),
                i64::from((th - nh) / 2),
            );
            canvas
        }
        Fit::Crop => {
            // The centre part of the model's aspect ratio, cut from the picture as sent, then
            // resized: never the whole picture enlarged first.
            let s = sx.max(sy);
            let (cw, ch) = (
                ((f64::from(tw) / s).round() as u32).clamp(1, w),
                ((f64::from(th) / s).round() as u32).clamp(1, h),
            );
            let centre = picture.crop_imm((w - cw) / 2, (h - ch) / 2, cw, ch);
            resize(&centre, tw, th)
        }
    }
}

/// `picture` resized to `w` x `h` with the triangle filter, after an area-averaging shrink to
/// at most [`FILTER_SPAN`] times that size.
fn resize(picture: &DynamicImage, w: u32, h: u32) -> DynamicImage {
    let (pw, ph) = (picture.width(), picture.height());
    if pw > w.saturating_mul(FILTER_SPAN) || ph > h.saturating_mul(FILTER_SPAN) {
        let (mw, mh) = (
            pw.min(w.saturating_mul(FILTER_SPAN)),
            ph.min(h.saturating_mul(FILTER_SPAN)),
        );
        let shrunk: DynamicImage = match picture {
            DynamicImage::ImageLuma8(p) => imageops::thumbnail(p, mw, mh).into(),
            DynamicImage::ImageRgb8(p) => imageops::thumbnail(p, mw, mh).into(),
            other => other.thumbnail_exact(mw, mh),
        };
        return shrunk.resize_exact(w, h, FilterType::Triangle);
    }
    picture.resize_exact(w, h, FilterType::Triangle)
}

/// A picture of `like`'s kind, `w` x `h`, every channel at `level`.
fn blank(like: &DynamicImage, w: u32, h: u32, level: u8) -> DynamicImage {
    match like {
        DynamicImage::ImageLuma8(_) => GrayImage::from_pixel(w, h, image::Luma([level])).into(),
        _ => RgbImage::from_pixel(w, h, image::Rgb([level; 3])).into(),
    }
}

/// The values the graph takes: per channel `((v or 255 - v) / 255 * scale - mean) / std`.
fn tensor(picture: &DynamicImage, spec: &ImageSpec) -> Vec<f32> {
    let channels = spec.color.channels();
    let bytes: &[u8] = picture.as_bytes();
    let per = |list: &[f32], c: usize, default: f32| match list.len() {
        0 => default,
        1 => list[0],
        _ => list[c],
    };
    let rule: Vec<(f32, f32)> = (0..channels)
        .map(|c| (per(&spec.mean, c, 0.0), per(&spec.std, c, 1.0)))
        .collect();
    let value = |v: u8, c: usize| {
        let v = if spec.invert { 255 - v } else { v };
        let (mean, std) = rule[c];
        (f32::from(v) / 255.0 * spec.scale - mean) / std
    };
    let pixels = bytes.len() / channels;
    let mut out = vec![0f32; bytes.len()];
    for (i, px) in bytes.chunks_exact(channels).enumerate() {
        for (c, &v) in px.iter().enumerate() {
            let at = match spec.layout {
                Layout::Nhwc => i * channels + c,
                Layout::Nchw => c * pixels + i,
            };
            out[at] = value(v, c);
        }
    }
    out
}

#[cfg(test)]
mod tests;
