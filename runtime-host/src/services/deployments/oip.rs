//! The Open Inference Protocol's server-level routes on the stack's app port: `GET /v2`,
//! `GET /v2/health/live` and `GET /v2/health/ready`, answered by the host for the whole app
//! (a model's own port, or its base URL under Spin, answers them for that model alone).
//! Each model's `/v2/models/<name>/...` is routed to the model itself (`services::app`); this
//! route takes only what no model claims, so an unknown model gets the protocol's 404
//! `{"error": ...}` rather than the console's page.

use crate::services::deployments::health::HealthRoute;
use crate::services::deployments::live::Status;
use host_core::http::responses::{self, HostResponse};
use host_core::http::router::HostRoute;
use hyper::body::Incoming;
use serde_json::{Value, json};
use service_client::HttpClient;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// Where the route sits on the app port (below every model's `/v2/models/<name>/...`).
pub const ROUTE: &str = "/v2/...";
/// What the server calls itself in `GET /v2`: the same name and version as each model's own
/// `GET /v2` (the model SDK's), so a client sees one server whichever URL it was given.
const SERVER_NAME: &str = "lightweight-model-runtime";
const EXTENSIONS: &[&str] = &["binary_tensor_data"];
/// How long one model's `/health` may take before the app counts it not ready (the
/// specification asks for under 100 ms; a load balancer's probe should not hang on one).
const HEALTH_DEADLINE: Duration = Duration::from_secs(2);

/// The protocol's server routes, answered by the host.
pub struct OipRoute {
    /// The stack's `/health`: which models failed to start (they make the app not ready either).
    health: Arc<HealthRoute>,
    client: Arc<HttpClient>,
}

impl OipRoute {
    pub fn new(health: Arc<HealthRoute>) -> Self {
        Self {
            health,
            client: Arc::new(HttpClient::new(HEALTH_DEADLINE)),
        }
    }

    /// Every deployed model's problem, if any: failed to start, still starting, or its v1.2
    /// `/health` not 200.
    async fn not_ready(&self) -> Vec<String> {
        let mut problems: Vec<String> = self
            .health
            .counted_failures()
            .await
            .into_iter()
            .map(|(name, why)| format!("model '{name}' is not serving: {why}"))
            .collect();
        let mut serving = Vec::new();
        for listed in self.health.live.list().await {
            match listed.url.filter(|_| listed.status != Status::Failed) {
                Some(url) => serving.push((listed.name, url)),
                None if listed.status == Status::Starting => {
                    problems.push(format!("model '{}' is still starting", listed.name));
                }
                None => {}
            }
        }
        problems.extend(probe_all(&self.client, serving).await);
        problems
    }

    /// The models the app routes by name, for the 404's text.
    async fn served(&self) -> Vec<String> {
        let listed = self.health.live.list().await;
        listed
            .into_iter()
            .filter(|l| l.url.is_some() && l.status != Status::Failed)
            .map(|l| l.name)
            .collect()
    }

    async fn respond(&self, method: &hyper::Method, path: &str) -> HostResponse {
        let path = path.trim_end_matches('/');
        let reads = matches!(path, "/v2" | "/v2/health/live" | "/v2/health/ready");
        if reads && method != hyper::Method::GET && method != hyper::Method::HEAD {
            let mut resp = error(
                405,
                format!("{method} is not allowed on {path}; allowed: GET"),
            );
            resp.headers_mut().insert(
                hyper::header::ALLOW,
                hyper::header::HeaderValue::from_static("GET"),
            );
            return resp;
        }
        match path {
            "/v2" => answer(
                200,
                &json!({
                    "name": SERVER_NAME,
                    "version": env!("CARGO_PKG_VERSION"),
                    "extensions": EXTENSIONS,
                }),
            ),
            "/v2/health/live" => answer(200, &json!({"live": true})),
            "/v2/health/ready" => {
                let problems = self.not_ready().await;
                if problems.is_empty() {
                    answer(200, &json!({"ready": true}))
                } else {
                    // The protocol: a 4xx says not ready.
                    answer(400, &json!({"ready": false, "error": problems.join("; ")}))
                }
            }
            _ => match path.strip_prefix("/v2/models/") {
                Some(rest) => {
                    let name = rest.split('/').next().unwrap_or_default();
                    let served = self.served().await;
                    error(
                        404,
                        format!(
                            "unknown model '{name}'; this app serves: {}",
                            served.join(", ")
                        ),
                    )
                }
                None => error(404, format!("no route for {path}")),
            },
        }
    }
}

/// Each model's (name, base URL) `/health` problem, asked of all at once: one after another,
/// a probe would wait up to [`HEALTH_DEADLINE`] for each hung model, longer than a load
/// balancer waits for the answer. In the order given.
async fn probe_all(client: &Arc<HttpClient>, models: Vec<(String, String)>) -> Vec<String> {
    let mut probes = tokio::task::JoinSet::new();
    for (i, (name, url)) in models.into_iter().enumerate() {
        let client = client.clone();
        probes.spawn(async move {
            let url = format!("{url}/health");
            let problem = match client.send(hyper::Method::GET, &url, None, None).await {
                Ok(r) if r.status == 200 => None,
                Ok(r) => Some(format!(
                    "model '{name}': GET /health answered {}: {}",
                    r.status,
                    r.error_text()
                )),
                Err(e) => Some(format!("model '{name}': {e:#}")),
            };
            (i, problem)
        });
    }
    let mut found = probes.join_all().await;
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().filter_map(|(_, p)| p).collect()
}

fn answer(status: u16, value: &Value) -> HostResponse {
    responses::json(status, value.to_string())
}

/// The protocol's error body: `{"error": "..."}`.
fn error(status: u16, message: String) -> HostResponse {
    answer(status, &json!({ "error": message }))
}

impl HostRoute for OipRoute {
    fn answer(
        &self,
        req: hyper::Request<Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        Box::pin(async move { self.respond(req.method(), req.uri().path()).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A model that takes the connection and never answers.
    async fn hung() -> (String, tokio::net::TcpListener) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        (
            format!("http://{}", listener.local_addr().unwrap()),
            listener,
        )
    }

    #[tokio::test]
    async fn hung_models_are_probed_at_once_and_named_in_order() {
        let deadline = Duration::from_millis(400);
        let client = Arc::new(HttpClient::new(deadline));
        let mut models = Vec::new();
        let mut held = Vec::new();
        for name in ["a", "b", "c", "d"] {
            let (url, listener) = hung().await;
            models.push((name.to_owned(), url));
            held.push(listener);
        }
        let started = Instant::now();
        let problems = probe_all(&client, models).await;
        // One after another, four hung models would take four deadlines.
        assert!(started.elapsed() < deadline * 2, "{:?}", started.elapsed());
        let named: Vec<&str> = problems.iter().map(|p| &p[7..8]).collect();
        assert_eq!(named, ["a", "b", "c", "d"], "{problems:?}");
    }
}
