//! The endpoints of interface B, for any [`Model`].

use crate::metrics::DeploymentState;
use crate::{Model, PredictError, input_type_name};
use edge_api::model::{Health, InputType, PredictionRequest, PredictionResponse, SPEC_VERSION};
use guest_kit::http::{self, ApiRequest, DEFAULT_MAX_BODY, Response};
use guest_kit::{ApiError, ErrorCode};
use spin_sdk::http::IncomingRequest;
use std::time::Instant;

/// Serves `model` for one request. Paths are matched below the route the host matched
/// (Spin's `spin-path-info`), so a model works at `/` and under a prefix alike.
pub async fn serve<M: Model>(model: &M, req: IncomingRequest) -> Response {
    guest_kit::serve(req, DEFAULT_MAX_BODY, async |r| route(model, r)).await
}

const ROUTES: [(&str, &str); 9] = [
    ("/health", "GET"),
    ("/capabilities", "GET"),
    ("/acceptable_ranges", "GET"),
    ("/predict", "POST"),
    ("/info", "GET"),
    ("/metrics", "GET"),
    ("/citation", "GET"),
    ("/test_examples", "GET"),
    ("/shutdown", "POST"),
];

fn route<M: Model>(model: &M, req: ApiRequest) -> Result<Response, ApiError> {
    let path = req.path_info().trim_end_matches('/').to_owned();
    let Some(&(_, method)) = ROUTES.iter().find(|(p, _)| *p == path) else {
        return Err(http::no_route(&req.path));
    };
    if req.method != method {
        return Ok(http::method_not_allowed(&req.method, &path, &[method]));
    }
    match path.as_str() {
        "/health" => health(model),
        "/capabilities" => Ok(http::json(200, &model.capabilities())),
        "/acceptable_ranges" => Ok(http::json(200, &model.acceptable_ranges())),
        "/predict" => predict(model, &req),
        "/info" => Ok(http::json(200, &model.info())),
        "/metrics" => Ok(http::json(
            200,
            &DeploymentState::open(model.name())?.snapshot()?,
        )),
        "/citation" => Ok(http::json(200, &model.citation())),
        "/test_examples" => Ok(http::json(200, &model.test_examples())),
        "/shutdown" => Err(ApiError::new(
            ErrorCode::ShutdownDisabled,
            "shutdown is disabled for this deployment",
        )),
        _ => unreachable!("every route is matched above"),
    }
}

/// 200 once the model has passed its own test examples in this deployment, else 503.
fn health<M: Model>(model: &M) -> Result<Response, ApiError> {
    let state = DeploymentState::open(model.name())?;
    if !state.self_test_passed()? {
        if let Err(why) = self_test(model) {
            return Err(ApiError::new(
                ErrorCode::NotReady,
                format!("model not ready: {why}"),
            ));
        }
        state.mark_self_test_passed()?;
    }
    Ok(http::json(
        200,
        &Health {
            status: "ok".into(),
            model: model.name().into(),
            version: SPEC_VERSION.into(),
        },
    ))
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
            .map_err(|e| format!("example `{}` failed: {e:?}", example.name))?;
    }
    Ok(())
}

/// The input types the model lists, across its capabilities.
fn listed_input_types<M: Model>(model: &M) -> Vec<InputType> {
    let mut types: Vec<InputType> = model
        .capabilities()
        .capabilities
        .iter()
        .flat_map(|c| c.input_types.iter().copied())
        .collect();
    types.dedup();
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

fn predict<M: Model>(model: &M, req: &ApiRequest) -> Result<Response, ApiError> {
    let body: PredictionRequest = req.json()?;
    let input_type = parse_input_type(model, &body.input_type)?;
    let started = Instant::now();
    let outcome = model.predict(input_type, &body.data);
    let elapsed = started.elapsed();
    let ms = elapsed.as_secs_f64() * 1000.0;
    let error = match &outcome {
        Err(PredictError::Invalid(e)) => return Err(e.clone()),
        Ok(_) => None,
        Err(PredictError::Failed(m) | PredictError::Fault(m)) => Some(m.clone()),
    };
    // Metrics must never cost the caller their answer.
    match DeploymentState::open(model.name()) {
        Ok(state) => {
            if let Err(e) = state.record(elapsed.as_micros() as u64, error.as_deref()) {
                eprintln!("could not record metrics: {e}");
            }
        }
        Err(e) => eprintln!("could not record metrics: {e}"),
    }
    let (success, results, error_message) = match outcome {
        Ok(results) => (true, results, None),
        Err(PredictError::Failed(m)) => (false, serde_json::json!({}), Some(m)),
        Err(PredictError::Fault(m)) => {
            return Err(ApiError::new(
                ErrorCode::InternalError,
                format!("prediction failed: {m}"),
            ));
        }
        Err(PredictError::Invalid(_)) => unreachable!("returned above"),
    };
    Ok(http::json(
        200,
        &PredictionResponse {
            success,
            model_name: model.name().into(),
            results,
            computation_time_ms: ms,
            error_message,
        },
    ))
}
