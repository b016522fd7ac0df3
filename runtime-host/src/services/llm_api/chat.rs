//! `POST /v1/chat/completions` as OpenAI defines it, read into what the generator takes: the
//! messages written with the model's own chat template (from its GGUF file), OpenAI's
//! sampling fields mapped onto Spin's parameters, and the answers' JSON (whole, or chunk by
//! chunk for `stream: true`).
//!
//! Mapping (docs/operating.md lists it for users):
//! - `max_completion_tokens` (or the older `max_tokens`) is `max-tokens`; without either, the
//!   rest of the context, at most the host's cap.
//! - `temperature` (0 to 2, default 1: OpenAI's) and `top_p` (default 1) as they are; `top_k`,
//!   which OpenAI does not have, is taken as llama.cpp's and vLLM's servers take it (default 0:
//!   every token).
//! - `frequency_penalty` and `presence_penalty` (-2 to 2, default 0) are OpenAI's additive
//!   penalties; the engine has llama.cpp's multiplicative repeat penalty over the last 64
//!   tokens. A token seen once is pushed down by `frequency + presence` in OpenAI's model;
//!   dividing a typical leading logit (about 10 for this model) by `1 + (frequency +
//!   presence) / 10` does about the same, so that is the repeat penalty. Spin's `open_ai`
//!   client sends its repeat penalty as `frequency_penalty` (1.1 by default), which this makes
//!   1.11: what it meant.
//! - `n` must be 1; `logprobs` and `tools` are refused (this host has neither); `stop`, `seed`,
//!   `logit_bias`, `response_format`, `user` and other fields are ignored.

use host_core::capabilities::llm::generator::{Finish, MAX_NEW_TOKENS};
use host_core::capabilities::llm::sampling::Params;
use host_core::capabilities::llm::vocabulary::Message;
use serde::Deserialize;
use serde_json::{Value, json};

/// Tokens the repeat penalty looks back over (Spin's default).
const PENALTY_WINDOW: u32 = 64;

#[derive(Deserialize)]
pub struct ChatRequest {
    pub model: String,
    messages: Vec<ChatMessage>,
    max_tokens: Option<u32>,
    max_completion_tokens: Option<u32>,
    temperature: Option<f32>,
    top_p: Option<f32>,
    top_k: Option<u32>,
    frequency_penalty: Option<f32>,
    presence_penalty: Option<f32>,
    n: Option<u32>,
    stream: Option<bool>,
    stream_options: Option<StreamOptions>,
    logprobs: Option<bool>,
    tools: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize)]
struct StreamOptions {
    include_usage: Option<bool>,
}

#[derive(Deserialize)]
struct ChatMessage {
    role: String,
    content: Option<Content>,
}

/// A message's content: text, or a list of parts of which only text ones are understood.
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

/// What a chat request asks of the generator, checked.
pub struct Plan {
    pub messages: Vec<Message>,
    pub params: Params,
    /// `max_tokens` the client gave; `None`: the rest of the context.
    pub max_tokens: Option<u32>,
    pub stream: bool,
    pub include_usage: bool,
}

impl ChatRequest {
    /// The plan, or the 400's message naming the field.
    pub fn plan(self) -> Result<Plan, String> {
        if self.n.is_some_and(|n| n != 1) {
            return Err("`n` must be 1: this host makes one choice per request".into());
        }
        if self.logprobs == Some(true) {
            return Err("`logprobs` is not supported by this host".into());
        }
        if self.tools.is_some_and(|t| !t.is_empty()) {
            return Err("`tools` are not supported: this model does not call functions".into());
        }
        if self.messages.is_empty() {
            return Err("`messages` is empty: a chat needs at least one message".into());
        }
        let messages = self
            .messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| m.read(i))
            .collect::<Result<Vec<_>, _>>()?;
        let temperature = within(self.temperature, 1.0, 0.0, 2.0, "temperature")?;
        let top_p = self.top_p.unwrap_or(1.0);
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(format!("`top_p` {top_p} is outside (0, 1]"));
        }
        let frequency = within(self.frequency_penalty, 0.0, -2.0, 2.0, "frequency_penalty")?;
        let presence = within(self.presence_penalty, 0.0, -2.0, 2.0, "presence_penalty")?;
        let max_tokens = self.max_completion_tokens.or(self.max_tokens);
        if max_tokens == Some(0) {
            return Err("`max_completion_tokens` must be at least 1".into());
        }
        let params = Params {
            max_tokens: max_tokens.unwrap_or(MAX_NEW_TOKENS),
            repeat_penalty: 1.0 + (frequency + presence) / 10.0,
            repeat_penalty_last_n: PENALTY_WINDOW,
            temperature,
            top_k: self.top_k.unwrap_or(0),
            top_p,
        };
        Ok(Plan {
            messages,
            params,
            max_tokens,
            stream: self.stream.unwrap_or(false),
            include_usage: self
                .stream_options
                .and_then(|o| o.include_usage)
                .unwrap_or(false),
        })
    }
}

/// `value` (or `default`) within `[low, high]`.
fn within(
    value: Option<f32>,
    default: f32,
    low: f32,
    high: f32,
    name: &str,
) -> Result<f32, String> {
    let v = value.unwrap_or(default);
    if v.is_finite() && (low..=high).contains(&v) {
        Ok(v)
    } else {
        Err(format!("`{name}` {v} is outside [{low}, {high}]"))
    }
}

impl ChatMessage {
    fn read(self, i: usize) -> Result<Message, String> {
        let role = match self.role.as_str() {
            "system" | "user" | "assistant" => self.role,
            // OpenAI's newer name for the system message.
            "developer" => "system".to_owned(),
            other => {
                return Err(format!(
                    "`messages[{i}].role` `{other}` is not supported: system, developer, user \
                     or assistant"
                ));
            }
        };
        let content = match self.content {
            Some(Content::Text(t)) => t,
            Some(Content::Parts(parts)) => {
                let mut text = String::new();
                for p in parts {
                    match (p.kind.as_str(), p.text) {
                        ("text", Some(t)) => text.push_str(&t),
                        (kind, _) => {
                            return Err(format!(
                                "`messages[{i}].content`: a part of type `{kind}` is not \
                                 supported (text only)"
                            ));
                        }
                    }
                }
                text
            }
            None => return Err(format!("`messages[{i}].content` is missing")),
        };
        Ok(Message { role, content })
    }
}

/// What every answer to one request shares.
pub struct Meta {
    pub id: String,
    pub created: u64,
    pub model: String,
}

impl Meta {
    pub fn new(model: &str) -> Self {
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self {
            id: format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
            created,
            model: model.to_owned(),
        }
    }

    /// The whole answer (`stream: false`).
    pub fn completion(&self, text: &str, finish: Finish, prompt: usize, generated: usize) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason(finish),
                "logprobs": null,
            }],
            "usage": usage(prompt, generated),
        })
    }

    /// One chunk of a streamed answer: `delta` and, in the last, why it ended. With
    /// `include_usage`, every chunk carries `"usage": null` (the usage comes alone at the end).
    pub fn chunk(&self, delta: Value, finish: Option<Finish>, include_usage: bool) -> Value {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{
                "index": 0,
                "delta": delta,
                "finish_reason": finish.map(finish_reason),
                "logprobs": null,
            }],
        });
        if include_usage {
            chunk["usage"] = Value::Null;
        }
        chunk
    }

    /// The last chunk of `stream_options.include_usage`: no choice, the usage.
    pub fn usage_chunk(&self, prompt: usize, generated: usize) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage(prompt, generated),
        })
    }
}

fn finish_reason(finish: Finish) -> &'static str {
    match finish {
        Finish::Stop => "stop",
        Finish::Length => "length",
    }
}

fn usage(prompt: usize, generated: usize) -> Value {
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": generated,
        "total_tokens": prompt + generated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(body: Value) -> Result<Plan, String> {
        serde_json::from_value::<ChatRequest>(body).unwrap().plan()
    }

    #[test]
    fn fields_map_onto_the_engine_parameters() {
        let p = plan(json!({
            "model": "m",
            "messages": [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "!"}]},
            ],
            "max_tokens": 7,
            "max_completion_tokens": 9,
            "temperature": 0,
            "frequency_penalty": 1.1,
            "stream": true,
            "stream_options": {"include_usage": true},
            "stop": ["\n"],
            "seed": 3,
        }))
        .unwrap();
        assert_eq!(p.messages[0].role, "system");
        assert_eq!(p.messages[1].content, "Hi!");
        assert_eq!(p.max_tokens, Some(9), "max_completion_tokens wins");
        assert_eq!(p.params.temperature, 0.0);
        assert!((p.params.repeat_penalty - 1.11).abs() < 1e-6);
        assert_eq!((p.params.top_k, p.params.top_p), (0, 1.0));
        assert!(p.stream && p.include_usage);
        let d =
            plan(json!({"model": "m", "messages": [{"role": "user", "content": "x"}]})).unwrap();
        assert_eq!((d.params.temperature, d.params.repeat_penalty), (1.0, 1.0));
        assert_eq!(d.max_tokens, None);
        assert!(!d.stream);
    }

    #[test]
    fn what_this_host_cannot_do_is_refused_by_name() {
        let user = json!([{"role": "user", "content": "x"}]);
        for (extra, field) in [
            (json!({"n": 2}), "`n`"),
            (json!({"logprobs": true}), "`logprobs`"),
            (json!({"tools": [{"type": "function"}]}), "`tools`"),
            (json!({"temperature": 2.5}), "`temperature`"),
            (json!({"top_p": 0}), "`top_p`"),
            (json!({"presence_penalty": -3}), "`presence_penalty`"),
            (json!({"max_tokens": 0}), "`max_completion_tokens`"),
            (json!({"messages": []}), "`messages`"),
            (
                json!({"messages": [{"role": "tool", "content": "x"}]}),
                "role",
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
                "image_url",
            ),
            (
                json!({"messages": [{"role": "assistant", "content": null}]}),
                "content",
            ),
        ] {
            let mut body = json!({"model": "m", "messages": user});
            for (k, v) in extra.as_object().unwrap() {
                body[k] = v.clone();
            }
            let why = plan(body).err().unwrap_or_else(|| panic!("{extra} passed"));
            assert!(why.contains(field), "{extra}: {why}");
        }
    }
}
