//! What the section asks, the same bytes to both servers: greedy decoding (temperature 0, no
//! repeat penalty: llama-cpp-python's default of 1.1 would otherwise apply on its side only),
//! so both sides decode the same prompt by the same rule.
//!
//! Every request of a run opens with a number of its own in the system message. llama.cpp
//! keeps the previous prompt's keys and values and skips the prefix a new prompt shares with
//! it; without the number, the system message and a repeated question would be read once
//! there and again every time here, and the time to the first token would measure that cache.
//! With it, the prompts share four tokens (`<|im_start|>system\nRequest`).

use edge_api::language_model::MODEL;
use serde_json::{Value, json};

/// Questions whose answers run long, one per stream of the concurrent load.
const TOPICS: [&str; 8] = [
    "how a steam locomotive works",
    "how bees make honey",
    "how a city's water supply reaches each house",
    "how bread rises in the oven",
    "how a sailing boat moves against the wind",
    "how glaciers shape valleys",
    "how a library organises its books",
    "how a bicycle's gears make climbing easier",
];

/// About 200 tokens with the chat template around it (the prompt-reading row): a passage
/// written for this bench, and a question whose answer needs all of it read.
const PASSAGE: &str = "The old mill at the edge of the village turned for nearly two hundred years. \
Farmers brought wheat and barley on carts in late summer, and the miller weighed every sack on \
an iron scale before the grain went up to the hopper. Water from the millpond ran through a \
wooden channel and over the wheel, which drove a shaft, a set of gears and finally the two \
stones that ground the grain. The lower stone never moved; the upper one turned above it, and \
the miller adjusted the gap between them with a screw to make flour coarse or fine. In dry \
years the pond ran low and the mill stood still for weeks, so the village kept a store of flour \
in the church cellar. When a steam mill opened in the town nearby, the farmers slowly stopped \
coming, and the last miller closed the doors in the spring after his seventieth birthday.";

/// The messages of request number `n`: its own system line, then `question`.
fn messages(n: usize, question: &str) -> Value {
    json!([
        {"role": "system", "content": format!("Request {n}. You are a helpful assistant.")},
        {"role": "user", "content": question},
    ])
}

/// A streamed, greedy chat request of at most `max_tokens` new tokens.
fn body(messages: Value, max_tokens: u32) -> Value {
    json!({
        "model": MODEL,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": 0,
        "repeat_penalty": 1.0,
        "stream": true,
        "stream_options": {"include_usage": true},
    })
}

/// Request `n` of the one-stream row: an answer longer than `max_tokens`.
pub fn long_answer(n: usize, max_tokens: u32) -> Value {
    let question = "Write a long story about a lighthouse keeper who finds a message in a \
                    bottle. Describe each day of his week in detail.";
    body(messages(n, question), max_tokens)
}

/// Request `n` of the prompt-reading row: about 200 tokens in, one out.
pub fn long_prompt(n: usize) -> Value {
    let question = format!("{PASSAGE}\n\nWhy did the farmers stop bringing grain to the mill?");
    body(messages(n, &question), 1)
}

/// Request `n` of the concurrent row: stream `n % 8`'s topic.
pub fn concurrent(n: usize, max_tokens: u32) -> Value {
    let topic = TOPICS[n % TOPICS.len()];
    let question = format!("Explain in detail {topic}.");
    body(messages(n, &question), max_tokens)
}
