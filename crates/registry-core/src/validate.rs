//! Checks of a registration request beyond its JSON shape (which serde already enforces).

use edge_api::error::ApiError;
use edge_api::registry::RegistrationRequest;

pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_REASON_CHARS: usize = 1000;
/// Largest `metadata` object accepted, serialised.
pub const MAX_METADATA_BYTES: usize = 16 * 1024;
/// Minimum `app_version` of a v1.2 deployment.
pub const MIN_APP_VERSION: (u64, u64, u64) = (1, 2, 0);

fn name(field: &str, value: &str) -> Result<(), ApiError> {
    if value.trim().is_empty() {
        return Err(ApiError::invalid(field, "must not be empty"));
    }
    if value.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::invalid(
            field,
            format!("must be at most {MAX_NAME_CHARS} characters"),
        ));
    }
    Ok(())
}

/// `MAJOR.MINOR.PATCH` (more parts or a suffix such as `-rc1` are ignored).
pub fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let core = v.trim().split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().unwrap_or(Some(0))?;
    let patch = parts.next().unwrap_or(Some(0))?;
    Some((major, minor, patch))
}

/// Validates `req`; returns a warning for the response `message` when the request is
/// accepted but not what v1.2 asks for (an `app_version` below 1.2.0).
pub fn registration(req: &RegistrationRequest) -> Result<Option<String>, ApiError> {
    name("app_name", &req.app_name)?;
    name("model_name", &req.model_name)?;
    name("app_version", &req.app_version)?;
    if req.process_id == 0 {
        return Err(ApiError::invalid(
            "process_id",
            "must be an operating-system process id (1 or more)",
        ));
    }
    if req.preferred_port == Some(0) {
        return Err(ApiError::invalid(
            "preferred_port",
            "must be a port number (1-65535) or null",
        ));
    }
    if req.reason.chars().count() > MAX_REASON_CHARS {
        return Err(ApiError::invalid(
            "reason",
            format!("must be at most {MAX_REASON_CHARS} characters"),
        ));
    }
    let size = serde_json::to_vec(&req.metadata)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > MAX_METADATA_BYTES {
        return Err(ApiError::invalid(
            "metadata",
            format!("is {size} bytes; at most {MAX_METADATA_BYTES} bytes are accepted"),
        ));
    }
    if let Some(t) = req.metadata.get("model_type")
        && !t.is_string()
    {
        return Err(ApiError::invalid("metadata.model_type", "must be a string"));
    }
    if let Some(c) = req.metadata.get("capabilities")
        && !c
            .as_array()
            .is_some_and(|a| a.iter().all(|v| v.is_string()))
    {
        return Err(ApiError::invalid(
            "metadata.capabilities",
            "must be an array of strings",
        ));
    }
    Ok(match parse_version(&req.app_version) {
        Some(v) if v >= MIN_APP_VERSION => None,
        Some(_) => Some(format!(
            "warning: app_version {} is below 1.2.0; v1.2 deployments should send 1.2.0 or higher",
            req.app_version
        )),
        None => Some(format!(
            "warning: app_version `{}` is not a version number; 1.2.0 or higher expected",
            req.app_version
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use edge_api::error::ErrorCode;
    use serde_json::json;

    fn req(v: serde_json::Value) -> Result<RegistrationRequest, ApiError> {
        edge_api::json::parse_body(v.to_string().as_bytes())
    }

    fn good() -> serde_json::Value {
        json!({"app_name": "molprop", "app_version": "1.2.0", "model_name": "molprop",
               "process_id": 42, "preferred_port": null, "reason": "serving",
               "metadata": {"model_type": "descriptor", "capabilities": ["regression"]}})
    }

    #[test]
    fn every_field_is_required_and_named() {
        for field in [
            "app_name",
            "app_version",
            "model_name",
            "process_id",
            "preferred_port",
            "reason",
            "metadata",
        ] {
            let mut v = good();
            v.as_object_mut().unwrap().remove(field);
            let e = req(v).unwrap_err();
            assert_eq!(e.code, ErrorCode::MissingField, "{field}");
            assert!(e.message.contains(field), "{}", e.message);
        }
    }

    #[test]
    fn wrong_types_and_values_are_invalid_fields() {
        for (field, value) in [
            ("process_id", json!("42")),
            ("process_id", json!(-1)),
            ("preferred_port", json!(70000)),
            ("preferred_port", json!("5100")),
            ("metadata", json!([])),
        ] {
            let mut v = good();
            v[field] = value;
            let e = req(v).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidField, "{field}");
            assert!(e.message.contains(field), "{}", e.message);
        }
        for (field, value) in [
            ("process_id", json!(0)),
            ("preferred_port", json!(0)),
            ("app_name", json!("  ")),
            ("metadata", json!({"model_type": 3})),
            ("metadata", json!({"capabilities": [1]})),
            ("metadata", json!({"blob": "x".repeat(20_000)})),
        ] {
            let mut v = good();
            v[field] = value;
            let e = registration(&req(v).unwrap()).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidField, "{field}");
        }
    }

    #[test]
    fn old_versions_are_accepted_with_a_warning() {
        assert_eq!(registration(&req(good()).unwrap()).unwrap(), None);
        let mut v = good();
        v["app_version"] = json!("1.1.0");
        assert!(
            registration(&req(v).unwrap())
                .unwrap()
                .unwrap()
                .contains("below 1.2.0")
        );
        assert_eq!(parse_version("1.10.0-rc1"), Some((1, 10, 0)));
        assert_eq!(parse_version("2"), Some((2, 0, 0)));
        assert_eq!(parse_version("x.y"), None);
    }
}
