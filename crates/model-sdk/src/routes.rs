//! The endpoints of interface B, for any [`Model`].

use crate::metrics::DeploymentState;
use crate::{Model, predict};
use edge_api::model::{Health, SPEC_VERSION};
use guest_kit::http::{self, ApiRequest, DEFAULT_MAX_BODY, Response};
use guest_kit::{ApiError, ErrorCode};
use spin_sdk::http::IncomingRequest;

/// Serves `model` for one request. Paths are matched below the route the host matched
/// (Spin's `spin-path-info`), so a model works at `/` and under a prefix alike.
pub async fn serve<M: Model>(model: &M, req: IncomingRequest) -> Response {
    let max_body = model.max_body().max(DEFAULT_MAX_BODY);
    guest_kit::serve(req, max_body, async |r| route(model, r)).await
}

/// Serves a model that could not be loaded (a bad model directory, say): every endpoint of
/// interface B answers 503 `not_ready` with `reason`, so `/health` tells the operator what to
/// fix; unknown paths still get 404 and wrong methods 405.
pub async fn serve_unavailable(reason: &str, req: IncomingRequest) -> Response {
    guest_kit::serve(req, DEFAULT_MAX_BODY, async |r| {
        if let Some((path, _)) = crate::oip::path(&r) {
            return Ok(crate::oip::serve_unavailable(reason, &r, &path));
        }
        let path = r.path_info().trim_end_matches('/').to_owned();
        match http::route_for(&edge_api::model::ROUTES, &r.method, &path) {
            Ok(_) => Err(ApiError::new(
                ErrorCode::NotReady,
                format!("model not ready: {reason}"),
            )),
            Err(answer) => answer,
        }
    })
    .await
}

fn route<M: Model>(model: &M, req: ApiRequest) -> Result<Response, ApiError> {
    if let Some((path, by_name)) = crate::oip::path(&req) {
        return Ok(crate::oip::serve(model, &req, &path, by_name));
    }
    let path = req.path_info().trim_end_matches('/');
    let template = match http::route_for(&edge_api::model::ROUTES, &req.method, path) {
        Ok(t) => t,
        Err(answer) => return answer,
    };
    match template {
        "/health" => health(model),
        "/capabilities" => Ok(http::json(200, &model.capabilities())),
        "/acceptable_ranges" => Ok(http::json(200, &model.acceptable_ranges())),
        "/predict" => predict(model, &req),
        "/info" => {
            let mut info = model.info();
            info.model_version = info.model_version.or_else(crate::deployment::version);
            Ok(http::json(200, &info))
        }
        "/metrics" => Ok(http::json(
            200,
            &DeploymentState::current(model.name())?.snapshot()?,
        )),
        "/citation" => Ok(http::json(200, &model.citation())),
        "/test_examples" => Ok(http::json(200, &model.test_examples())),
        "/openapi.json" => Ok(http::json(200, &crate::openapi::document(model))),
        "/evidence" => match model.evidence() {
            Some(Ok(evidence)) => Ok(http::json(200, &evidence)),
            Some(Err(why)) => Err(ApiError::internal(format!(
                "the model's evidence could not be computed: {why}"
            ))),
            None => Err(ApiError::new(
                ErrorCode::NotFound,
                format!("{} publishes no evidence of its quality", model.name()),
            )),
        },
        "/shutdown" => Err(ApiError::new(
            ErrorCode::ShutdownDisabled,
            "shutdown is disabled for this deployment",
        )),
        _ => Err(http::unhandled_route(path)),
    }
}

/// 200 once the model has passed its own test examples in this deployment, else 503. A
/// snapshot whose model passed them before it was taken ([`crate::snapshot::self_tested`])
/// answers without the store; otherwise the store remembers a pass. The healthy answer names
/// the model and its versions, which do not change within a deployment: it is built once per
/// instance, not on every poll.
fn health<M: Model>(model: &M) -> Result<Response, ApiError> {
    thread_local! {
        static HEALTHY: std::cell::OnceCell<Vec<u8>> = const { std::cell::OnceCell::new() };
    }
    crate::deployment::ready(model)?;
    let body = HEALTHY.with(|healthy| {
        if let Some(body) = healthy.get() {
            return Ok(body.clone());
        }
        let body = serde_json::to_vec(&Health {
            status: "ok".into(),
            model: model.name().into(),
            version: SPEC_VERSION.into(),
            model_version: model
                .info()
                .model_version
                .or_else(crate::deployment::version),
        })
        .map_err(http::unserialisable)?;
        Ok::<_, ApiError>(healthy.get_or_init(|| body).clone())
    })?;
    Ok(http::json_bytes(200, body))
}

fn predict<M: Model>(model: &M, req: &ApiRequest) -> Result<Response, ApiError> {
    let prediction = predict::run(model, &req.body)?;
    crate::deployment::record(
        model.name(),
        prediction.items,
        prediction.elapsed,
        prediction.error.as_deref(),
    );
    let answer = prediction.answer?;
    let mut resp = http::json(200, &answer);
    if !answer.success {
        // So the host counts it among failed predictions without reading the body.
        resp.set_header(
            edge_api::error::ERROR_CODE_HEADER,
            edge_api::model::PREDICTION_FAILED,
        );
    }
    Ok(resp)
}
