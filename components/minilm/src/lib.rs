//! minilm: sentence embeddings as a Lightweight AI Model Runtime Interface 1.2 model, the
//! specification's own example capability (`embedding`, input type `text`).
//!
//! The network, all-MiniLM-L6-v2, is not in the component: it asks the host through Spin's
//! `fermyon:spin/llm@2.0.0` (`generate-embeddings`), so the same component runs under
//! `spin up` (weights in `.spin/ai-models/`), on cloud Spin hosts, and under `runtime-host`,
//! which runs the network natively with one copy of the weights for every instance. What the
//! component owns is the request contract: which texts are accepted (counted here, so every
//! host refuses the same ones) and the shape of the answer.

mod describe;
mod wordpieces;

use edge_api::embedding::{DIMENSIONS, MAX_TEXTS, MAX_TOKENS, MODEL};
use model_sdk::{ApiError, ErrorCode, InputType, Model, PredictError};
use serde_json::{Map, Value, json};
use spin_sdk::llm;

struct MiniLm;

#[spin_sdk::http_component]
async fn handle(req: spin_sdk::http::IncomingRequest) -> model_sdk::Response {
    model_sdk::serve(&MiniLm, req).await
}

/// The texts of a request: `data.text` (one) or `data.texts` (a list, answered in order).
enum Texts {
    One(String),
    Many(Vec<String>),
}

fn read_request(data: &Map<String, Value>) -> Result<Texts, ApiError> {
    model_sdk::input::only_fields(data, &["text", "texts"], "send data.text or data.texts")?;
    let texts = match (data.get("text"), data.get("texts")) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "data.texts",
                "send data.text (one text) or data.texts (a list), not both",
            ));
        }
        (Some(_), None) => {
            let text = model_sdk::input::string_field(data, "text")?
                .ok_or_else(|| ApiError::missing("data.text"))?;
            check_text("data.text", text)?;
            Texts::One(text.to_owned())
        }
        (None, Some(Value::Array(items))) => {
            if items.is_empty() || items.len() > MAX_TEXTS {
                return Err(ApiError::invalid(
                    "data.texts",
                    format!(
                        "holds {} texts; send 1 to {MAX_TEXTS} per request",
                        items.len()
                    ),
                ));
            }
            let mut texts = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let field = format!("data.texts[{i}]");
                let text = item
                    .as_str()
                    .ok_or_else(|| ApiError::invalid(&field, "must be a string"))?;
                check_text(&field, text)?;
                texts.push(text.to_owned());
            }
            Texts::Many(texts)
        }
        (None, Some(_)) => {
            return Err(ApiError::invalid(
                "data.texts",
                "must be an array of strings",
            ));
        }
        (None, None) => return Err(ApiError::missing("data.text")),
    };
    Ok(texts)
}

/// A text must have content, and fit the model: refused above [`MAX_TOKENS`], never cut.
fn check_text(field: &str, text: &str) -> Result<(), ApiError> {
    // What the tokenizer drops (white space, control and zero-width characters) is no
    // content: such a text would embed as [CLS] [SEP] alone, like "".
    let invisible = |c: char| {
        c.is_whitespace()
            || c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{00AD}')
    };
    if text.chars().all(invisible) {
        return Err(ApiError::invalid(
            field,
            "must not be empty (white space, control and zero-width characters do not count)",
        ));
    }
    let tokens = wordpieces::count(text).map_err(|e| ApiError::invalid(field, e))?;
    if tokens > MAX_TOKENS {
        return Err(ApiError::new(
            ErrorCode::InputTooLong,
            format!(
                "{field} is {tokens} word pieces long ([CLS] and [SEP] included); the model \
                 reads at most {MAX_TOKENS}: split the text"
            ),
        ));
    }
    Ok(())
}

/// The host's embeddings of `texts`, each checked for its length.
fn embed(texts: &[String]) -> Result<Vec<Vec<f32>>, PredictError> {
    let result = llm::generate_embeddings(llm::EmbeddingModel::Other(MODEL), texts).map_err(
        |e| match e {
            llm::Error::ModelNotSupported => PredictError::Fault(format!(
                "the host does not give this component the AI model `{MODEL}`: grant it with \
                 `ai_models = [\"{MODEL}\"]` in spin.toml, or `--ai-model {MODEL}` to runtime-host"
            )),
            llm::Error::RuntimeError(m) => PredictError::Fault(m),
            llm::Error::InvalidInput(m) => {
                PredictError::Invalid(ApiError::new(ErrorCode::InvalidField, m))
            }
        },
    )?;
    if result.embeddings.len() != texts.len()
        || result.embeddings.iter().any(|v| v.len() != DIMENSIONS)
    {
        return Err(PredictError::Fault(format!(
            "the host answered {} vectors for {} texts, not all of {DIMENSIONS} numbers",
            result.embeddings.len(),
            texts.len()
        )));
    }
    Ok(result.embeddings)
}

/// The vector as JSON numbers written with an `f32`'s own precision (`0.033241548`, not the
/// `0.033241547644138336` its widening to `f64` would print): half the bytes, same values.
fn shortest(vector: &[f32]) -> Vec<Value> {
    vector
        .iter()
        .map(|x| {
            let widened: f64 = x.to_string().parse().unwrap_or(f64::from(*x));
            Value::from(widened)
        })
        .collect()
}

impl Model for MiniLm {
    fn name(&self) -> &str {
        describe::NAME
    }
    fn info(&self) -> model_sdk::ModelInfo {
        describe::info()
    }
    fn capabilities(&self) -> model_sdk::Capabilities {
        describe::capabilities()
    }
    fn acceptable_ranges(&self) -> model_sdk::AcceptableRanges {
        describe::acceptable_ranges()
    }
    fn citation(&self) -> model_sdk::Citation {
        describe::citation()
    }
    fn test_examples(&self) -> model_sdk::TestExamples {
        describe::test_examples()
    }

    /// `data.texts` is minilm's own batch (embeddings in one vector list), older than the
    /// SDK's batches; it keeps it for now.
    fn batches(&self) -> bool {
        false
    }

    fn data_schema(&self) -> Value {
        let text = json!({
            "type": "string",
            "pattern": "\\S",
            "description": format!("At most {MAX_TOKENS} word pieces, [CLS] and [SEP] included; longer is 400 input_too_long."),
        });
        json!({
            "type": "object",
            "description": "One text in `text`, or a list in `texts` (a model-specific field); not both.",
            "properties": {
                "text": text,
                "texts": {"type": "array", "minItems": 1, "maxItems": MAX_TEXTS, "items": text},
            },
            "oneOf": [{"required": ["text"]}, {"required": ["texts"]}],
            "additionalProperties": false,
        })
    }

    fn predict(&self, _: InputType, data: &Map<String, Value>) -> Result<Value, PredictError> {
        Ok(match read_request(data)? {
            Texts::One(text) => {
                let vector = shortest(&embed(std::slice::from_ref(&text))?[0]);
                json!({"embedding": vector, "dimensions": DIMENSIONS, "model": MODEL})
            }
            Texts::Many(texts) => {
                let vectors: Vec<_> = embed(&texts)?.iter().map(|v| shortest(v)).collect();
                json!({"embeddings": vectors, "dimensions": DIMENSIONS, "model": MODEL})
            }
        })
    }
}
