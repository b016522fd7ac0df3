//! The weights of the Llama network as it uses them: matrices ([`Linear`]) and the token
//! embeddings ([`Embeddings`]), each in whatever form the GGUF file stores.

use super::quantized::QuantMatrix;
use anyhow::{Context, Result};
use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{Device, Module, Tensor};
use std::sync::Arc;

/// A weight matrix: this crate's kernels for Q4_1 and Q8_0 ([`super::quantized`]: 32-bit
/// activations, as the reference is held to), candle's for any other type.
pub enum Linear {
    Blocks(QuantMatrix),
    Candle(QMatMul),
}

impl Linear {
    pub fn new(tensor: Arc<QTensor>) -> Result<Self> {
        Ok(match QuantMatrix::new(tensor.clone()) {
            Some(m) => Self::Blocks(m),
            None => Self::Candle(QMatMul::from_arc(tensor)?),
        })
    }

    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Self::Blocks(m) => m.forward(x),
            Self::Candle(m) => Ok(m.forward(x)?),
        }
    }
}

/// The token embeddings. Stored as 8-bit blocks (the usual GGUF choice, shared with the
/// output projection), a row is unpacked when a token needs it rather than the whole table
/// held a second time in 32 bits (113 MB for SmolLM2).
pub enum Embeddings {
    Q8(Arc<QTensor>, usize),
    Dense(Tensor),
}

/// Q8_0: blocks of 32 weights, each an f16 scale and 32 signed bytes.
const Q8_BLOCK: usize = 32;
const Q8_BLOCK_BYTES: usize = 2 + Q8_BLOCK;

impl Embeddings {
    pub fn new(table: Arc<QTensor>, width: usize, device: &Device) -> Result<Self> {
        Ok(
            if table.dtype() == GgmlDType::Q8_0 && width.is_multiple_of(Q8_BLOCK) {
                Self::Q8(table, width)
            } else {
                Self::Dense(table.dequantize(device)?)
            },
        )
    }

    pub fn rows(&self, ids: &[u32]) -> Result<Tensor> {
        match self {
            Self::Dense(table) => Ok(table.index_select(&Tensor::new(ids, table.device())?, 0)?),
            Self::Q8(table, width) => {
                let data = table.data()?;
                let row_bytes = width / Q8_BLOCK * Q8_BLOCK_BYTES;
                let mut out = Vec::with_capacity(ids.len() * width);
                for &id in ids {
                    let row = data
                        .get(id as usize * row_bytes..(id as usize + 1) * row_bytes)
                        .with_context(|| format!("token {id} has no embedding"))?;
                    for block in row.chunks_exact(Q8_BLOCK_BYTES) {
                        let scale = half::f16::from_le_bytes([block[0], block[1]]).to_f32();
                        out.extend(block[2..].iter().map(|&q| q as i8 as f32 * scale));
                    }
                }
                Ok(Tensor::from_vec(out, (ids.len(), *width), &table.device())?)
            }
        }
    }
}
