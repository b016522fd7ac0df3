//! The Llama decoder (Touvron et al., 2023, "LLaMA: Open and Efficient Foundation Language
//! Models", arXiv:2302.13971) as a GGUF file stores it, on candle's quantized matrix products:
//! token embeddings, then blocks of RMS-normalized grouped-query self-attention with rotary
//! positions and a SwiGLU feed-forward block, each added back to the residual stream, then the
//! output projection (tied to the embeddings when the file has no `output.weight`).
//!
//! Written here, not taken from candle-transformers, for the reason `bert.rs` gives (that crate
//! compiles a hundred model families), and because serving several streams at once wants one
//! pass to carry them all: [`Llama::forward`] takes several runs of tokens, each with its own
//! cache and position, runs every projection once over all their rows (the weights are read
//! once per pass, not once per stream) and only attention per run.

use super::weights::{Embeddings, Linear};
use anyhow::{Context, Result, bail};
use candle_core::quantized::QTensor;
use candle_core::quantized::gguf_file::{Content, Value};
use candle_core::{Device, Tensor};
use candle_nn::kv_cache::KvCache;
use std::io::{Read, Seek};
use std::sync::Arc;

/// The network's dimensions, from the file's `llama.*` metadata.
#[derive(Clone, Debug)]
pub struct Shape {
    pub layers: usize,
    pub hidden: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub feed_forward: usize,
    pub epsilon: f32,
    pub rope_base: f32,
    pub vocabulary: usize,
    /// The context the model was trained for.
    pub trained_context: usize,
}

impl Shape {
    fn read(content: &Content) -> Result<Self> {
        let get = |key: &str| -> Result<&Value> {
            content
                .metadata
                .get(&format!("llama.{key}"))
                .with_context(|| format!("the GGUF file has no `llama.{key}`"))
        };
        let int = |key: &str| -> Result<usize> { Ok(get(key)?.to_u32()? as usize) };
        let architecture = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .map_or("", |s| s.as_str());
        if architecture != "llama" {
            bail!("the GGUF file holds a `{architecture}` model; this engine runs `llama` only");
        }
        let heads = int("attention.head_count")?;
        let shape = Self {
            layers: int("block_count")?,
            hidden: int("embedding_length")?,
            heads,
            kv_heads: int("attention.head_count_kv").unwrap_or(heads),
            feed_forward: int("feed_forward_length")?,
            epsilon: get("attention.layer_norm_rms_epsilon")?.to_f32()?,
            rope_base: get("rope.freq_base")
                .and_then(|v| Ok(v.to_f32()?))
                .unwrap_or(10_000.),
            vocabulary: content
                .tensor_infos
                .get("token_embd.weight")
                .context("the GGUF file has no `token_embd.weight`")?
                .shape
                .dims()[0],
            trained_context: int("context_length")?,
        };
        if shape.heads == 0 || shape.kv_heads == 0 || !shape.heads.is_multiple_of(shape.kv_heads) {
            bail!(
                "{} heads cannot share {} key/value heads",
                shape.heads,
                shape.kv_heads
            );
        }
        if !shape.hidden.is_multiple_of(shape.heads)
            || !(shape.hidden / shape.heads).is_multiple_of(2)
        {
            bail!(
                "a width of {} does not split into {} heads",
                shape.hidden,
                shape.heads
            );
        }
        Ok(shape)
    }

    pub fn head_width(&self) -> usize {
        self.hidden / self.heads
    }
}

/// One stream's keys and values so far, layer by layer, and how many tokens they hold.
pub struct Cache {
    layers: Vec<KvCache>,
    len: usize,
}

impl Cache {
    /// Tokens seen so far (the next token's position).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// New tokens of one stream for a pass, with the stream's cache.
pub struct Run<'a> {
    pub cache: &'a mut Cache,
    pub tokens: &'a [u32],
}

struct Block {
    attention_norm: Tensor,
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    feed_forward_norm: Tensor,
    gate: Linear,
    up: Linear,
    down: Linear,
}

pub struct Llama {
    shape: Shape,
    /// The most tokens one stream may hold (prompt and answer): the cos/sin tables' length.
    context: usize,
    embeddings: Embeddings,
    blocks: Vec<Block>,
    norm: Tensor,
    output: Linear,
    cos: Tensor,
    sin: Tensor,
    device: Device,
}

impl Llama {
    /// Loads the network of a GGUF file, for streams of at most `context` tokens (and never
    /// more than the model was trained for).
    pub fn load<R: Read + Seek>(content: &Content, file: &mut R, context: usize) -> Result<Self> {
        let device = Device::Cpu;
        let shape = Shape::read(content)?;
        let context = context.min(shape.trained_context);
        let mut tensor = |name: &str| -> Result<QTensor> {
            content
                .tensor(file, name, &device)
                .with_context(|| format!("reading `{name}`"))
        };
        let embedding = Arc::new(tensor("token_embd.weight")?);
        let output = match content.tensor_infos.contains_key("output.weight") {
            true => Linear::new(Arc::new(tensor("output.weight")?))?,
            false => Linear::new(embedding.clone())?,
        };
        let norm = tensor("output_norm.weight")?.dequantize(&device)?;
        let mut blocks = Vec::with_capacity(shape.layers);
        for i in 0..shape.layers {
            let mut matrix = |n: &str| -> Result<Linear> {
                Linear::new(Arc::new(tensor(&format!("blk.{i}.{n}.weight"))?))
            };
            blocks.push(Block {
                query: matrix("attn_q")?,
                key: matrix("attn_k")?,
                value: matrix("attn_v")?,
                attention_out: matrix("attn_output")?,
                gate: matrix("ffn_gate")?,
                up: matrix("ffn_up")?,
                down: matrix("ffn_down")?,
                attention_norm: tensor(&format!("blk.{i}.attn_norm.weight"))?
                    .dequantize(&device)?,
                feed_forward_norm: tensor(&format!("blk.{i}.ffn_norm.weight"))?
                    .dequantize(&device)?,
            });
        }
        let (cos, sin) = rotary_tables(&shape, context, &device)?;
        Ok(Self {
            embeddings: Embeddings::new(embedding, shape.hidden, &device)?,
            shape,
            context,
            blocks,
            norm,
            output,
            cos,
            sin,
            device,
        })
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The most tokens one stream may hold.
    pub fn context(&self) -> usize {
        self.context
    }

    /// An empty cache for a stream that will hold at most `tokens` tokens: the whole room is
    /// taken at its first token (45 KB a token for SmolLM2), so size it to the request.
    pub fn cache(&self, tokens: usize) -> Cache {
        let room = tokens.clamp(1, self.context);
        Cache {
            layers: (0..self.shape.layers)
                .map(|_| KvCache::new(2, room))
                .collect(),
            len: 0,
        }
    }

    /// One pass over `runs`: each run's tokens join its cache, and the logits after each run's
    /// last token come back, one vector per run, in order.
    pub fn forward(&self, runs: &mut [Run]) -> Result<Vec<Vec<f32>>> {
        let mut ids = Vec::new();
        let mut masks = Vec::with_capacity(runs.len());
        for run in runs.iter() {
            if run.tokens.is_empty() {
                bail!("a run with no tokens");
            }
            if run.cache.len + run.tokens.len() > self.context {
                bail!(
                    "{} tokens exceed the context of {}",
                    run.cache.len + run.tokens.len(),
                    self.context
                );
            }
            if let Some(&bad) = run
                .tokens
                .iter()
                .find(|&&t| t as usize >= self.shape.vocabulary)
            {
                bail!("token {bad} is outside the vocabulary");
            }
            ids.extend_from_slice(run.tokens);
            masks.push(self.causal_mask(run.cache.len, run.tokens.len())?);
        }
        let mut x = self.embeddings.rows(&ids)?;
        let eps = self.shape.epsilon;
        for (layer, block) in self.blocks.iter().enumerate() {
            let h = candle_nn::ops::rms_norm(&x, &block.attention_norm, eps)?;
            let (q, k, v) = (
                block.query.forward(&h)?,
                block.key.forward(&h)?,
                block.value.forward(&h)?,
            );
            let mut attended = Vec::with_capacity(runs.len());
            let mut start = 0;
            for (run, mask) in runs.iter_mut().zip(&masks) {
                let n = run.tokens.len();
                let rows = |t: &Tensor| t.narrow(0, start, n);
                attended.push(self.attend(
                    layer,
                    run.cache,
                    &rows(&q)?,
                    &rows(&k)?,
                    &rows(&v)?,
                    mask.as_ref(),
                )?);
                start += n;
            }
            let attended = Tensor::cat(&attended, 0)?;
            x = (x + block.attention_out.forward(&attended)?)?;
            let h = candle_nn::ops::rms_norm(&x, &block.feed_forward_norm, eps)?;
            let gated =
                (candle_nn::ops::silu(&block.gate.forward(&h)?)? * block.up.forward(&h)?)?;
            x = (x + block.down.forward(&gated)?)?;
        }
        let mut last = Vec::with_capacity(runs.len());
        let mut end = 0u32;
        for run in runs.iter_mut() {
            end += run.tokens.len() as u32;
            last.push(end - 1);
            run.cache.len += run.tokens.len();
        }
        let x = x.index_select(&Tensor::new(last.as_slice(), &self.device)?, 0)?;
        let x = candle_nn::ops::rms_norm(&x, &self.norm, eps)?;
        Ok(self.output.forward(&x)?.to_vec2()?)
    }

    /// Self-attention of one run's `n` new rows (`q`, `k`, `v`: `(n, width)`) over its cache.
    /// The query heads that share a key/value head are stacked as rows of one matrix, so the
    /// shared keys and values are used as they are, never copied per head.
    fn attend(
        &self,
        layer: usize,
        cache: &mut Cache,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (n, position) = (q.dim(0)?, cache.len);
        let (heads, kv_heads, width) = (
            self.shape.heads,
            self.shape.kv_heads,
            self.shape.head_width(),
        );
        let split = |t: &Tensor, h: usize| -> Result<Tensor> {
            Ok(t.reshape((1, n, h, width))?.transpose(1, 2)?.contiguous()?)
        };
        let cos = self.cos.narrow(0, position, n)?;
        let sin = self.sin.narrow(0, position, n)?;
        let q = candle_nn::rotary_emb::rope_i(&split(q, heads)?, &cos, &sin)?;
        let k = candle_nn::rotary_emb::rope_i(&split(k, kv_heads)?, &cos, &sin)?;
        let v = split(v, kv_heads)?;
        let (k, v) = cache.layers[layer].append(&k, &v)?;
        let group = heads / kv_heads;
        let q = q.reshape((1, kv_heads, group * n, width))?;
        let scores = (q.matmul(&k.t()?)? * (1.0 / (width as f64).sqrt()))?;
        let scores = match mask {
            Some(mask) => scores.broadcast_add(mask)?,
            None => scores,
        };
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let y = weights.matmul(&v.contiguous()?)?;
        Ok(y.reshape((1, heads, n, width))?
            .transpose(1, 2)?
            .reshape((n, heads * width))?)
    }

    /// For `n > 1` new tokens at `position`: `-inf` where a row (query head group x token)
    /// would see a later token; one token sees everything before it and needs none.
    fn causal_mask(&self, position: usize, n: usize) -> Result<Option<Tensor>> {
        if n == 1 {
            return Ok(None);
        }
        let group = self.shape.heads / self.shape.kv_heads;
        let seen = position + n;
        let mut mask = vec![0f32; group * n * seen];
        for row in 0..group * n {
            let last = position + row % n;
            mask[row * seen + last + 1..(row + 1) * seen].fill(f32::NEG_INFINITY);
        }
        Ok(Some(Tensor::from_vec(
            mask,
            (group * n, seen),
            &self.device,
        )?))
    }
}

/// Rotary position tables, `(context, width / 2)`: the angle of position `p` for pair `i` is
/// `p / base^(2i / width)`.
fn rotary_tables(shape: &Shape, context: usize, device: &Device) -> Result<(Tensor, Tensor)> {
    let width = shape.head_width();
    let frequencies: Vec<f32> = (0..width / 2)
        .map(|i| 1.0 / shape.rope_base.powf(2.0 * i as f32 / width as f32))
        .collect();
    let frequencies = Tensor::new(frequencies.as_slice(), device)?;
    let positions =
        Tensor::arange(0u32, context as u32, device)?.to_dtype(candle_core::DType::F32)?;
    let angles = positions
        .reshape((context, 1))?
        .broadcast_mul(&frequencies.reshape((1, width / 2))?)?;
    Ok((angles.cos()?, angles.sin()?))
}

/// The vector of `logits`' largest value's index: greedy decoding's choice.
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &l) in logits.iter().enumerate() {
        if l > logits[best] {
            best = i;
        }
    }
    best as u32
}
