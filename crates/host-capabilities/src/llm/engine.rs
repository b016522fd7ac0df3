//! The seam between `fermyon:spin/llm` and the models behind it, as Spin's `factor-llm` has
//! one: an [`Engine`] says what a model is called, which files it needs and how to load it.
//! An embedding model loads as an [`Embedder`], which the worker thread
//! ([`crate::llm::worker`]) runs; a language model loads as a Llama network and
//! its vocabulary, which the generator thread ([`crate::llm::generator`]) runs.
//! all-MiniLM-L6-v2 ([`crate::llm::minilm`]) and SmolLM2-135M-Instruct
//! ([`crate::llm::smollm2`]) are the engines today; another model is one file
//! with its `Engine`, and one entry in the catalogue
//! ([`crate::llm::catalogue::ENGINES`]).

use crate::llm::llama::Llama;
use crate::llm::vocabulary::Vocabulary;
use anyhow::Result;
use std::path::Path;

/// One text, as the model's tokenizer made it (special tokens included).
#[derive(Clone)]
pub struct Tokens {
    pub ids: Vec<u32>,
}

impl Tokens {
    /// Tokens the network reads.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are none (a tokenizer adds its special tokens even to empty text).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// A loaded embedding model. It lives on its own thread and runs one call at a time.
pub trait Embedder: Send + 'static {
    fn tokenize(&self, text: &str) -> Result<Tokens>;
    /// Unit-length embeddings of `texts`, in order; `keep_going` is asked between passes, so
    /// abandoned work stops early.
    fn embed(&self, texts: &[Tokens], keep_going: &dyn Fn() -> bool) -> Result<Vec<Vec<f32>>>;
    /// Tokens one round of the worker takes at most: about one pass of the network.
    fn round_tokens(&self) -> usize;
}

/// How a model loads, by what it does.
pub enum Load {
    /// An embedding model (`generate-embeddings`).
    Embedding(fn(&Path) -> Result<Box<dyn Embedder>>),
    /// A language model (`infer`).
    Generation(fn(&Path) -> Result<(Llama, Vocabulary)>),
}

/// A model this host can run.
pub struct Engine {
    /// The name components ask for (Spin's `ai_models = [...]`).
    pub name: &'static str,
    /// Files its directory (`<ai-models>/<name>/`) must hold.
    pub files: &'static [&'static str],
    /// How to put them there, for the message when they are missing.
    pub install: &'static str,
    /// Longest text it reads, in tokens (for a language model: prompt and answer together).
    pub max_tokens: usize,
    /// Loads it from its directory (slow: runs off the async threads).
    pub load: Load,
}
