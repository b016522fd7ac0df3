//! Interface C: the port registry records (spec 2.13, 4.3; docs/DESIGN.md "Port registry").

use crate::routes::Route;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Reserved for the registry itself (spec 8).
/// Interface C (spec 4.3), and the maintenance route only `runtime-host` calls.
pub const ROUTES: [Route; 5] = [
    Route {
        path: "/register",
        methods: &["POST"],
    },
    Route {
        path: "/heartbeat/{port}",
        methods: &["POST"],
    },
    Route {
        path: "/unregister/{port}",
        methods: &["DELETE"],
    },
    Route {
        path: "/registry",
        methods: &["GET"],
    },
    Route {
        path: "/registry/maintenance/processes",
        methods: &["POST"],
    },
];

pub const REGISTRY_DEFAULT_PORT: u16 = 5000;
/// First assignable model port (spec 8).
pub const FIRST_MODEL_PORT: u16 = 5100;
/// Last assignable model port by default (docs/DESIGN.md).
pub const LAST_MODEL_PORT: u16 = 5999;

/// `POST /register` body. Every field is required in v1.2; `preferred_port` may be null.
/// Unknown fields are refused, as in every request body we define (docs/DECISIONS.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrationRequest {
    pub app_name: String,
    pub app_version: String,
    pub model_name: String,
    #[serde(deserialize_with = "whole_number")]
    pub process_id: u32,
    /// Required like every field (spec 2.13), but may be `null` for automatic assignment.
    #[serde(deserialize_with = "present_or_null")]
    pub preferred_port: Option<u16>,
    pub reason: String,
    pub metadata: Map<String, Value>,
}

/// Deserialises the preferred port, whose key must be present (a custom deserializer makes
/// serde report a missing key instead of defaulting to `None`): `null`, or a whole number
/// written any way JSON Schema's `integer` allows (`1554.0` too).
fn present_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u16>, D::Error> {
    use serde::de::Error;
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    whole(&n)
        .and_then(|u| u16::try_from(u).ok())
        .map(Some)
        .ok_or_else(|| {
            D::Error::custom(format!(
                "{n} is not a port (a whole number from 0 to 65535)"
            ))
        })
}

/// A process id written as any JSON number with no fraction: JSON Schema's `integer` (the
/// OpenAPI document's type) includes `165.0`, so the registry takes it too.
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    use serde::de::Error;
    let n = serde_json::Number::deserialize(d)?;
    whole(&n)
        .and_then(|u| u32::try_from(u).ok())
        .ok_or_else(|| {
            D::Error::custom(format!(
                "{n} is not a process id (a whole number from 0 to 4294967295)"
            ))
        })
}

/// `n` as a whole number, however it is written (`165`, `165.0`); `None` with a fraction, a
/// sign or past what a `u64` holds exactly.
fn whole(n: &serde_json::Number) -> Option<u64> {
    match (n.as_u64(), n.as_f64()) {
        (Some(u), _) => Some(u),
        (None, Some(f)) if f.fract() == 0.0 && f >= 0.0 && f <= f64::from(u32::MAX) => {
            Some(f as u64)
        }
        _ => None,
    }
}

/// `POST /register` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistrationResponse {
    pub success: bool,
    pub assigned_port: u16,
    pub registration_id: String,
    pub message: String,
    /// ISO 8601 without zone, UTC.
    pub expires_at: String,
}

/// `DELETE /unregister/{port}` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnregistrationResponse {
    pub success: bool,
    pub message: String,
    pub freed_port: u16,
}

/// `POST /heartbeat/{port}` optional body.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatRequest {
    #[serde(default)]
    pub registration_id: Option<String>,
}

/// `POST /heartbeat/{port}` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatResponse {
    pub success: bool,
    pub port: u16,
    pub last_heartbeat: String,
    pub expires_at: String,
}

/// `GET /registry` answer. Never carries a registration id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistryListing {
    pub success: bool,
    pub count: usize,
    pub registrations: Vec<RegistryEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistryEntry {
    pub port: u16,
    pub app_name: String,
    pub app_version: String,
    pub model_name: String,
    pub process_id: u32,
    pub reason: String,
    pub metadata: Map<String, Value>,
    pub registered_at: String,
    pub last_heartbeat: String,
    pub expires_at: String,
    /// Known only where a native host watches processes; null elsewhere.
    pub process_alive: Option<bool>,
}

#[cfg(test)]
mod whole_number_tests {
    use super::RegistrationRequest;

    fn with_pid(pid: &str) -> Result<RegistrationRequest, serde_json::Error> {
        serde_json::from_str(&format!(
            r#"{{"app_name": "a", "app_version": "1.2.0", "model_name": "m", "process_id": {pid},
                "preferred_port": null, "reason": "r", "metadata": {{}}}}"#
        ))
    }

    #[test]
    fn process_ids_are_whole_numbers_however_written() {
        assert_eq!(with_pid("165").unwrap().process_id, 165);
        assert_eq!(with_pid("165.0").unwrap().process_id, 165);
        assert_eq!(with_pid("1.65e2").unwrap().process_id, 165);
        for bad in ["165.5", "-1", "4294967296", "\"165\"", "1e300"] {
            assert!(with_pid(bad).is_err(), "{bad}");
        }
    }
}
