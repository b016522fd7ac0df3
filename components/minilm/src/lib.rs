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
mod signature;
mod wordpieces;

use edge_api::embedding::{DIMENSIONS, MAX_TEXTS, MAX_TOKENS, MODEL};
use model_sdk::{ApiError, ErrorCode, InputType, Model, PredictError};
use serde_json::{Map, Value, json};
use spin_sdk::llm;

struct MiniLm;

/// Builds the word-piece tokenizer (30,522 entries) before the snapshot, so instances do not.
#[cfg(target_arch = "wasm32")]
fn preload() {
    let _ = wordpieces::tokenizer();
}

model_sdk::preinit!(preload);

#[spin_sdk::http_component]
async fn handle(req: spin_sdk::http::IncomingRequest, out: model_sdk::ResponseOutparam) {
    model_sdk::respond(out, model_sdk::serve(&MiniLm, req).await);
}

/// The text of one request (or of one item of a batch: the SDK makes each `data.texts`
/// item a `data.text`), checked; with its length in word pieces.
fn read_text(data: &Map<String, Value>) -> Result<(String, usize), ApiError> {
    model_sdk::input::only_fields(data, &["text"], "send data.text, or data.texts for a batch")?;
    let text = model_sdk::input::string_field(data, "text")?
        .ok_or_else(|| ApiError::missing("data.text"))?;
    let tokens = check_text("data.text", text)?;
    Ok((text.to_owned(), tokens))
}

/// A text must have content, and fit the model: refused above [`MAX_TOKENS`], never cut.
/// Its length in word pieces.
fn check_text(field: &str, text: &str) -> Result<usize, ApiError> {
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
    Ok(tokens)
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

    fn max_batch(&self) -> usize {
        MAX_TEXTS
    }

    fn signature(&self) -> model_sdk::oip::Signature {
        signature::signature()
    }

    fn data_schema(&self) -> Value {
        let text = json!({
            "type": "string",
            "pattern": "\\S",
            "description": format!("At most {MAX_TOKENS} word pieces, [CLS] and [SEP] included; longer is 400 input_too_long."),
        });
        json!({
            "type": "object",
            "properties": {"text": text},
            "required": ["text"],
            "additionalProperties": false,
        })
    }

    fn predict(&self, _: InputType, data: &Map<String, Value>) -> Result<Value, PredictError> {
        let (text, _) = read_text(data)?;
        let vector = embed(std::slice::from_ref(&text))?.remove(0);
        Ok(answer(&vector))
    }

    /// Every good text embedded, in calls of texts of one length in word pieces each, so a
    /// host that averages a batch's padding into its vectors (Spin 4.0.2's local engine)
    /// still answers each text as alone; `runtime-host` embeds each call as one batch.
    fn predict_batch(
        &self,
        _: InputType,
        items: &[Map<String, Value>],
        deadline: std::time::Instant,
    ) -> Vec<Result<Value, PredictError>> {
        let read: Vec<Result<(String, usize), ApiError>> = items.iter().map(read_text).collect();
        let mut by_length: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (i, item) in read.iter().enumerate() {
            if let Ok((_, tokens)) = item {
                by_length.entry(*tokens).or_default().push(i);
            }
        }
        let mut vectors: Vec<Option<Result<Vec<f32>, PredictError>>> = vec![None; items.len()];
        for indices in by_length.values() {
            if std::time::Instant::now() >= deadline {
                let late = PredictError::Failed(model_sdk::batch::not_computed());
                indices
                    .iter()
                    .for_each(|&i| vectors[i] = Some(Err(late.clone())));
                continue;
            }
            let texts: Vec<String> = indices
                .iter()
                .filter_map(|&i| read[i].as_ref().ok().map(|(t, _)| t.clone()))
                .collect();
            match embed(&texts) {
                Ok(found) => {
                    for (&i, v) in indices.iter().zip(found) {
                        vectors[i] = Some(Ok(v));
                    }
                }
                Err(e) => indices
                    .iter()
                    .for_each(|&i| vectors[i] = Some(Err(e.clone()))),
            }
        }
        read.into_iter()
            .zip(vectors)
            .map(|(item, vector)| {
                item?;
                let vector = vector.expect("every good text was embedded")?;
                Ok(answer(&vector))
            })
            .collect()
    }
}

/// One text's result.
fn answer(vector: &[f32]) -> Value {
    json!({"embedding": shortest(vector), "dimensions": DIMENSIONS, "model": MODEL})
}
