//! The sentence-embedding model every host serves through `fermyon:spin/llm`: its name, its
//! output and the limits the `minilm` component and `runtime-host` both apply.

/// The model's name in Spin's LLM interface and its `ai-models` directory.
pub const MODEL: &str = "all-minilm-l6-v2";

/// Length of every embedding.
pub const DIMENSIONS: usize = 384;

/// Tokens the model reads of one text, `[CLS]` and `[SEP]` included: sentence-transformers'
/// `max_seq_length` for all-MiniLM-L6-v2. A longer text is refused, never cut.
pub const MAX_TOKENS: usize = 256;

/// Texts one `/predict` request may carry in `data.texts`.
pub const MAX_TEXTS: usize = 64;
