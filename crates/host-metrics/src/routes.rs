//! Bounded label values: a request's route is the template of the interface route it
//! matches (`/heartbeat/{port}`, never `/heartbeat/5103`), its error the specification's
//! `error_code`. Anything else is `other`, so no client can grow the number of series.

use edge_api::error::ErrorCode;
use edge_api::routes::{Route, find};

/// Every interface's routes, in the order they are tried.
const TABLES: [&[Route]; 3] = [
    &edge_api::model::ROUTES,
    &edge_api::registry::ROUTES,
    &edge_api::chat::ROUTES,
];

/// The label of a path that matches no interface route.
pub const OTHER: &str = "other";

/// The route template of a request for `path`, of which `path_info` is the part the app
/// port routed on (`/predict` of `/models/molprop/predict`); else `other`.
pub fn template(path: &str, path_info: Option<&str>) -> &'static str {
    match (label(path), path_info) {
        (OTHER, Some(info)) => label(info),
        (route, _) => route,
    }
}

/// The route template `path` matches, else `other`. `path` is what the component sees (on
/// the app port, the part after `/models/<name>`).
pub fn label(path: &str) -> &'static str {
    let path = match path.trim_end_matches('/') {
        "" => "/",
        p => p,
    };
    TABLES
        .iter()
        .find_map(|table| find(table, path))
        .map_or(OTHER, |r| r.path)
}

/// The template of the model interface's `/predict`, whose failures are counted apart.
pub const PREDICT: &str = "/predict";

/// The code of a prediction that ran but failed (a 200 with `success: false`, marked so by
/// the model SDK).
pub use edge_api::model::PREDICTION_FAILED;

/// Why a `/predict` answer is a failed prediction, as a bounded label, or `None` for a
/// prediction made: the error code of a 4xx or 5xx ([`error_code`]), `prediction_failed` for a
/// 200 marked so. A 401 or 403 (a missing or wrong API key) is no prediction at all: the
/// model never saw it, and a client without the key must not be able to raise the count.
pub fn failed_prediction(named: Option<&str>, status: u16) -> Option<&'static str> {
    match status {
        401 | 403 => None,
        400.. => Some(error_code(named, status)),
        _ if named == Some(PREDICTION_FAILED) => Some(PREDICTION_FAILED),
        _ => None,
    }
}

/// The error code of an error answer: the one the answer names if it is the
/// specification's, else the code its status stands for.
pub fn error_code(named: Option<&str>, status: u16) -> &'static str {
    if let Some(code) = named.and_then(ErrorCode::from_wire) {
        return code.as_str();
    }
    match status {
        400 => ErrorCode::InvalidField.as_str(),
        401 => ErrorCode::Unauthorized.as_str(),
        403 => ErrorCode::Forbidden.as_str(),
        404 => ErrorCode::NotFound.as_str(),
        405 => ErrorCode::MethodNotAllowed.as_str(),
        413 => ErrorCode::PayloadTooLarge.as_str(),
        503 => ErrorCode::NotReady.as_str(),
        504 => ErrorCode::Timeout.as_str(),
        _ if status >= 500 => ErrorCode::InternalError.as_str(),
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_their_templates() {
        assert_eq!(label("/predict"), "/predict");
        assert_eq!(label("/predict/"), "/predict");
        assert_eq!(label("/heartbeat/5103"), "/heartbeat/{port}");
        assert_eq!(label("/api/chats"), "/api/chats");
        assert_eq!(
            label("/registry/maintenance/processes"),
            "/registry/maintenance/processes"
        );
    }

    #[test]
    fn unknown_paths_are_one_label() {
        for p in ["/", "", "/x", "/predict/extra", "/heartbeat/1/2", "/%00"] {
            assert_eq!(label(p), "other", "{p}");
        }
    }

    #[test]
    fn failed_predictions_are_errors_and_marked_successes() {
        assert_eq!(failed_prediction(None, 200), None);
        assert_eq!(
            failed_prediction(Some(PREDICTION_FAILED), 200),
            Some(PREDICTION_FAILED)
        );
        assert_eq!(failed_prediction(Some("made_up"), 200), None);
        assert_eq!(
            failed_prediction(Some("invalid_json"), 400),
            Some("invalid_json")
        );
        assert_eq!(
            failed_prediction(Some("made_up"), 500),
            Some("internal_error")
        );
        assert_eq!(failed_prediction(None, 418), Some("other"));
        assert_eq!(failed_prediction(Some("unauthorized"), 401), None, "no key");
        assert_eq!(failed_prediction(None, 403), None);
        assert_eq!(template("/models/m/predict", Some("/predict")), "/predict");
        assert_eq!(template("/predict", None), "/predict");
        assert_eq!(template("/x", Some("/y")), OTHER);
        assert_eq!(label(PREDICT), PREDICT, "the model interface's route");
    }

    #[test]
    fn only_known_codes_are_labels() {
        assert_eq!(error_code(Some("timeout"), 504), "timeout");
        assert_eq!(error_code(Some("made_up"), 404), "not_found");
        assert_eq!(error_code(None, 418), "other");
        assert_eq!(error_code(None, 502), "internal_error");
    }
}
