//! `[input.image]` and `[input.audio]`: how a picture or a sound becomes the graph's input
//! tensor. The same sections drive the component (serving) and `media-features` (the
//! training script's featurizer, crates/media), so the two compute the same numbers.

use serde::{Deserialize, Serialize};

/// `[input] type = "image"`: `data.image` (base64 of a PNG, JPEG, GIF, BMP or WebP file) or
/// `data.image_url`. Decoded, turned to `color`, fitted to `width` x `height`, then each
/// value `v` of 0..255 becomes `((invert ? 255 - v : v) / 255 * scale - mean[c]) / std[c]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageSpec {
    pub color: Color,
    pub width: u32,
    pub height: u32,
    /// How a picture of another shape gets to `width` x `height`.
    #[serde(default)]
    pub fit: Fit,
    /// The grey level (0..255, all channels) that fills a transparent pixel and the border
    /// `fit = "pad"` adds: 255 for dark ink on white paper.
    #[serde(default)]
    pub background: u8,
    /// The order of the tensor's values: channels first (`nchw`) or last (`nhwc`). A graph
    /// taking one row per input (scikit-learn) gets the same values in this order, flat.
    #[serde(default)]
    pub layout: Layout,
    /// Whether 0 becomes 255 and 255 becomes 0 (ink high, as scikit-learn's digits).
    #[serde(default)]
    pub invert: bool,
    /// The value 255 becomes (after division by 255): 1 by default, 16 for scikit-learn's
    /// digits, 255 for a graph trained on raw bytes.
    #[serde(default = "one")]
    pub scale: f32,
    /// Subtracted per channel (one value for all, or one per channel).
    #[serde(default)]
    pub mean: Vec<f32>,
    /// Divides per channel after `mean` (one value for all, or one per channel).
    #[serde(default)]
    pub std: Vec<f32>,
    /// Refused before decoding when the file declares more pixels (a decompression bomb).
    #[serde(default = "default_max_pixels")]
    pub max_pixels: u64,
    /// Refused when the file (decoded from base64 or fetched) is larger.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// What the model was trained on (size, kind, how many), published as is in
    /// `/acceptable_ranges`.
    pub training_data: toml::Table,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Grayscale,
    Rgb,
}

impl Color {
    pub fn channels(self) -> usize {
        match self {
            Color::Grayscale => 1,
            Color::Rgb => 3,
        }
    }
}

/// How an image of another aspect ratio is fitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fit {
    /// Resized to exactly width x height, the aspect ratio changing.
    #[default]
    Stretch,
    /// Resized to fit inside, the rest filled with `background` (letterboxing).
    Pad,
    /// Resized to cover, the overhang cut off equally on both sides (centre crop).
    Crop,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    #[default]
    Nchw,
    Nhwc,
}

/// `[input] type = "audio"`: `data.audio` (base64 of a WAV file, PCM 8 to 32-bit or float,
/// mono or stereo, or of a FLAC or Ogg Vorbis file) or `data.audio_url`. Decoded, mixed down
/// to mono, resampled to `sample_rate`, optionally cut to the sound and peak-normalized,
/// padded with silence or cut to `seconds`, then given to the graph as `features` says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AudioSpec {
    pub sample_rate: u32,
    /// The length the graph takes: shorter sounds are padded with silence at the end,
    /// longer ones cut.
    pub seconds: f64,
    /// Cuts the leading and trailing parts quieter than this many decibels below the peak
    /// (a recording's silence around a word); none by default.
    #[serde(default)]
    pub trim_silence_db: Option<f32>,
    /// Scales the sound so its loudest sample is 1 (a quiet and a loud recording of the same
    /// word then give the same features).
    #[serde(default)]
    pub normalize: bool,
    pub features: AudioFeatures,
    /// Required when `features = "log_mel"`.
    #[serde(default)]
    pub log_mel: Option<LogMel>,
    /// Refused before decoding when the file declares a longer sound.
    #[serde(default = "default_max_seconds")]
    pub max_seconds: f64,
    /// Refused when the file is larger.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// What the model was trained on (duration, sample rate, speakers), published as is in
    /// `/acceptable_ranges`.
    pub training_data: toml::Table,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AudioFeatures {
    /// The samples themselves, `sample_rate * seconds` of them.
    Waveform,
    /// A log-mel spectrogram: `mels` rows of frames (mel-major), `ln(energy + 1e-6)`.
    LogMel,
}

/// A log-mel spectrogram: frames of `window` samples every `hop`, Hann-windowed, their power
/// spectrum (FFT of `window` points) pooled by `mels` triangular filters evenly spaced on the
/// mel scale (HTK's formula) between `fmin` and `fmax`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogMel {
    pub mels: usize,
    pub window: usize,
    pub hop: usize,
    #[serde(default)]
    pub fmin: f32,
    /// Half the sample rate by default.
    #[serde(default)]
    pub fmax: Option<f32>,
}

fn one() -> f32 {
    1.0
}

fn default_max_pixels() -> u64 {
    16_000_000
}

fn default_max_bytes() -> u64 {
    10 * 1024 * 1024
}

/// The largest request body that carries one file of `max_bytes` in base64 (line breaks
/// allowed: MIME wraps every 76 characters, 2.6 % more) with room for the rest of the JSON:
/// what a picture or sound model reads, and what the host must let through to it.
pub fn body_for(max_bytes: u64) -> usize {
    let base64 = (max_bytes as usize).div_ceil(3) * 4;
    base64 + base64 / 32 + 64 * 1024
}

/// The most values one input's tensor may hold (a 1024 x 1024 grey picture, 512 x 512 in
/// colour, a minute of 16 kHz waveform): the component builds the graph's row at 32 bytes a
/// value, and a batch holds several.
const MAX_VALUES: usize = 1 << 20;

/// Every problem of one input's tensor size.
fn values_problem(field: &str, shape: &[usize]) -> Option<String> {
    let values: usize = shape.iter().product();
    (values > MAX_VALUES).then(|| {
        format!(
            "input.{field}: one input's tensor would hold {values} values; at most {MAX_VALUES} \
             are taken (a smaller size, or fewer seconds)"
        )
    })
}

/// The most bytes of samples a sound model may hold (see `AudioSpec::problems`).
const MAX_HELD_BYTES: f64 = 48e6;

fn default_max_seconds() -> f64 {
    600.0
}

impl ImageSpec {
    /// `color` at `width` x `height` with every other field as a manifest that leaves it out
    /// gets it (for code that builds one: tests, tools).
    pub fn new(color: Color, width: u32, height: u32) -> Self {
        Self {
            color,
            width,
            height,
            fit: Fit::default(),
            background: 0,
            layout: Layout::default(),
            invert: false,
            scale: one(),
            mean: Vec::new(),
            std: Vec::new(),
            max_pixels: default_max_pixels(),
            max_bytes: default_max_bytes(),
            training_data: toml::Table::new(),
        }
    }

    /// The tensor's shape for one image, in `layout`'s order.
    pub fn shape(&self) -> [usize; 3] {
        let (c, h, w) = (
            self.color.channels(),
            self.height as usize,
            self.width as usize,
        );
        match self.layout {
            Layout::Nchw => [c, h, w],
            Layout::Nhwc => [h, w, c],
        }
    }

    /// Every problem of the section, each naming its field.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let c = self.color.channels();
        if self.width == 0 || self.height == 0 || self.width > 4096 || self.height > 4096 {
            p.push("input.image: width and height must be 1 to 4096".into());
        }
        for (name, values) in [("mean", &self.mean), ("std", &self.std)] {
            if !(values.is_empty() || values.len() == 1 || values.len() == c) {
                p.push(format!(
                    "input.image.{name}: give one value, or one per channel ({c}), not {}",
                    values.len()
                ));
            }
            if values.iter().any(|v| !v.is_finite()) {
                p.push(format!("input.image.{name}: must be finite numbers"));
            }
        }
        if self.std.contains(&0.0) {
            p.push("input.image.std: must not be 0 (it divides)".into());
        }
        if !self.scale.is_finite() || self.scale == 0.0 {
            p.push("input.image.scale: must be a finite number other than 0".into());
        }
        if self.max_pixels == 0 || self.max_bytes == 0 {
            p.push("input.image: max_pixels and max_bytes must be above 0".into());
        }
        p.extend(values_problem("image", &self.shape()));
        p
    }
}

impl AudioSpec {
    /// The waveform of `seconds` at `sample_rate`, every other field as a manifest that
    /// leaves it out gets it (for code that builds one: tests, tools).
    pub fn new(sample_rate: u32, seconds: f64) -> Self {
        Self {
            sample_rate,
            seconds,
            trim_silence_db: None,
            normalize: false,
            features: AudioFeatures::Waveform,
            log_mel: None,
            max_seconds: default_max_seconds(),
            max_bytes: default_max_bytes(),
            training_data: toml::Table::new(),
        }
    }

    /// Samples after resampling, padding and cutting.
    pub fn samples(&self) -> usize {
        (self.seconds * f64::from(self.sample_rate)).round() as usize
    }

    /// The features' shape for one sound: `[samples]`, or `[mels, frames]`.
    pub fn shape(&self) -> Vec<usize> {
        match (&self.features, &self.log_mel) {
            (AudioFeatures::LogMel, Some(m)) if m.hop > 0 => {
                let frames = self.samples().saturating_sub(m.window) / m.hop + 1;
                vec![m.mels, frames]
            }
            _ => vec![self.samples()],
        }
    }

    /// Every problem of the section, each naming its field.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        if !(1000..=192_000).contains(&self.sample_rate) {
            p.push("input.audio.sample_rate: must be 1000 to 192000 (Hz)".into());
        }
        if !(self.seconds > 0.0 && self.seconds <= 600.0) {
            p.push("input.audio.seconds: must be above 0 and at most 600".into());
        }
        if !(self.max_seconds > 0.0 && self.max_seconds <= 3600.0) {
            p.push("input.audio.max_seconds: must be above 0 and at most 3600".into());
        }
        // A sound is held whole at the model's rate while it is cut to its loud part: the
        // longest one taken must fit an instance's memory (128 MiB by default) with room.
        let held = self.max_seconds * f64::from(self.sample_rate) * 4.0;
        if held > MAX_HELD_BYTES {
            p.push(format!(
                "input.audio.max_seconds: {} s at {} Hz is {:.0} MB of samples; at most {} MB \
                 are held (lower max_seconds)",
                self.max_seconds,
                self.sample_rate,
                held / 1e6,
                MAX_HELD_BYTES / 1e6
            ));
        }
        if self.max_bytes == 0 {
            p.push("input.audio.max_bytes: must be above 0".into());
        }
        if let Some(db) = self.trim_silence_db
            && !(db > 0.0 && db <= 120.0)
        {
            p.push("input.audio.trim_silence_db: must be above 0 and at most 120".into());
        }
        match (&self.features, &self.log_mel) {
            (AudioFeatures::LogMel, None) => p.push(
                "input.audio.log_mel: missing (features = \"log_mel\" needs mels, window, hop)"
                    .into(),
            ),
            (AudioFeatures::Waveform, Some(_)) => p.push(
                "input.audio.log_mel: given, but features = \"waveform\" (say features = \
                 \"log_mel\" to use it)"
                    .into(),
            ),
            (AudioFeatures::LogMel, Some(m)) => {
                let nyquist = self.sample_rate as f32 / 2.0;
                let fmax = m.fmax.unwrap_or(nyquist);
                if m.mels == 0 || m.mels > 512 {
                    p.push("input.audio.log_mel.mels: must be 1 to 512".into());
                }
                if !(16..=65_536).contains(&m.window) {
                    p.push("input.audio.log_mel.window: must be 16 to 65536 samples".into());
                }
                if m.hop == 0 || m.hop > m.window {
                    p.push("input.audio.log_mel.hop: must be 1 to window".into());
                }
                if m.window > self.samples() {
                    p.push(format!(
                        "input.audio.log_mel.window: {} samples is longer than the sound the \
                         graph takes ({} = seconds x sample_rate)",
                        m.window,
                        self.samples()
                    ));
                }
                if !(m.fmin >= 0.0 && m.fmin < fmax && fmax <= nyquist) {
                    p.push(format!(
                        "input.audio.log_mel: need 0 <= fmin < fmax <= {nyquist} (half the \
                         sample rate); got fmin {} and fmax {fmax}",
                        m.fmin
                    ));
                }
            }
            (AudioFeatures::Waveform, None) => {}
        }
        if p.is_empty() {
            p.extend(values_problem("audio", &self.shape()));
        }
        p
    }
}
