//! The section's figures, as the report keeps them (apart from the section, so the report
//! can hold them without importing the section that takes the report).

use serde::Serialize;

/// A figure over the rounds: its median and every round's value.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sample {
    pub median: f64,
    pub runs: Vec<f64>,
}

impl Sample {
    pub(super) fn push(&mut self, value: f64) {
        self.runs.push(value);
        let mut sorted = self.runs.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        self.median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
    }

    pub fn lowest(&self) -> f64 {
        self.runs.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn highest(&self) -> f64 {
        self.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
}

/// One server's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LlmSide {
    pub name: String,
    /// Row 1: tokens/s of one stream, first token to last.
    pub one_stream_tokens_per_s: Sample,
    /// Tokens each round's one stream generated.
    pub one_stream_tokens: Vec<u64>,
    /// Row 2: request to first token, ms.
    pub first_token_ms: Sample,
    /// Row 3: tokens of all streams over the time from the first request to the last token.
    pub concurrent_tokens_per_s: Sample,
    /// Tokens each round's streams generated together.
    pub concurrent_tokens: Vec<u64>,
    /// Row 4, MiB: before the model loads (ours only: llama.cpp loads it at start), after
    /// the first request, after every load.
    pub rss_before_load_mib: Option<f64>,
    pub rss_loaded_mib: Option<f64>,
    pub rss_after_mib: Option<f64>,
    /// Streams whose text chunks did not match the `usage` the server sent with them.
    pub usage_mismatches: usize,
    /// The first round's one-stream answer (greedy: the sides' can be compared).
    pub first_answer: String,
}

/// The section's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LlmReport {
    pub rounds: usize,
    pub one_stream_max_tokens: u32,
    pub concurrent_streams: usize,
    pub concurrent_max_tokens: u32,
    /// The prompt-reading row's prompt, in tokens (ours counts it in `usage`).
    pub long_prompt_tokens: Option<u64>,
    pub sides: Vec<LlmSide>,
}

impl LlmReport {
    pub fn side(&self, name: &str) -> Option<&LlmSide> {
        self.sides.iter().find(|s| s.name == name)
    }
}
