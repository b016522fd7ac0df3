//! Serving the host's metrics (`host_core::metrics`) to Prometheus: `GET /metrics` on the
//! app port of `up` ([`MetricsRoute`]), and on the listener of `--metrics-listen` for
//! `serve`, `model` and `registry` ([`listen`]).
//!
//! A scrape first reads what is not kept current on the request path: each deployment's
//! instance pool, and the predictions each model counts in its own `/metrics` (one
//! in-process call per deployment, within [`READ_BUDGET`]).

use edge_api::error::ErrorCode;
use host_core::http::listener::{Handler, Listening};
use host_core::http::responses::{self, HostResponse};
use host_core::http::router::HostRoute;
use host_core::http::server::ComponentServer;
use host_core::metrics::{self, Deployment};
use hyper::body::Incoming;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// The path Prometheus scrapes.
pub const PATH: &str = "/metrics";

/// The content type of the OpenMetrics text format, which Prometheus asks for first.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long a scrape waits for one model's own `/metrics`.
const READ_BUDGET: Duration = Duration::from_secs(2);

/// The deployments of this process, as long as they exist.
static WATCHED: Mutex<Vec<(Deployment, Weak<ComponentServer>)>> = Mutex::new(Vec::new());

/// Reports `server`'s pool and predictions in every scrape while it exists.
pub fn watch(server: &Arc<ComponentServer>) {
    let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    watched.push((server.metrics().clone(), Arc::downgrade(server)));
}

/// The servers whose figures a scrape reads: the newest alive of each deployment. During
/// an upgrade the old version drains beside the new one under the same name; when both
/// wrote the same series they flipped between the two pools. When a server ends, its
/// deployment's series are dropped (its successor's are written afresh by this scrape: a
/// counter reset, as for any restarted process).
fn alive() -> Vec<Arc<ComponentServer>> {
    let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    let (current, ended) = newest_of_each(&mut watched);
    for deployment in ended {
        deployment.forget();
    }
    current
}

/// Of `watched` (in the order they started), the newest alive server of each deployment,
/// and the deployments of the servers that ended (whose entries are removed).
fn newest_of_each<T>(watched: &mut Vec<(Deployment, Weak<T>)>) -> (Vec<Arc<T>>, Vec<Deployment>) {
    let mut ended: Vec<Deployment> = Vec::new();
    watched.retain(|(deployment, weak)| {
        let alive = weak.strong_count() > 0;
        if !alive && !ended.contains(deployment) {
            ended.push(deployment.clone());
        }
        alive
    });
    let mut seen: Vec<&Deployment> = Vec::new();
    let mut current = Vec::new();
    for (deployment, weak) in watched.iter().rev() {
        if seen.contains(&deployment) {
            continue;
        }
        if let Some(server) = weak.upgrade() {
            seen.push(deployment);
            current.push(server);
        }
    }
    (current, ended)
}

/// Reads the figures kept elsewhere, then writes every metric.
pub async fn scrape() -> String {
    let mut reads = tokio::task::JoinSet::new();
    for server in alive() {
        reads.spawn(async move {
            let m = server.metrics();
            m.pool(&server.pool_stats());
            if let Some(served) = predictions_of(&server).await {
                m.predictions(served);
            }
        });
    }
    reads.join_all().await;
    metrics::global().encode()
}

/// `requests_served` of the deployment's own `/metrics`, when it is a v1.2 model.
async fn predictions_of(server: &ComponentServer) -> Option<u64> {
    let (status, body) = server
        .call_within("GET", "/metrics", READ_BUDGET)
        .await
        .ok()?;
    if status != 200 {
        return None;
    }
    let metrics: serde_json::Value = serde_json::from_slice(&body).ok()?;
    metrics.get("requests_served")?.as_u64()
}

/// The answer to a request for the metrics.
pub async fn answer(method: &hyper::Method) -> HostResponse {
    if let Some(refused) = responses::unless_get(method, PATH) {
        return refused;
    }
    hyper::Response::builder()
        .status(200)
        .header(hyper::header::CONTENT_TYPE, CONTENT_TYPE)
        .header(hyper::header::CACHE_CONTROL, "no-store")
        .body(responses::body_from(scrape().await))
        .expect("static response parts are valid")
}

/// The metrics on an app's port, at [`PATH`].
pub struct MetricsRoute;

impl HostRoute for MetricsRoute {
    fn answer(
        &self,
        req: hyper::Request<Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        Box::pin(async move { answer(req.method()).await })
    }
}

/// The listener of `--metrics-listen`: the metrics at [`PATH`], nothing else.
pub struct MetricsOnly;

impl Handler for MetricsOnly {
    async fn handle(self: Arc<Self>, req: hyper::Request<Incoming>, _: SocketAddr) -> HostResponse {
        if req.uri().path() == PATH {
            answer(req.method()).await
        } else {
            responses::error(
                ErrorCode::NotFound,
                format!(
                    "no route for {}: this listener serves {PATH} only",
                    req.uri().path()
                ),
            )
        }
    }
}

/// Serves [`MetricsOnly`] on `addr` (`--metrics-listen`, when given) until `stop`.
pub async fn listen(
    addr: Option<SocketAddr>,
    stop: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let Some(addr) = addr else { return Ok(()) };
    let listening = Listening::bind(addr, "--metrics-listen").await?;
    println!("metrics on http://{}{PATH}", listening.addr());
    let metrics = Arc::new(MetricsOnly);
    tokio::spawn(listening.serve(metrics, stop, Duration::from_secs(1)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_reads_the_newest_server_of_each_deployment() {
        let (old, new, other) = (Arc::new(1), Arc::new(2), Arc::new(3));
        let (a, b) = (Deployment::new("a"), Deployment::new("b"));
        let mut watched = vec![
            (a.clone(), Arc::downgrade(&old)),
            (b.clone(), Arc::downgrade(&other)),
            (a.clone(), Arc::downgrade(&new)),
        ];
        // Which servers a scrape reads, and which deployments' series it writes afresh.
        let mut scrape = || {
            let (current, ended) = newest_of_each(&mut watched);
            (current.iter().map(|s| **s).collect::<Vec<_>>(), ended)
        };
        // An upgrade of `a` drains its old server beside the new one: the new one counts.
        assert_eq!(scrape(), (vec![2, 3], vec![]));
        // The old one ends: `a`'s series are written afresh from the new one.
        drop(old);
        assert_eq!(scrape(), (vec![2, 3], vec![a.clone()]));
        // Nothing changed: nothing ends.
        assert_eq!(scrape(), (vec![2, 3], vec![]));
        // `a` removed altogether.
        drop(new);
        assert_eq!(scrape(), (vec![3], vec![a]));
        assert_eq!(watched.len(), 1);
    }
}
