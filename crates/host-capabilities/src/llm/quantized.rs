//! Matrix products with 4-bit (Q4_1) and 8-bit (Q8_0) GGUF weights and 32-bit activations:
//! each block of weights is expanded in registers (`d * q + m`) and multiplied with the
//! activations as they are, never rounded to 8 bits.
//!
//! Why not candle's `QMatMul`: its Q4_1 dot product is a scalar loop (a fraction of
//! llama.cpp's speed on this model); and, like llama.cpp, it rounds every block of activations
//! to 8 bits first. SmolLM2 carries a few very large activations, so that rounding makes the
//! logits move by up to 0.87 when nothing but the batch changes (llama.cpp measured against
//! itself, one token at a time versus the whole prompt at once; candle alike), and greedy answers
//! differ after a few tokens between any two implementations that batch differently. With
//! 32-bit activations the same network agrees with llama.cpp running the file's weights
//! expanded to 32 bits to within 5e-5 in every logit (tests/data/llm-greedy.json, written by
//! tests/python/llm_reference.py, holds this implementation to that one token for token).
//!
//! The arithmetic per block of 32: `d * Σ q_e x_e`, eight lanes of fused multiply-adds, plus,
//! for Q4_1, `m * Σ x_e` with the activations' block sums taken once per row.

use anyhow::{Result, bail};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use half::f16;
use rayon::prelude::*;
use std::sync::Arc;

const BLOCK: usize = 32;
/// Q4_1: f16 scale, f16 minimum, 16 bytes of two 4-bit weights each.
const Q4_1_BYTES: usize = 20;
/// Q8_0: f16 scale, 32 signed bytes.
const Q8_0_BYTES: usize = 34;
/// Weight rows (output columns) one task computes: small enough to spread a 576-wide layer
/// over the cores, large enough that each task's weights are read once for every input row.
const COLUMNS_PER_TASK: usize = 32;
/// From this many rows of activations on (a prompt read at once), the matrix is expanded to
/// 32 bits (a few MB: one matrix at a time) and multiplied by candle's general matrix product,
/// which uses the cores' arithmetic fully; fewer rows (one token per stream) are
/// bandwidth-bound, and the block kernels read a quarter of the bytes.
const EXPAND_FROM_ROWS: usize = 16;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Q4_1,
    Q8_0,
}

/// A weight matrix `(n, k)` this module multiplies; its bytes stay in candle's tensor.
pub struct QuantMatrix {
    tensor: Arc<QTensor>,
    kind: Kind,
    rows: usize,
    cols: usize,
}

impl QuantMatrix {
    /// The matrix, if it is Q4_1 or Q8_0 with rows of whole blocks.
    pub fn new(tensor: Arc<QTensor>) -> Option<Self> {
        let kind = match tensor.dtype() {
            GgmlDType::Q4_1 => Kind::Q4_1,
            GgmlDType::Q8_0 => Kind::Q8_0,
            _ => return None,
        };
        let (rows, cols) = tensor.shape().dims2().ok()?;
        (cols % BLOCK == 0).then_some(Self {
            tensor,
            kind,
            rows,
            cols,
        })
    }

    fn row_bytes(&self) -> usize {
        self.cols / BLOCK
            * match self.kind {
                Kind::Q4_1 => Q4_1_BYTES,
                Kind::Q8_0 => Q8_0_BYTES,
            }
    }

    /// The whole matrix in 32 bits, `(n, k)`, row by row on every core.
    fn expanded(&self) -> Result<Tensor> {
        let weights = self.tensor.data()?;
        let (row_bytes, k, kind) = (self.row_bytes(), self.cols, self.kind);
        let mut out = vec![0f32; self.rows * k];
        out.par_chunks_mut(k).enumerate().for_each(|(j, row)| {
            let w = &weights[j * row_bytes..(j + 1) * row_bytes];
            match kind {
                Kind::Q4_1 => {
                    for (b, y) in w.chunks_exact(Q4_1_BYTES).zip(row.chunks_exact_mut(BLOCK)) {
                        let (d, m) = (half_at(b, 0), half_at(b, 2));
                        for e in 0..16 {
                            y[e] = (b[4 + e] & 0xF) as f32 * d + m;
                            y[e + 16] = (b[4 + e] >> 4) as f32 * d + m;
                        }
                    }
                }
                Kind::Q8_0 => {
                    for (b, y) in w.chunks_exact(Q8_0_BYTES).zip(row.chunks_exact_mut(BLOCK)) {
                        let d = half_at(b, 0);
                        for e in 0..BLOCK {
                            y[e] = b[2 + e] as i8 as f32 * d;
                        }
                    }
                }
            }
        });
        Ok(Tensor::from_vec(out, (self.rows, k), &Device::Cpu)?)
    }

    /// `x (m, k) · selfᵀ`: `(m, n)`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (m, k) = x.dims2()?;
        if k != self.cols {
            bail!(
                "a product of width {k} with a matrix of width {}",
                self.cols
            );
        }
        if m >= EXPAND_FROM_ROWS {
            return Ok(x.matmul(&self.expanded()?.t()?)?);
        }
        let x = x.flatten_all()?.to_vec1::<f32>()?;
        let sums: Vec<f32> = match self.kind {
            Kind::Q4_1 => x.chunks_exact(BLOCK).map(|b| b.iter().sum()).collect(),
            Kind::Q8_0 => Vec::new(),
        };
        let blocks = k / BLOCK;
        let weights = self.tensor.data()?;
        let row_bytes = self.row_bytes();
        let (n, kind) = (self.rows, self.kind);
        let mut out = vec![0f32; m * n];
        let target = Target(out.as_mut_ptr());
        (0..n.div_ceil(COLUMNS_PER_TASK))
            .into_par_iter()
            .for_each(|task| {
                let target = &target;
                let columns = task * COLUMNS_PER_TASK..((task + 1) * COLUMNS_PER_TASK).min(n);
                for i in 0..m {
                    let row = &x[i * k..(i + 1) * k];
                    let row_sums = sums.get(i * blocks..(i + 1) * blocks).unwrap_or(&[]);
                    for j in columns.clone() {
                        let w = &weights[j * row_bytes..(j + 1) * row_bytes];
                        let value = dot(kind, w, row, row_sums);
                        // SAFETY: every (i, j) belongs to exactly one task, and `out` outlives the
                        // parallel loop, so no two writes meet and none dangles.
                        unsafe { *target.0.add(i * n + j) = value };
                    }
                }
            });
        Ok(Tensor::from_vec(out, (m, n), &Device::Cpu)?)
    }
}

/// The output buffer, shared by the tasks that each write their own columns.
struct Target(*mut f32);
// SAFETY: see `forward`: the tasks write disjoint elements.
unsafe impl Sync for Target {}

fn half_at(bytes: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([bytes[at], bytes[at + 1]]).to_f32()
}

/// One weight row `w` (blocks) times one activation row `x`; `sums` are `x`'s block sums
/// (Q4_1 only).
fn dot(kind: Kind, w: &[u8], x: &[f32], sums: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
    {
        // SAFETY: the CPU has the features the kernels are compiled for.
        return unsafe {
            match kind {
                Kind::Q4_1 => avx2::dot_q4_1(w, x, sums),
                Kind::Q8_0 => avx2::dot_q8_0(w, x),
            }
        };
    }
    match kind {
        Kind::Q4_1 => portable::dot_q4_1(w, x, sums),
        Kind::Q8_0 => portable::dot_q8_0(w, x),
    }
}

mod portable {
    use super::*;

    pub fn dot_q4_1(w: &[u8], x: &[f32], sums: &[f32]) -> f32 {
        let mut total = 0f32;
        for ((b, x), sum) in w
            .chunks_exact(Q4_1_BYTES)
            .zip(x.chunks_exact(BLOCK))
            .zip(sums)
        {
            let (low, high) = x.split_at(16);
            let mut t = 0f32;
            for e in 0..16 {
                t += (b[4 + e] & 0xF) as f32 * low[e] + (b[4 + e] >> 4) as f32 * high[e];
            }
            total += half_at(b, 0) * t + half_at(b, 2) * sum;
        }
        total
    }

    pub fn dot_q8_0(w: &[u8], x: &[f32]) -> f32 {
        let mut total = 0f32;
        for (b, x) in w.chunks_exact(Q8_0_BYTES).zip(x.chunks_exact(BLOCK)) {
            let t: f32 = (0..BLOCK).map(|e| b[2 + e] as i8 as f32 * x[e]).sum();
            total += half_at(b, 0) * t;
        }
        total
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,fma,f16c")]
    fn sum(v: __m256) -> f32 {
        let r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
        let r = _mm_add_ps(r, _mm_movehl_ps(r, r));
        _mm_cvtss_f32(_mm_add_ss(r, _mm_movehdup_ps(r)))
    }

    /// The f16 at `at` and the one after it, as floats (F16C, not `half`'s per-call check).
    #[target_feature(enable = "avx2,fma,f16c")]
    fn halves(b: &[u8], at: usize) -> (f32, f32) {
        let bits = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let v = _mm_cvtph_ps(_mm_cvtsi32_si128(bits as i32));
        (_mm_cvtss_f32(v), _mm_cvtss_f32(_mm_movehdup_ps(v)))
    }

    /// Eight bytes from `bytes` (low half of the register) as floats.
    #[target_feature(enable = "avx2,fma,f16c")]
    fn floats(bytes: __m128i) -> __m256 {
        _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes))
    }

    /// # Safety
    /// The CPU must have AVX2 and FMA; `w` holds Q4_1 blocks, one per block of `x` and `sums`.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn dot_q4_1(w: &[u8], x: &[f32], sums: &[f32]) -> f32 {
        let (mut acc, mut minimums) = (_mm256_setzero_ps(), 0f32);
        let mask = _mm_set1_epi8(0xF);
        for ((b, x), s) in w
            .chunks_exact(Q4_1_BYTES)
            .zip(x.chunks_exact(BLOCK))
            .zip(sums)
        {
            let (d, m) = halves(b, 0);
            minimums += m * s;
            // SAFETY: a block holds 16 bytes of weights after its two scales; `x` holds 32
            // floats; unaligned loads.
            let (packed, x0, x1, x2, x3) = unsafe {
                let p = x.as_ptr();
                (
                    _mm_loadu_si128(b.as_ptr().add(4) as *const __m128i),
                    _mm256_loadu_ps(p),
                    _mm256_loadu_ps(p.add(8)),
                    _mm256_loadu_ps(p.add(16)),
                    _mm256_loadu_ps(p.add(24)),
                )
            };
            let low = _mm_and_si128(packed, mask);
            let high = _mm_and_si128(_mm_srli_epi16(packed, 4), mask);
            let t0 = _mm256_fmadd_ps(floats(high), x2, _mm256_mul_ps(floats(low), x0));
            let t1 = _mm256_fmadd_ps(
                floats(_mm_srli_si128(high, 8)),
                x3,
                _mm256_mul_ps(floats(_mm_srli_si128(low, 8)), x1),
            );
            acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_add_ps(t0, t1), acc);
        }
        sum(acc) + minimums
    }

    /// Eight signed bytes from `bytes` as floats.
    #[target_feature(enable = "avx2,fma,f16c")]
    fn signed_floats(bytes: __m128i) -> __m256 {
        _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes))
    }

    /// # Safety
    /// The CPU must have AVX2 and FMA; `w` holds Q8_0 blocks, one per block of `x`.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn dot_q8_0(w: &[u8], x: &[f32]) -> f32 {
        let mut acc = _mm256_setzero_ps();
        for (b, x) in w.chunks_exact(Q8_0_BYTES).zip(x.chunks_exact(BLOCK)) {
            // SAFETY: 32 bytes of weights after the scale, 32 floats; unaligned loads.
            let (q0, q1, x0, x1, x2, x3) = unsafe {
                let p = x.as_ptr();
                (
                    _mm_loadu_si128(b.as_ptr().add(2) as *const __m128i),
                    _mm_loadu_si128(b.as_ptr().add(18) as *const __m128i),
                    _mm256_loadu_ps(p),
                    _mm256_loadu_ps(p.add(8)),
                    _mm256_loadu_ps(p.add(16)),
                    _mm256_loadu_ps(p.add(24)),
                )
            };
            let t0 = _mm256_fmadd_ps(signed_floats(q1), x2, _mm256_mul_ps(signed_floats(q0), x0));
            let t1 = _mm256_fmadd_ps(
                signed_floats(_mm_srli_si128(q1, 8)),
                x3,
                _mm256_mul_ps(signed_floats(_mm_srli_si128(q0, 8)), x1),
            );
            let (d, _) = halves(b, 0);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_add_ps(t0, t1), acc);
        }
        sum(acc)
    }
}

#[cfg(test)]
#[path = "quantized_tests.rs"]
mod tests;
