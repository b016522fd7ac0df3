//! Spin's own protocol for a remote language model (Spin 4.0.2's `[llm_compute] type =
//! "remote_http"`, its default `api_type`): Spin sends each `infer` and
//! `generate-embeddings` call of its components here, so an app under `spin up` reaches the
//! model this host runs.
//!
//! - `POST /infer` `{"model", "prompt", "options": {"maxTokens", "repeatPenalty",
//!   "repeatPenaltyLastNTokenCount", "temperature", "topK", "topP"}}` answers `{"text",
//!   "usage": {"promptTokenCount", "generatedTokenCount"}}`. The prompt is taken as it is,
//!   exactly as `infer` takes it from a component here (no chat template), so the same call
//!   gives the same text under either host; options Spin left out take Spin's defaults.
//! - `POST /embed` `{"model", "input": [...]}` answers `{"embeddings", "usage":
//!   {"promptTokenCount"}}`.
//!
//! Spin reads any answer's body without looking at its status: an error's body fails its
//! parsing, and the component gets a runtime error.

use super::embeddings::embed;
use super::models::language_model;
use super::reply::{answer, refused};
use host_core::capabilities::llm::generator::{Prompt, Request};
use host_core::capabilities::llm::sampling::Params;
use host_core::http::responses::HostResponse;
use serde::Deserialize;
use serde_json::json;
use std::time::{Duration, Instant};

#[derive(Deserialize)]
pub struct InferRequest {
    model: String,
    prompt: String,
    options: Option<Options>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Options {
    max_tokens: Option<u32>,
    repeat_penalty: Option<f32>,
    repeat_penalty_last_n_token_count: Option<u32>,
    temperature: Option<f32>,
    top_k: Option<u32>,
    top_p: Option<f32>,
}

impl Options {
    fn params(self) -> Params {
        let d = Params::default();
        Params {
            max_tokens: self.max_tokens.unwrap_or(d.max_tokens),
            repeat_penalty: self.repeat_penalty.unwrap_or(d.repeat_penalty),
            repeat_penalty_last_n: self
                .repeat_penalty_last_n_token_count
                .unwrap_or(d.repeat_penalty_last_n),
            temperature: self.temperature.unwrap_or(d.temperature),
            top_k: self.top_k.unwrap_or(d.top_k),
            top_p: self.top_p.unwrap_or(d.top_p),
        }
    }
}

#[derive(Deserialize)]
pub struct EmbedRequest {
    model: String,
    input: Vec<String>,
}

/// `POST /infer`, within `deadline`.
pub async fn infer(
    models: &host_core::capabilities::llm::AiModels,
    request: InferRequest,
    deadline: Duration,
) -> HostResponse {
    let generator = match language_model(models, &request.model).await {
        Ok(g) => g,
        Err(resp) => return resp,
    };
    let params = request
        .options
        .map_or_else(Params::default, Options::params);
    let request = Request {
        prompt: Prompt::Text(request.prompt),
        params,
        deadline: Some(Instant::now() + deadline),
    };
    match generator.complete(request).await {
        Ok(done) => answer(
            200,
            &json!({
                "text": done.text,
                "usage": {
                    "promptTokenCount": done.prompt_tokens,
                    "generatedTokenCount": done.tokens.len(),
                },
            }),
        ),
        Err(e) => refused(e),
    }
}

/// `POST /embed`.
pub async fn embed_texts(
    models: &host_core::capabilities::llm::AiModels,
    request: EmbedRequest,
) -> HostResponse {
    match embed(models, &request.model, request.input).await {
        Ok(done) => answer(
            200,
            &json!({
                "embeddings": done.vectors,
                "usage": {"promptTokenCount": done.tokens},
            }),
        ),
        Err(resp) => resp,
    }
}
