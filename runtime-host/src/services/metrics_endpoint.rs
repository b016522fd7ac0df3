//! Serving the host's metrics (`host_core::metrics`) to Prometheus: `GET /metrics` on the
//! app port of `up` ([`MetricsRoute`]), and on the listener of `--metrics-listen` for
//! `serve`, `model` and `registry` ([`listen`]).
//!
//! A scrape first reads what is not kept current on the request path: each deployment's
//! instance pool, and the predictions each model counts in its own `/metrics` (one
//! in-process call per deployment, within [`READ_BUDGET`]).

use edge_api::error::ErrorCode;
use host_core::http::listener::{Handler, PortBinding};
use host_core::http::responses::{self, HostResponse};
use host_core::http::router::HostRoute;
use host_core::http::server::ComponentServer;
use host_core::metrics::{self, Deployment, PoolFigures};
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

/// The servers alive, by deployment, newest first. During an upgrade the old version drains
/// beside the new one under the same name: a scrape adds their pools up and reads the
/// predictions of the newest (the old pools written over each other before). When a server
/// ends, its deployment's series are dropped and written afresh from what remains (a
/// counter reset, as for any restarted process).
fn alive() -> Vec<Vec<Arc<ComponentServer>>> {
    let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    let (deployments, ended) = by_deployment(&mut watched);
    for deployment in ended {
        deployment.forget();
    }
    deployments
}

/// Of `watched` (in the order they started), the servers alive grouped by deployment,
/// newest first in each group, and the deployments of the servers that ended (whose
/// entries are removed).
fn by_deployment<T>(
    watched: &mut Vec<(Deployment, Weak<T>)>,
) -> (Vec<Vec<Arc<T>>>, Vec<Deployment>) {
    let mut ended: Vec<Deployment> = Vec::new();
    watched.retain(|(deployment, weak)| {
        let alive = weak.strong_count() > 0;
        if !alive && !ended.contains(deployment) {
            ended.push(deployment.clone());
        }
        alive
    });
    let mut groups: Vec<(&Deployment, Vec<Arc<T>>)> = Vec::new();
    for (deployment, weak) in watched.iter().rev() {
        let Some(server) = weak.upgrade() else {
            continue;
        };
        match groups.iter_mut().find(|(d, _)| *d == deployment) {
            Some((_, servers)) => servers.push(server),
            None => groups.push((deployment, vec![server])),
        }
    }
    (groups.into_iter().map(|(_, s)| s).collect(), ended)
}

/// Reads the figures kept elsewhere, then writes every metric.
pub async fn scrape() -> String {
    let mut reads = tokio::task::JoinSet::new();
    for servers in alive() {
        reads.spawn(async move {
            let newest = &servers[0];
            let pool = servers
                .iter()
                .map(|s| s.pool_stats())
                .reduce(PoolFigures::with_draining)
                .expect("a deployment's group has a server");
            let m = newest.metrics();
            m.pool(&pool);
            if let Some(served) = predictions_of(newest).await {
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
    let listening = PortBinding::bind(addr, "--metrics-listen").await?;
    println!("metrics on http://{}{PATH}", listening.addr());
    let metrics = Arc::new(MetricsOnly);
    tokio::spawn(listening.serve(metrics, stop, Duration::from_secs(1)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_groups_the_servers_of_a_deployment_newest_first() {
        let (old, new, other) = (Arc::new(1), Arc::new(2), Arc::new(3));
        let (a, b) = (Deployment::new("a"), Deployment::new("b"));
        let mut watched = vec![
            (a.clone(), Arc::downgrade(&old)),
            (b.clone(), Arc::downgrade(&other)),
            (a.clone(), Arc::downgrade(&new)),
        ];
        // Which servers a scrape reads, and which deployments' series it writes afresh.
        let mut scrape = || {
            let (groups, ended) = by_deployment(&mut watched);
            let groups: Vec<Vec<i32>> = groups
                .iter()
                .map(|g| g.iter().map(|s| **s).collect())
                .collect();
            (groups, ended)
        };
        // An upgrade of `a` drains its old server beside the new one: both count, newest first.
        assert_eq!(scrape(), (vec![vec![2, 1], vec![3]], vec![]));
        // The old one ends: `a`'s series are written afresh from the new one.
        drop(old);
        assert_eq!(scrape(), (vec![vec![2], vec![3]], vec![a.clone()]));
        // Nothing changed: nothing ends.
        assert_eq!(scrape(), (vec![vec![2], vec![3]], vec![]));
        // `a` removed altogether.
        drop(new);
        assert_eq!(scrape(), (vec![vec![3]], vec![a]));
        assert_eq!(watched.len(), 1);
    }
}
