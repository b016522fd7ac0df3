//! What a model deployment adds to its component's requests ([`Hook`]s): the API key
//! checked (`--api-key-file`, [`ApiKey`]), `POST /shutdown` served by the host (only it can
//! stop the process), and the model and version that answered.

use super::api_key::ApiKey;
use edge_api::error::ErrorCode;
use host_core::http::access_log;
use host_core::http::headers;
use host_core::http::hooks::Hook;
use host_core::http::responses::{self, HostResponse};
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use std::net::SocketAddr;
use std::sync::Arc;

/// `POST /shutdown`, answered by the host: 403 `shutdown_disabled` unless allowed
/// (`--allow-shutdown`), and then only from this machine.
pub struct ShutdownRoute {
    pub allowed: bool,
    /// Notified when an allowed shutdown request arrives.
    pub trigger: Arc<tokio::sync::Notify>,
}

impl Hook for ShutdownRoute {
    fn answer_instead(
        &self,
        req: &hyper::Request<Incoming>,
        peer: SocketAddr,
    ) -> Option<HostResponse> {
        if req.uri().path() != "/shutdown" || req.method() != hyper::Method::POST {
            return None;
        }
        if !self.allowed {
            return Some(responses::error(
                ErrorCode::ShutdownDisabled,
                "shutdown is disabled for this deployment",
            ));
        }
        if !peer.ip().is_loopback() {
            return Some(responses::error(
                ErrorCode::Forbidden,
                "shutdown is accepted from this machine only",
            ));
        }
        self.trigger.notify_one();
        let body = serde_json::json!({"success": true, "message": "shutting down gracefully"});
        Some(responses::json(200, body.to_string()))
    }
}

/// Names the version a deployment serves on every answer, in `x-model-version`, and the
/// model for the request's log line.
pub struct ModelAnswer {
    model: Arc<str>,
    version: Option<HeaderValue>,
}

impl ModelAnswer {
    /// Deployment `model` of `version` (no header for a version that cannot be a header
    /// value: never one of ours).
    pub fn new(model: &str, version: &str) -> Self {
        Self {
            model: Arc::from(model),
            version: HeaderValue::from_str(version).ok(),
        }
    }
}

impl Hook for ModelAnswer {
    fn on_answer(&self, resp: &mut HostResponse) {
        if let Some(version) = &self.version {
            resp.headers_mut()
                .insert(headers::MODEL_VERSION, version.clone());
        }
        access_log::note_model(resp, &self.model);
    }
}

/// Deployment `name`'s hooks: its API key (when the host has one), `shutdown` (when the
/// deployment serves it), then its model and version on every answer.
pub fn for_model(
    name: &str,
    version: &str,
    api_key: Option<&ApiKey>,
    shutdown: Option<ShutdownRoute>,
) -> Vec<Arc<dyn Hook>> {
    let mut hooks: Vec<Arc<dyn Hook>> = Vec::new();
    if let Some(key) = api_key {
        hooks.push(Arc::new(key.clone()));
    }
    if let Some(route) = shutdown {
        hooks.push(Arc::new(route));
    }
    hooks.push(Arc::new(ModelAnswer::new(name, version)));
    hooks
}
