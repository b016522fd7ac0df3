//! The log-mel spectrogram: Hann-windowed frames, their power spectrum, pooled by triangular
//! filters evenly spaced on the mel scale, then `ln(energy + 1e-6)`. Frames are not centred
//! (the first starts at sample 0), so `1 + (samples - window) / hop` of them.

use model_manifest::LogMel;
use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};
use std::sync::Arc;

/// Added to each band's energy before the logarithm: silence gives ln(1e-6), not minus infinity.
const FLOOR: f32 = 1e-6;

/// A filter: the first FFT bin it covers and its weights from there.
struct Filter {
    first: usize,
    weights: Vec<f32>,
}

/// Everything about a spectrogram worked out once per model.
pub struct Spectrogram {
    window: Vec<f32>,
    hop: usize,
    filters: Vec<Filter>,
    fft: Arc<dyn RealToComplex<f32>>,
}

fn hz_to_mel(f: f64) -> f64 {
    2595.0 * (1.0 + f / 700.0).log10()
}

fn mel_to_hz(m: f64) -> f64 {
    700.0 * (10f64.powf(m / 2595.0) - 1.0)
}

impl Spectrogram {
    pub fn new(spec: &LogMel, sample_rate: u32) -> Self {
        let n = spec.window;
        // The periodic Hann window (as spectral analysis uses: its period is the frame).
        let window = (0..n)
            .map(|i| (0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / n as f64).cos()) as f32)
            .collect();
        let rate = f64::from(sample_rate);
        let fmax = f64::from(spec.fmax.unwrap_or(sample_rate as f32 / 2.0));
        let (lo, hi) = (hz_to_mel(f64::from(spec.fmin)), hz_to_mel(fmax));
        let edges: Vec<f64> = (0..spec.mels + 2)
            .map(|i| mel_to_hz(lo + (hi - lo) * i as f64 / (spec.mels + 1) as f64))
            .collect();
        let bins = n / 2 + 1;
        let filters = edges
            .windows(3)
            .map(|e| {
                let (left, centre, right) = (e[0], e[1], e[2]);
                let weight = |k: usize| {
                    let f = k as f64 * rate / n as f64;
                    if f > left && f <= centre {
                        (f - left) / (centre - left)
                    } else if f > centre && f < right {
                        (right - f) / (right - centre)
                    } else {
                        0.0
                    }
                };
                let all: Vec<f32> = (0..bins).map(|k| weight(k) as f32).collect();
                let first = all.iter().position(|w| *w > 0.0).unwrap_or(0);
                let last = all.iter().rposition(|w| *w > 0.0).map_or(first, |l| l + 1);
                Filter {
                    first,
                    weights: all[first..last].to_vec(),
                }
            })
            .collect();
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(n);
        Self {
            window,
            hop: spec.hop,
            filters,
            fft,
        }
    }

    /// The spectrogram of `samples`, mel-major: band `m` of frame `t` at `m * frames + t`.
    pub fn compute(&self, samples: &[f32]) -> Vec<f32> {
        let n = self.window.len();
        let frames = samples.len().saturating_sub(n) / self.hop + 1;
        let mels = self.filters.len();
        let mut out = vec![0f32; mels * frames];
        let mut frame = self.fft.make_input_vec();
        let mut spectrum: Vec<Complex<f32>> = self.fft.make_output_vec();
        let mut scratch = self.fft.make_scratch_vec();
        let mut power = vec![0f32; spectrum.len()];
        for t in 0..frames {
            let start = t * self.hop;
            for (i, x) in frame.iter_mut().enumerate() {
                *x = samples.get(start + i).copied().unwrap_or(0.0) * self.window[i];
            }
            self.fft
                .process_with_scratch(&mut frame, &mut spectrum, &mut scratch)
                .expect("buffers made by the plan itself");
            for (p, c) in power.iter_mut().zip(&spectrum) {
                *p = c.norm_sqr();
            }
            for (m, filter) in self.filters.iter().enumerate() {
                let energy: f32 = filter
                    .weights
                    .iter()
                    .zip(&power[filter.first..])
                    .map(|(w, p)| w * p)
                    .sum();
                out[m * frames + t] = (energy + FLOOR).ln();
            }
        }
        out
    }
}
