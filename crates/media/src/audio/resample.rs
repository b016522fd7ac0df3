//! Sample-rate conversion with rubato's FFT resampler (band-limited: no aliasing when a
//! 44.1 kHz recording is brought down to 16 kHz), its delay removed so that the sound starts
//! where it started.

use crate::error::MediaError;
use rubato::{FftFixedIn, Resampler};

/// Frames fed to the resampler per call.
const CHUNK: usize = 1024;

/// `samples` at `from` Hz brought to `to` Hz: `len * to / from` samples (rounded).
pub fn to_rate(samples: &[f32], from: u32, to: u32) -> Result<Vec<f32>, MediaError> {
    if from == to {
        return Ok(samples.to_vec());
    }
    let expected = (samples.len() as u64 * u64::from(to) + u64::from(from) / 2) / u64::from(from);
    let expected = expected as usize;
    let failed = |e: &dyn std::fmt::Display| {
        MediaError::Unsupported(format!("cannot resample {from} Hz to {to} Hz: {e}"))
    };
    let mut resampler =
        FftFixedIn::<f32>::new(from as usize, to as usize, CHUNK, 2, 1).map_err(|e| failed(&e))?;
    let delay = resampler.output_delay();
    let mut out = Vec::with_capacity(expected + delay + 2 * CHUNK);
    let mut at = 0;
    while at + resampler.input_frames_next() <= samples.len() {
        let need = resampler.input_frames_next();
        let chunk = resampler
            .process(&[&samples[at..at + need]], None)
            .map_err(|e| failed(&e))?;
        out.extend_from_slice(&chunk[0]);
        at += need;
    }
    if at < samples.len() {
        let chunk = resampler
            .process_partial(Some(&[&samples[at..]]), None)
            .map_err(|e| failed(&e))?;
        out.extend_from_slice(&chunk[0]);
    }
    // Flush what the resampler still holds (its delay's worth).
    while out.len() < delay + expected {
        let chunk = resampler
            .process_partial::<&[f32]>(None, None)
            .map_err(|e| failed(&e))?;
        if chunk[0].is_empty() {
            break;
        }
        out.extend_from_slice(&chunk[0]);
    }
    out.drain(..delay.min(out.len()));
    out.resize(expected, 0.0);
    Ok(out)
}
