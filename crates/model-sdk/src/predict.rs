//! `/predict` and the self-test as plain functions of a [`Model`] and bytes: no host calls,
//! so the component and a native server (the benchmark's reference peer) run the same code.

use crate::{Model, PredictError, batch, input_type_name};
use edge_api::model::{InputType, PredictionRequest, PredictionResponse};
use edge_api::{ApiError, ErrorCode};
use std::time::{Duration, Instant};

/// One `/predict` request that reached the model, ready to be counted and answered.
pub struct Prediction {
    /// The 200 answer, or the 500 for a fault in the model.
    pub answer: Result<PredictionResponse, ApiError>,
    /// Time spent in [`Model::predict`].
    pub elapsed: Duration,
    /// Why the model produced no result, for `/metrics`' `last_error`.
    pub error: Option<String>,
    /// Predictions made: 1, or the items of a batch (what `/metrics` counts).
    pub items: u64,
}

/// Validates a `/predict` body and runs the model. `Err` is the 400 for a request the model
/// never saw; everything that reached the model is a [`Prediction`] (and counts in
/// `/metrics`), a fault included.
pub fn run<M: Model>(model: &M, body: &[u8]) -> Result<Prediction, ApiError> {
    let request: PredictionRequest = edge_api::json::parse_body(body)?;
    let input_type = parse_input_type(model, &request.input_type)?;
    if model.batches()
        && let Some(items) = batch::split(input_type, &request.data, model.max_batch())?
    {
        return Ok(run_batch(model, input_type, &items));
    }
    let started = Instant::now();
    let outcome = model.predict(input_type, &request.data);
    let elapsed = started.elapsed();
    let ms = elapsed.as_secs_f64() * 1000.0;
    let respond = |success, results, error_message| PredictionResponse {
        success,
        model_name: model.name().into(),
        results,
        computation_time_ms: ms,
        error_message,
    };
    let (answer, error) = match outcome {
        Ok(results) => (Ok(respond(true, results, None)), None),
        Err(PredictError::Invalid(e)) => return Err(e),
        Err(PredictError::Failed(m)) => (
            Ok(respond(false, serde_json::json!({}), Some(m.clone()))),
            Some(m),
        ),
        Err(PredictError::Fault(m)) => (
            Err(ApiError::new(
                ErrorCode::InternalError,
                format!("prediction failed: {m}"),
            )),
            Some(m),
        ),
    };
    Ok(Prediction {
        answer,
        elapsed,
        error,
        items: 1,
    })
}

/// A batch: every item answered in order, a failure in its own item, never the whole batch.
fn run_batch<M: Model>(
    model: &M,
    input_type: InputType,
    items: &[serde_json::Map<String, serde_json::Value>],
) -> Prediction {
    let started = Instant::now();
    let outcomes = model.predict_batch(input_type, items, started + batch::TIME_BUDGET);
    let elapsed = started.elapsed();
    let mut last_error = None;
    let mut outcomes = outcomes.into_iter();
    let answers: Vec<serde_json::Value> = (0..items.len())
        .map(|_| {
            let outcome = match outcomes.next() {
                Some(Ok(results)) => Ok(results),
                Some(Err(PredictError::Invalid(e))) => Err(e.message),
                Some(Err(PredictError::Failed(m))) => Err(m),
                Some(Err(PredictError::Fault(m))) => Err(format!("prediction failed: {m}")),
                None => Err(batch::not_computed()),
            };
            if let Err(m) = &outcome {
                last_error = Some(m.clone());
            }
            batch::item(outcome)
        })
        .collect();
    let count = answers.len();
    let (results, failed) = batch::results(answers);
    let error_message =
        (failed > 0).then(|| format!("{failed} of {count} items failed; see results.items"));
    Prediction {
        answer: Ok(PredictionResponse {
            success: true,
            model_name: model.name().into(),
            results,
            computation_time_ms: elapsed.as_secs_f64() * 1000.0,
            error_message,
        }),
        elapsed,
        error: last_error,
        items: count as u64,
    }
}

/// Runs every test example through the model; the first failure says which and why.
pub fn self_test<M: Model>(model: &M) -> Result<(), String> {
    let examples = model.test_examples().examples;
    if examples.is_empty() {
        return Err("the model has no test examples to check itself with".into());
    }
    for example in &examples {
        let req = model.example_request(example);
        let input_type = parse_input_type(model, &req.input_type)
            .map_err(|e| format!("example `{}`: {}", example.name, e.message))?;
        model
            .predict(input_type, &req.data)
            .map_err(|e| format!("example `{}` failed: {e}", example.name))?;
    }
    Ok(())
}

/// The input types the model lists, across its capabilities: read once per thread (a
/// component instance has one) and kept, since capabilities are static description and
/// building them (names, schemas, descriptions) cost more per `/predict` than parsing a
/// small molecule's SMILES.
fn listed_input_types<M: Model>(model: &M) -> Vec<InputType> {
    thread_local! {
        static LISTED: std::cell::RefCell<Option<(String, Vec<InputType>)>> =
            const { std::cell::RefCell::new(None) };
    }
    let cached = LISTED.with_borrow(|l| {
        l.as_ref()
            .filter(|(name, _)| name == model.name())
            .map(|(_, types)| types.clone())
    });
    if let Some(types) = cached {
        return types;
    }
    let mut types: Vec<InputType> = model
        .capabilities()
        .capabilities
        .iter()
        .flat_map(|c| c.input_types.iter().copied())
        .collect();
    types.dedup();
    LISTED.set(Some((model.name().to_owned(), types.clone())));
    types
}

fn parse_input_type<M: Model>(model: &M, name: &str) -> Result<InputType, ApiError> {
    let listed = listed_input_types(model);
    listed
        .iter()
        .copied()
        .find(|t| input_type_name(*t) == name)
        .ok_or_else(|| {
            let names: Vec<_> = listed.iter().map(|t| input_type_name(*t)).collect();
            ApiError::new(
                ErrorCode::UnsupportedInputType,
                format!(
                    "input_type `{name}` is not supported; this model accepts: {}",
                    names.join(", ")
                ),
            )
        })
}
