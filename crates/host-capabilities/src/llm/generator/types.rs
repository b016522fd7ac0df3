//! What the generator's API and its thread share: the limits, how a stream ends, what it
//! sends, and a request as the thread takes it.

use crate::llm::sampling::Params;
use std::time::Instant;
use tokio::sync::mpsc as events;

/// Streams advanced together.
pub const MAX_STREAMS: usize = 8;
/// Requests that may wait for a stream.
pub const MAX_WAITING: usize = 32;
/// The most tokens one request may ask for.
pub const MAX_NEW_TOKENS: u32 = 1024;
/// Prompt tokens one stream adds to a pass.
pub(super) const PROMPT_CHUNK: usize = 256;
/// Prompt tokens all streams add to one pass together: a pass stays short (about a second on
/// two cores) however many streams start at once, so the others keep writing.
pub(super) const PASS_PROMPT_TOKENS: usize = 256;
/// What a caller turned away for a full queue is told to wait, in seconds.
pub const RETRY_AFTER_SECONDS: u64 = 2;

/// Why a stream ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Finish {
    /// The model ended its turn.
    Stop,
    /// `max_tokens` were made.
    Length,
}

/// What a stream sends its caller.
#[derive(Debug)]
pub enum Event {
    /// More of the answer's text.
    Text(String),
    /// The end: every generated token (the end-of-turn token left out), and why it ended.
    Done { tokens: Vec<u32>, finish: Finish },
    /// It broke off: the model failed.
    Failed(String),
    /// It broke off: the request's deadline passed (the message says after how many tokens).
    Expired(String),
}

/// A request as the thread takes it: the prompt's tokens, checked.
pub(super) struct Job {
    pub(super) prompt: Vec<u32>,
    pub(super) params: Params,
    pub(super) deadline: Option<Instant>,
    pub(super) events: events::UnboundedSender<Event>,
}
