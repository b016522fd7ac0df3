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
        .map_or("other", |r| r.path)
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
    fn only_known_codes_are_labels() {
        assert_eq!(error_code(Some("timeout"), 504), "timeout");
        assert_eq!(error_code(Some("made_up"), 404), "not_found");
        assert_eq!(error_code(None, 418), "other");
        assert_eq!(error_code(None, 502), "internal_error");
    }
}
