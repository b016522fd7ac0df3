//! Sample-rate conversion with rubato's FFT resampler (band-limited: no aliasing when a
//! 44.1 kHz recording is brought down to 16 kHz), its delay removed so that the sound starts
//! where it started. It runs as the sound is decoded ([`Stream`]), so only the model's rate is
//! ever held whole: ten minutes at 48 kHz would be 115 MB of samples, at 16 kHz 38 MB.

use crate::error::MediaError;
use rubato::{FftFixedIn, Resampler};

/// Frames fed to the resampler per call.
const CHUNK: usize = 1024;

/// Samples at `from` Hz in, the same sound at `to` Hz out.
pub struct Stream {
    from: u32,
    to: u32,
    /// The resampler and its delay in output frames; none when the rates agree.
    resampler: Option<(FftFixedIn<f32>, usize)>,
    /// Input not yet a whole chunk.
    pending: Vec<f32>,
    out: Vec<f32>,
    taken: u64,
}

impl Stream {
    pub fn new(from: u32, to: u32) -> Result<Self, MediaError> {
        let resampler = if from == to {
            None
        } else {
            let r = FftFixedIn::<f32>::new(from as usize, to as usize, CHUNK, 2, 1)
                .map_err(|e| failed(from, to, &e))?;
            let delay = r.output_delay();
            Some((r, delay))
        };
        Ok(Self {
            from,
            to,
            resampler,
            pending: Vec::new(),
            out: Vec::new(),
            taken: 0,
        })
    }

    /// Samples in: whole chunks are resampled at once, the rest kept for the next call.
    pub fn push(&mut self, samples: &[f32]) -> Result<(), MediaError> {
        self.taken += samples.len() as u64;
        let Some((r, _)) = &mut self.resampler else {
            self.out.extend_from_slice(samples);
            return Ok(());
        };
        self.pending.extend_from_slice(samples);
        let mut at = 0;
        while self.pending.len() - at >= r.input_frames_next() {
            let need = r.input_frames_next();
            let chunk = r
                .process(&[&self.pending[at..at + need]], None)
                .map_err(|e| failed(self.from, self.to, &e))?;
            self.out.extend_from_slice(&chunk[0]);
            at += need;
        }
        self.pending.drain(..at);
        Ok(())
    }

    /// The sound at `to` Hz: `samples * to / from` of them (rounded).
    pub fn finish(mut self) -> Result<Vec<f32>, MediaError> {
        let Some((mut r, delay)) = self.resampler.take() else {
            return Ok(self.out);
        };
        let (from, to) = (u64::from(self.from), u64::from(self.to));
        let expected = ((self.taken * to + from / 2) / from) as usize;
        let failed = |e: &dyn std::fmt::Display| failed(self.from, self.to, e);
        if !self.pending.is_empty() {
            let chunk = r
                .process_partial(Some(&[&self.pending]), None)
                .map_err(|e| failed(&e))?;
            self.out.extend_from_slice(&chunk[0]);
        }
        // Flush what the resampler still holds (its delay's worth).
        while self.out.len() < delay + expected {
            let chunk = r
                .process_partial::<&[f32]>(None, None)
                .map_err(|e| failed(&e))?;
            if chunk[0].is_empty() {
                break;
            }
            self.out.extend_from_slice(&chunk[0]);
        }
        self.out.drain(..delay.min(self.out.len()));
        self.out.resize(expected, 0.0);
        Ok(self.out)
    }
}

fn failed(from: u32, to: u32, e: &dyn std::fmt::Display) -> MediaError {
    MediaError::Unsupported(format!("cannot resample {from} Hz to {to} Hz: {e}"))
}
