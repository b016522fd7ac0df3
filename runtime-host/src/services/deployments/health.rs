//! `GET /health` on the stack's app port, for load balancers: 200 `{"status":"ok"}` only while
//! every configured model serves; 503 `not_ready` naming each model that does not, and why.
//! A host whose model failed to compile or pass its self-test used to say "ok" and stay in
//! rotation, answering that model's requests 404 while the other hosts served them (issue
//! 56, item 11). `--health-ignores-failed-models` gives back the old answer, for a host
//! whose models are optional.
//!
//! It reads no store on purpose: with Redis away every host is equally unable to write, and
//! clients should get the store's own 503 `store_unavailable` from a host rather than a load
//! balancer's "no server" page. Once a stop begins the listener closes, and checks fail.
//! Other methods go on to the app's routes: a `POST /health` meant for a model gets the
//! console's 404 naming the models, as before.

use crate::services::deployments::live::LiveSet;
use edge_api::error::ErrorCode;
use host_core::http::headers::ERROR_CODE;
use host_core::http::responses::{self, HostResponse};
use host_core::http::router::HostRoute;
use hyper::body::Incoming;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The health route, answered by the host.
pub struct HealthRoute {
    /// The deployments the stack manages (one per model): those `failed` fail the check.
    pub live: Arc<LiveSet>,
    /// Models that did not start and that `live` does not hold (with `--copies` above 1),
    /// each with why.
    pub failed_at_start: Vec<(String, String)>,
    /// `--health-ignores-failed-models`.
    pub ignore_failed: bool,
    /// Models whose failure does not count (defaults nobody asked for).
    pub optional: Vec<String>,
}

impl HealthRoute {
    /// Every configured model not serving, with why, unless `--health-ignores-failed-models`
    /// (the protocol's `/v2/health/ready` counts the same ones: `super::oip`).
    pub async fn counted_failures(&self) -> Vec<(String, String)> {
        if self.ignore_failed {
            return Vec::new();
        }
        self.failing().await
    }

    /// Every configured model not serving, with why.
    async fn failing(&self) -> Vec<(String, String)> {
        let mut failing = self.failed_at_start.clone();
        failing.extend(self.live.failed().await);
        failing.retain(|(name, _)| !self.optional.contains(name));
        failing
    }
}

impl HostRoute for HealthRoute {
    fn answer(
        &self,
        _req: hyper::Request<Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        Box::pin(async move {
            let failing = self.counted_failures().await;
            if failing.is_empty() {
                return responses::json(200, r#"{"status":"ok"}"#);
            }
            unhealthy(&failing)
        })
    }

    fn takes(&self, method: &hyper::Method) -> bool {
        method == hyper::Method::GET || method == hyper::Method::HEAD
    }
}

/// The 503 naming each model not serving (the usual error body, plus the list).
fn unhealthy(failing: &[(String, String)]) -> HostResponse {
    let names: Vec<&str> = failing.iter().map(|(n, _)| n.as_str()).collect();
    let message = format!(
        "model(s) not serving: {}; this host is not ready (start it with \
         --health-ignores-failed-models to report ready anyway)",
        names.join(", ")
    );
    let models: Vec<serde_json::Value> = failing
        .iter()
        .map(|(name, why)| serde_json::json!({ "name": name, "why": why }))
        .collect();
    let code = ErrorCode::NotReady;
    let body = serde_json::json!({
        "success": false,
        "status": "unavailable",
        "error": message,
        "error_code": code.as_str(),
        "failed_models": models,
    });
    let mut resp = responses::json(code.status(), body.to_string());
    resp.headers_mut().insert(
        ERROR_CODE,
        hyper::header::HeaderValue::from_static(code.as_str()),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn the_answer_names_each_model_not_serving() {
        let resp = unhealthy(&[("iris".into(), "self-test failed".into())]);
        assert_eq!(resp.status(), 503);
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error_code"], "not_ready");
        assert_eq!(v["failed_models"][0]["name"], "iris");
        assert!(v["error"].as_str().unwrap().contains("iris"), "{v}");
    }
}
