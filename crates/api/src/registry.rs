//! Interface C: the port registry records (spec 2.13, 4.3; DESIGN.md "Port registry").

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
/// Last assignable model port by default (DESIGN.md).
pub const LAST_MODEL_PORT: u16 = 5999;

/// `POST /register` body. Every field is required in v1.2; `preferred_port` may be null.
/// Unknown fields are refused, as in every request body we define (docs/DECISIONS.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrationRequest {
    pub app_name: String,
    pub app_version: String,
    pub model_name: String,
    pub process_id: u32,
    /// Required like every field (spec 2.13), but may be `null` for automatic assignment.
    #[serde(deserialize_with = "present_or_null")]
    pub preferred_port: Option<u16>,
    pub reason: String,
    pub metadata: Map<String, Value>,
}

/// Deserialises an `Option` whose key must be present (a custom deserializer makes serde
/// report a missing key instead of defaulting to `None`).
fn present_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u16>, D::Error> {
    Option::<u16>::deserialize(d)
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
