//! Implement [`Model`] and serve it with [`serve`]: the component then answers every endpoint
//! of the Lightweight AI Model Runtime Interface v1.2 (spec 4.2):
//!
//! `/health`, `/capabilities`, `/acceptable_ranges`, `/predict`, `/info`, `/metrics`,
//! `/citation`, `/test_examples`, and `/shutdown` (403 `shutdown_disabled`: only a native host
//! can stop a process, and `runtime-host` serves the real one); plus `/openapi.json`, the
//! interface's document specialised to the model ([`openapi`]); and the Open Inference
//! Protocol (KServe v2, Triton) under `/v2`, on the same predictions ([`oip`]).
//!
//! The SDK owns, once for every model: request validation and the status rules (400 malformed,
//! 200 with `success: false` when the model could not produce a result, 500 on a fault), the
//! error body, `computation_time_ms`, metrics kept in the key-value store with atomic updates,
//! a `/health` that stays 503 until the model passes its own test examples, and serving at the
//! root or under a route prefix.
//!
//! ```ignore
//! #[spin_sdk::http_component]
//! async fn handle(req: spin_sdk::http::IncomingRequest, out: model_sdk::ResponseOutparam) {
//!     model_sdk::respond(out, model_sdk::serve(&MyModel, req).await);
//! }
//! ```

pub mod batch;
mod deployment;
pub mod input;
mod metrics;
pub mod oip;
pub mod openapi;
pub mod predict;
mod routes;
pub mod snapshot;

pub use edge_api::model::*;
pub use guest_kit::{ApiError, ErrorCode, Response, ResponseOutparam, respond};
pub use routes::{serve, serve_unavailable};
use serde_json::{Map, Value};
use std::time::Instant;

/// Why a prediction produced no result.
#[derive(Debug, Clone, PartialEq)]
pub enum PredictError {
    /// The request is malformed for this model (unknown property, input too long, ...):
    /// answered 400 with the error body.
    Invalid(ApiError),
    /// The request was well formed but the model could not produce a result (an unparsable
    /// molecule, say): answered 200 with `success: false` and this as `error_message`.
    Failed(String),
    /// A fault in the model: answered 500 `internal_error`.
    Fault(String),
}

/// What went wrong, in words (the variant decides the status, not the text).
impl std::fmt::Display for PredictError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(e) => f.write_str(&e.message),
            Self::Failed(m) | Self::Fault(m) => f.write_str(m),
        }
    }
}

impl From<ApiError> for PredictError {
    fn from(e: ApiError) -> Self {
        Self::Invalid(e)
    }
}

/// A model. Everything but [`Model::predict`] is static description; the SDK validates
/// `input_type` against [`Model::capabilities`] before `predict` is called.
pub trait Model {
    /// Model identifier, used as `model` / `model_name` everywhere.
    fn name(&self) -> &str;
    fn info(&self) -> ModelInfo;
    fn capabilities(&self) -> Capabilities;
    fn acceptable_ranges(&self) -> AcceptableRanges;
    fn citation(&self) -> Citation;
    fn test_examples(&self) -> TestExamples;

    /// The model's evidence of quality on its test set (`GET /evidence`), if it has any:
    /// `None` answers 404, `Some(Err)` 500 with the reason.
    fn evidence(&self) -> Option<Result<Evidence, String>> {
        None
    }

    /// Runs one prediction. `data` is the request's `data` object; `input_type` is one the
    /// model lists.
    fn predict(
        &self,
        input_type: InputType,
        data: &Map<String, Value>,
    ) -> Result<Value, PredictError>;

    /// Whether the SDK answers batches for this model (`data.texts`, `data.rows`: see
    /// [`batch`]). A model that reads such a field itself says no.
    fn batches(&self) -> bool {
        true
    }

    /// The largest request body the model reads, in bytes (at least 1 MiB, the default):
    /// a model taking pictures or sounds in base64 needs more. The host's own cap must
    /// allow it too (`runtime-host` reads it from the model's manifest).
    fn max_body(&self) -> usize {
        guest_kit::http::DEFAULT_MAX_BODY
    }

    /// Most items one batch may hold (at most [`batch::MAX_ITEMS`]).
    fn max_batch(&self) -> usize {
        batch::MAX_ITEMS
    }

    /// Runs a batch: one outcome per item, in order, stopping early (a shorter list) once
    /// `deadline` has passed; the SDK answers the items not reached. By default one
    /// [`Model::predict`] per item; a model that computes many inputs at once overrides it.
    fn predict_batch(
        &self,
        input_type: InputType,
        items: &[Map<String, Value>],
        deadline: Instant,
    ) -> Vec<Result<Value, PredictError>> {
        let mut outcomes = Vec::with_capacity(items.len());
        for data in items {
            if Instant::now() >= deadline {
                break;
            }
            outcomes.push(self.predict(input_type, data));
        }
        outcomes
    }

    /// JSON Schema of `/predict`'s `data` for this model, served in its `/openapi.json`:
    /// every field it reads, with the types, enums and limits it enforces. Build it from the
    /// same constants and lists the model validates with, so the two cannot drift. By
    /// default: an object, nothing more said.
    fn data_schema(&self) -> Value {
        serde_json::json!({"type": "object"})
    }

    /// How the model looks through the Open Inference Protocol ([`oip`]): its input and
    /// output tensors and where each is in `/predict`'s `data` and `results`. By default the
    /// input type's field in, and each item's whole results out as JSON text; a model that
    /// knows its outputs names them, so standard clients get typed tensors.
    fn signature(&self) -> oip::Signature {
        oip::Signature::generic(self)
    }

    /// The prediction request an example stands for; the self-test behind `/health` runs
    /// every example through it. By default: the first listed input type, and the example's
    /// model-specific fields as `data`.
    fn example_request(&self, example: &Example) -> PredictionRequest {
        PredictionRequest {
            input_type: input_type_name(first_input_type(self)).to_owned(),
            data: example.input.clone(),
        }
    }
}

/// The first input type `model` lists (text when it lists none): what a request is taken
/// as when nothing else says.
pub fn first_input_type<M: Model + ?Sized>(model: &M) -> InputType {
    model
        .capabilities()
        .capabilities
        .first()
        .and_then(|c| c.input_types.first().copied())
        .unwrap_or(InputType::Text)
}

/// The wire name of an input type.
pub fn input_type_name(t: InputType) -> &'static str {
    match t {
        InputType::Text => "text",
        InputType::Image => "image",
        InputType::Audio => "audio",
        InputType::Tabular => "tabular",
    }
}
