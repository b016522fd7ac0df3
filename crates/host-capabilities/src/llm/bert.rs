//! The BERT encoder (Devlin et al., 2019, "BERT: Pre-training of Deep Bidirectional
//! Transformers for Language Understanding", arXiv:1810.04805) at the shape of the model it
//! runs, on candle's tensors and layers: token, position and segment embeddings, then
//! layers of multi-head self-attention and a feed-forward block, each with a residual
//! connection and layer normalization after it.
//!
//! Written here, not taken from candle-transformers: that crate compiles a hundred model
//! families for the one encoder used here, 163 s of CPU in a cold build of the host (an
//! eighth of it; `cargo build --release --timings`, 2026-11-27). The embedding tests hold the
//! result to sentence-transformers' own vectors.

use anyhow::{Context, Result};
use candle_core::{DType, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};

/// The network's dimensions (a model's `config.json`).
pub struct Shape {
    pub vocabulary: usize,
    pub positions: usize,
    pub segments: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    /// Layer normalization's epsilon.
    pub epsilon: f64,
}

pub struct Bert {
    words: Embedding,
    positions: Embedding,
    segments: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
}

/// One encoder layer: self-attention, then the feed-forward block.
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    expand: Linear,
    contract: Linear,
    output_norm: LayerNorm,
}

impl Bert {
    /// The weights under their usual names (`embeddings.…`, `encoder.layer.N.…`), with or
    /// without a leading `bert.`; each tensor's shape is checked against `shape`.
    pub fn load(vb: VarBuilder, shape: &Shape) -> Result<Self> {
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let e = vb.pp("embeddings");
        let h = shape.hidden;
        let layers = (0..shape.layers)
            .map(|i| Layer::load(vb.pp(format!("encoder.layer.{i}")), shape))
            .collect::<Result<_>>()?;
        Ok(Self {
            words: embedding(shape.vocabulary, h, e.pp("word_embeddings"))?,
            positions: embedding(shape.positions, h, e.pp("position_embeddings"))?,
            segments: embedding(shape.segments, h, e.pp("token_type_embeddings"))?,
            embedding_norm: layer_norm(h, shape.epsilon, e.pp("LayerNorm"))?,
            layers,
            heads: shape.heads,
        })
    }

    /// The last layer's hidden states, `(texts, width, hidden)`, of token `ids`
    /// `(texts, width)`; `mask` (same shape, 1 for a token, 0 for padding) keeps padding out
    /// of every token's attention. Every token is in the first segment.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (_, width) = ids.dims2()?;
        let at = Tensor::arange(0u32, width as u32, ids.device())?.unsqueeze(0)?;
        let mut x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&at)?)?
            .add(&self.segments.forward(&ids.zeros_like()?)?)?;
        x = self.embedding_norm.forward(&x)?;
        // Added to the attention scores: 0 for a token, the lowest f32 for padding (as
        // Hugging Face's BERT does), so padding gets no weight after the softmax.
        let padding = mask
            .to_dtype(DType::F32)?
            .affine(-1.0, 1.0)?
            .affine(f32::MIN as f64, 0.0)?
            .unsqueeze(1)?
            .unsqueeze(1)?;
        for layer in &self.layers {
            x = layer.forward(&x, &padding, self.heads)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn load(vb: VarBuilder, shape: &Shape) -> Result<Self> {
        let (h, inner, eps) = (shape.hidden, shape.intermediate, shape.epsilon);
        let attention = vb.pp("attention");
        let own = attention.pp("self");
        let layer: candle_core::Result<Self> = Ok(Self {
            query: linear(h, h, own.pp("query"))?,
            key: linear(h, h, own.pp("key"))?,
            value: linear(h, h, own.pp("value"))?,
            attention_out: linear(h, h, attention.pp("output.dense"))?,
            attention_norm: layer_norm(h, eps, attention.pp("output.LayerNorm"))?,
            expand: linear(h, inner, vb.pp("intermediate.dense"))?,
            contract: linear(inner, h, vb.pp("output.dense"))?,
            output_norm: layer_norm(h, eps, vb.pp("output.LayerNorm"))?,
        });
        layer.context("an encoder layer")
    }

    /// `x` is `(texts, width, hidden)`; `padding` `(texts, 1, 1, width)`.
    fn forward(&self, x: &Tensor, padding: &Tensor, heads: usize) -> Result<Tensor> {
        let (texts, width, hidden) = x.dims3()?;
        let per_head = hidden / heads;
        // (texts, width, hidden) -> (texts, heads, width, per_head)
        let by_head = |t: Tensor| -> Result<Tensor> {
            Ok(t.reshape((texts, width, heads, per_head))?
                .transpose(1, 2)?
                .contiguous()?)
        };
        let q = by_head(self.query.forward(x)?)?;
        let k = by_head(self.key.forward(x)?)?;
        let v = by_head(self.value.forward(x)?)?;
        let scores = (q.matmul(&k.t()?.contiguous()?)? / (per_head as f64).sqrt())?
            .broadcast_add(padding)?;
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let attended = weights
            .matmul(&v)?
            .transpose(1, 2)?
            .reshape((texts, width, hidden))?;
        let x = self
            .attention_norm
            .forward(&(self.attention_out.forward(&attended)? + x)?)?;
        let inner = self.expand.forward(&x)?.gelu_erf()?;
        Ok(self
            .output_norm
            .forward(&(self.contract.forward(&inner)? + x)?)?)
    }
}
