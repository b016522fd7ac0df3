//! What a deployment knows of itself, for both protocols a model answers (v1.2 in
//! [`crate::routes`], the Open Inference Protocol in [`crate::oip`]): whether it is ready,
//! which version it serves, and the predictions it counts in `/metrics`.

use crate::metrics::DeploymentState;
use crate::{Model, predict};
use guest_kit::{ApiError, ErrorCode};

/// `Ok` once the model has passed its own test examples in this deployment (what makes
/// `/health` 200); else why not, as the 503 to answer.
pub(crate) fn ready<M: Model>(model: &M) -> Result<(), ApiError> {
    if crate::snapshot::self_tested() {
        return Ok(());
    }
    let state = DeploymentState::current(model.name())?;
    if !state.self_test_passed()? {
        if let Err(why) = predict::self_test(model) {
            return Err(ApiError::new(
                ErrorCode::NotReady,
                format!("model not ready: {why}"),
            ));
        }
        state.mark_self_test_passed()?;
    }
    Ok(())
}

/// The version the host says it deployed (variable `model_version`), if it says one; a
/// model that names its own version (an ONNX manifest's `[info] model_version`) reports that.
pub(crate) fn version() -> Option<String> {
    guest_kit::config::variable("model_version")
        .ok()
        .flatten()
        .filter(|v| !v.is_empty())
}

/// Counts predictions in `/metrics`; a failure to count never costs the caller their answer.
pub(crate) fn record(model: &str, items: u64, elapsed: std::time::Duration, error: Option<&str>) {
    let micros = elapsed.as_micros() as u64;
    match DeploymentState::current(model) {
        Ok(state) => {
            if let Err(e) = state.record(items, micros, error) {
                eprintln!("could not record metrics: {e}");
            }
        }
        Err(e) => eprintln!("could not record metrics: {e}"),
    }
}
