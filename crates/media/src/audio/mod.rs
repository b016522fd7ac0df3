//! A sound (WAV, FLAC or Ogg Vorbis) made into the graph's input: decoded and mixed down to
//! mono ([`decode`]), resampled to the model's rate ([`resample`]), cut to the sound and
//! peak-normalized where the manifest asks, padded or cut to the model's length, then given as
//! the waveform or a log-mel spectrogram ([`mel`]).

mod decode;
mod mel;
mod resample;

use crate::error::MediaError;
use model_manifest::{AudioFeatures, AudioSpec};

pub use decode::FORMATS;

/// A sound ready for the graph, and what it was.
#[derive(Debug, Clone, PartialEq)]
pub struct SoundTensor {
    /// The tensor's values for this sound, in `spec.shape()`'s order.
    pub values: Vec<f32>,
    /// The file's format (`wav`, `flac`, `ogg`), its rate, channels and length as sent.
    pub format: &'static str,
    pub sample_rate: u32,
    pub channels: usize,
    pub seconds: f64,
}

impl SoundTensor {
    /// The tensor's values and the facts, apart.
    pub fn into_parts(self) -> (Vec<f32>, serde_json::Value) {
        let facts = self.facts();
        (self.values, facts)
    }

    /// What a result echoes of its input (never the samples).
    pub fn facts(&self) -> serde_json::Value {
        serde_json::json!({
            "format": self.format,
            "sample_rate": self.sample_rate,
            "channels": self.channels,
            "seconds": self.seconds,
        })
    }
}

/// Everything about a model's audio input that is worked out once: the spectrogram's window
/// and filters.
pub struct Featurizer {
    spec: AudioSpec,
    mel: Option<mel::Spectrogram>,
}

impl Featurizer {
    /// For a manifest's `[input.audio]` (already checked: `AudioSpec::problems` is empty).
    pub fn new(spec: &AudioSpec) -> Self {
        let mel = match (spec.features, &spec.log_mel) {
            (AudioFeatures::LogMel, Some(m)) => Some(mel::Spectrogram::new(m, spec.sample_rate)),
            _ => None,
        };
        Self {
            spec: spec.clone(),
            mel,
        }
    }

    pub fn spec(&self) -> &AudioSpec {
        &self.spec
    }

    /// Decodes `bytes` and makes the tensor the manifest describes.
    pub fn to_tensor(&self, bytes: Vec<u8>) -> Result<SoundTensor, MediaError> {
        let spec = &self.spec;
        // Without trimming, only the model's length is needed: decoding stops there (a long
        // recording's remainder is never decoded). The declared length is still checked.
        let enough = spec.trim_silence_db.is_none().then_some(spec.seconds);
        let sound = decode::decode(
            bytes,
            spec.max_bytes,
            spec.max_seconds,
            enough,
            spec.sample_rate,
        )?;
        let mut samples = sound.samples;
        if let Some(db) = spec.trim_silence_db {
            trim_silence(&mut samples, db);
        }
        if spec.normalize {
            normalize(&mut samples);
        }
        samples.resize(spec.samples(), 0.0);
        let values = match &self.mel {
            Some(m) => m.compute(&samples),
            None => samples,
        };
        Ok(SoundTensor {
            values,
            format: sound.format,
            sample_rate: sound.sample_rate,
            channels: sound.channels,
            seconds: sound.seconds,
        })
    }
}

/// Keeps the part from the first to the last sample within `db` decibels of the peak.
fn trim_silence(samples: &mut Vec<f32>, db: f32) {
    let peak = samples.iter().fold(0f32, |m, s| m.max(s.abs()));
    if peak == 0.0 {
        return;
    }
    let floor = peak * 10f32.powf(-db / 20.0);
    let loud = |s: &f32| s.abs() >= floor;
    let first = samples.iter().position(loud).unwrap_or(0);
    let last = samples.iter().rposition(loud).unwrap_or(samples.len() - 1);
    samples.truncate(last + 1);
    samples.drain(..first);
}

/// Scales so the loudest sample is 1 (silence stays silence).
fn normalize(samples: &mut [f32]) {
    let peak = samples.iter().fold(0f32, |m, s| m.max(s.abs()));
    if peak > 0.0 {
        samples.iter_mut().for_each(|s| *s /= peak);
    }
}

#[cfg(test)]
mod tests;
