//! `POST /v1/embeddings` as OpenAI defines it, with the host's embedding model: `input` one
//! text or a list of texts (token arrays are refused: the tokenizer is the host's), vectors as
//! numbers or, with `encoding_format: "base64"` (what the `openai` Python client asks for by
//! default), as the base64 of their little-endian 32-bit floats.

use super::models::embedding_model;
use super::reply::{answer, error};
use base64::Engine as _;
use host_core::capabilities::llm::{AiModels, EmbedError, EmbeddingBatch};
use host_core::http::responses::HostResponse;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
pub struct EmbeddingsRequest {
    model: String,
    input: Input,
    encoding_format: Option<String>,
    dimensions: Option<usize>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Input {
    One(String),
    Many(Vec<String>),
}

/// The vectors of `texts` by the embedding model `name`: 400 for a text it cannot take, 500
/// when it fails.
pub async fn embed(
    models: &AiModels,
    name: &str,
    texts: Vec<String>,
) -> Result<EmbeddingBatch, HostResponse> {
    embedding_model(models, name).map_err(|refused| *refused)?;
    models.embed(name, texts).await.map_err(|e| match e {
        EmbedError::Invalid(m) => error(400, "invalid_request", m),
        EmbedError::Runtime(m) => error(500, "model_error", m),
    })
}

/// The answer to `request`.
pub async fn answer_request(models: &AiModels, request: EmbeddingsRequest) -> HostResponse {
    let base64 = match request.encoding_format.as_deref() {
        None | Some("float") => false,
        Some("base64") => true,
        Some(other) => {
            return error(
                400,
                "invalid_request",
                format!("`encoding_format` `{other}`: float or base64"),
            );
        }
    };
    let texts = match request.input {
        Input::One(t) => vec![t],
        Input::Many(ts) => ts,
    };
    if texts.is_empty() {
        return error(400, "invalid_request", "`input` holds no text");
    }
    let done = match embed(models, &request.model, texts).await {
        Ok(d) => d,
        Err(resp) => return resp,
    };
    let length = done.vectors.first().map_or(0, Vec::len);
    if let Some(d) = request.dimensions.filter(|d| *d != length) {
        return error(
            400,
            "invalid_request",
            format!("`dimensions` {d}: this model's vectors have {length}"),
        );
    }
    let data: Vec<Value> = done
        .vectors
        .iter()
        .enumerate()
        .map(|(index, v)| {
            let embedding = if base64 {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                json!(base64::engine::general_purpose::STANDARD.encode(bytes))
            } else {
                json!(v)
            };
            json!({"object": "embedding", "index": index, "embedding": embedding})
        })
        .collect();
    answer(
        200,
        &json!({
            "object": "list",
            "data": data,
            "model": request.model,
            "usage": {"prompt_tokens": done.tokens, "total_tokens": done.tokens},
        }),
    )
}
