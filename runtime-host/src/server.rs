//! Serving one component: each request on a warm instance ([`InstancePool`]),
//! with the request's limits enforced and every failure answered with the JSON error body.

use crate::caller::{self, ConnInfo};
use crate::instances::{Failure, InstancePool};
use crate::limits::Limits;
use crate::metrics::Deployment;
use crate::request_log;
use crate::responses::{self, HostResponse, classify_failure, internal, timeout};
use crate::state::{Grants, InstanceState};
use anyhow::Result;
use bytes::Bytes;
use edge_api::error::ErrorCode;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// The header naming the version of the model that answered (deployments of `up`).
pub const MODEL_VERSION_HEADER: &str = "x-model-version";

/// How much of an oversized body is read and discarded so the client gets a clean 413.
const MAX_DRAIN: u64 = 64 << 20;

/// `POST /shutdown` served by the host itself (only it can stop the process).
pub struct ShutdownRoute {
    /// `--allow-shutdown`; otherwise the route answers 403 `shutdown_disabled`.
    pub allowed: bool,
    /// Notified when an allowed shutdown request arrives.
    pub trigger: Arc<tokio::sync::Notify>,
}

/// Everything needed to answer requests for one component.
pub struct ComponentServer {
    pool: Arc<InstancePool>,
    limits: Limits,
    slots: Arc<Semaphore>,
    shutdown: Option<ShutdownRoute>,
    /// Set for the registry: tell it who calls (see [`crate::caller`]), vouched for by this.
    caller_token: std::sync::OnceLock<String>,
    /// The label this deployment's requests are counted under.
    metrics: Deployment,
    /// The version it serves (set by `up`), sent as `x-model-version` on every answer.
    version: std::sync::OnceLock<hyper::header::HeaderValue>,
}

impl ComponentServer {
    /// A server of `pre`, its requests counted as deployment `name`.
    pub fn new(name: &str, pre: ProxyPre<InstanceState>, grants: Grants, limits: Limits) -> Self {
        let slots = Arc::new(Semaphore::new(limits.max_concurrency));
        Self {
            pool: InstancePool::new(pre, grants, limits.clone()),
            limits,
            slots,
            shutdown: None,
            caller_token: std::sync::OnceLock::new(),
            metrics: Deployment::new(name),
            version: std::sync::OnceLock::new(),
        }
    }

    /// Names the version this server serves (once, before it serves).
    pub fn set_version(&self, version: &str) {
        if let Ok(v) = hyper::header::HeaderValue::from_str(version) {
            let _ = self.version.set(v);
        }
    }

    /// The name this deployment's metrics carry.
    pub fn metrics(&self) -> &Deployment {
        &self.metrics
    }

    /// The instance pool's figures, for the metrics.
    pub fn pool_stats(&self) -> crate::instances::PoolStats {
        self.pool.stats()
    }

    /// Serves `POST /shutdown` in the host instead of the component.
    pub fn with_shutdown_route(mut self, route: ShutdownRoute) -> Self {
        self.shutdown = Some(route);
        self
    }

    /// Tells the component who calls each state-changing request, in the
    /// [`crate::caller::HEADER`] header, vouched for by `token` (set once, before serving).
    pub fn identify_callers(&self, token: String) {
        let _ = self.caller_token.set(token);
    }

    /// Sends one request to the component in-process (no network), for the host's own use:
    /// the self-test, reading `/capabilities`.
    pub async fn call(&self, method: &str, path: &str) -> Result<(u16, Bytes)> {
        self.call_with(method, path, Vec::new(), &[]).await
    }

    /// [`ComponentServer::call`] with its own deadline instead of the requests' one.
    pub async fn call_within(
        &self,
        method: &str,
        path: &str,
        budget: Duration,
    ) -> Result<(u16, Bytes)> {
        self.send_in_process(method, path, Vec::new(), &[], budget)
            .await
    }

    /// [`ComponentServer::call`] with a body and headers.
    pub async fn call_with(
        &self,
        method: &str,
        path: &str,
        body: Vec<u8>,
        headers: &[(&str, &str)],
    ) -> Result<(u16, Bytes)> {
        self.send_in_process(method, path, body, headers, self.limits.deadline)
            .await
    }

    async fn send_in_process(
        &self,
        method: &str,
        path: &str,
        body: Vec<u8>,
        headers: &[(&str, &str)],
        budget: Duration,
    ) -> Result<(u16, Bytes)> {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("http://localhost{path}"))
            .header(hyper::header::HOST, "localhost");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(Bytes::from(body)))?;
        let resp = self
            .run_guest(req, (Instant::now() + budget, budget), None)
            .await;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| anyhow::anyhow!("reading the component's answer: {e:?}"))?
            .to_bytes();
        Ok((status, body))
    }

    fn host_shutdown(&self, route: &ShutdownRoute, peer: SocketAddr) -> HostResponse {
        if !route.allowed {
            return responses::error(
                ErrorCode::ShutdownDisabled,
                "shutdown is disabled for this deployment",
            );
        }
        if !peer.ip().is_loopback() {
            return responses::error(
                ErrorCode::Forbidden,
                "shutdown is accepted from this machine only",
            );
        }
        route.trigger.notify_one();
        let body = serde_json::json!({"success": true, "message": "shutting down gracefully"});
        responses::json(200, body.to_string())
    }

    /// Answers one request and logs it.
    async fn serve_request(&self, req: hyper::Request<Incoming>, peer: SocketAddr) -> HostResponse {
        let started = Instant::now();
        let method = req.method().clone();
        let path = req.uri().path().to_owned();
        let from_host = is_host_traffic(&req);
        let path_info = req
            .headers()
            .get(crate::app::PATH_INFO)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut resp = match &self.shutdown {
            Some(route) if path == "/shutdown" && method == hyper::Method::POST => {
                self.host_shutdown(route, peer)
            }
            _ => self.answer(req).await,
        };
        if let Some(v) = self.version.get() {
            resp.headers_mut().insert(MODEL_VERSION_HEADER, v.clone());
        }
        let status = resp.status().as_u16();
        let took = started.elapsed();
        let code = resp
            .headers()
            .get(edge_api::error::ERROR_CODE_HEADER)
            .and_then(|v| v.to_str().ok());
        self.metrics
            .request(&path, path_info.as_deref(), status, took, code);
        // The host's own traffic (heartbeats, process checks) is DEBUG unless it failed.
        let served = request_log::Served {
            method: method.as_str(),
            path: &path,
            status,
            took,
            peer,
        };
        request_log::record(&served, from_host && status < 500);
        resp
    }

    /// Reads the body first and only then takes a concurrency slot: a client trickling its
    /// body in holds a connection, never one of the slots the other clients need. The body
    /// must arrive within the request's deadline.
    async fn answer(&self, req: hyper::Request<Incoming>) -> HostResponse {
        let deadline = Instant::now() + self.limits.deadline;
        let mut req = match self.read_body(req, deadline).await {
            Ok(r) => r,
            Err(resp) => return *resp,
        };
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            return responses::error(
                ErrorCode::Overloaded,
                format!(
                    "the server is at its limit of {} requests at once; retry shortly",
                    self.limits.max_concurrency
                ),
            );
        };
        if let Some(token) = self.caller_token.get() {
            identify_caller(&mut req, token).await;
        }
        self.run_guest(req, (deadline, self.limits.deadline), Some(slot))
            .await
    }

    /// Reads the whole body (bounded by the cap and the deadline) so that an oversized
    /// body is answered 413 by the host, whatever the guest would have done.
    ///
    /// An oversized body is still read and discarded (up to [`MAX_DRAIN`]) before answering:
    /// a client that is still uploading would otherwise see the connection reset instead of
    /// the 413.
    async fn read_body(
        &self,
        req: hyper::Request<Incoming>,
        deadline: Instant,
    ) -> Result<hyper::Request<Full<Bytes>>, Box<HostResponse>> {
        let cap = self.limits.max_body_bytes;
        let (parts, mut body) = req.into_parts();
        let declared = parts
            .headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let mut buf = bytes::BytesMut::new();
        let mut over = declared.is_some_and(|n| n > cap as u64);
        let mut seen: u64 = 0;
        let read = tokio::time::timeout_at(deadline.into(), async {
            while let Some(frame) = body.frame().await {
                let frame = frame?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                seen += data.len() as u64;
                if over || buf.len() + data.len() > cap {
                    over = true;
                    buf.clear();
                    if seen > MAX_DRAIN {
                        return Ok(false);
                    }
                } else {
                    buf.extend_from_slice(&data);
                }
            }
            Ok::<_, hyper::Error>(true)
        })
        .await;
        let refuse = |code, message: String, drained: bool| {
            let mut resp = responses::error(code, message);
            if !drained {
                // Unread body bytes remain: the connection cannot carry another request.
                resp.headers_mut().insert(
                    hyper::header::CONNECTION,
                    hyper::header::HeaderValue::from_static("close"),
                );
            }
            Box::new(resp)
        };
        match read {
            Err(_) => Err(refuse(
                ErrorCode::Timeout,
                "timed out while receiving the request body".into(),
                false,
            )),
            Ok(Err(e)) => Err(refuse(
                ErrorCode::InvalidJson,
                format!("could not read the request body: {e}"),
                false,
            )),
            Ok(Ok(drained)) if over => Err(refuse(
                ErrorCode::PayloadTooLarge,
                format!("request body exceeds the limit of {cap} bytes"),
                drained,
            )),
            Ok(Ok(_)) => Ok(hyper::Request::from_parts(parts, Full::new(buf.freeze()))),
        }
    }

    /// Runs `req` on an instance by `deadline` (`budget` after it began, as errors say it).
    /// `slot` (a place under `--max-concurrency`) is held until
    /// the instance is done with the request, body included, not just until it answers.
    async fn run_guest(
        &self,
        req: hyper::Request<Full<Bytes>>,
        (deadline, budget): (Instant, Duration),
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> HostResponse {
        match self.pool.serve(req, deadline, slot).await {
            Ok(resp) => resp,
            Err(Failure::Guest(code)) => {
                internal(format!("the component failed the request: {code:?}"))
            }
            Err(Failure::Timeout) => timeout(budget),
            Err(Failure::Fault {
                error,
                memory_exceeded,
            }) => classify_failure(error, memory_exceeded, budget),
        }
    }
}

impl crate::listener::Handler for ComponentServer {
    async fn handle(
        self: Arc<Self>,
        req: hyper::Request<Incoming>,
        peer: SocketAddr,
    ) -> HostResponse {
        self.serve_request(req, peer).await
    }
}

/// Adds [`crate::caller::HEADER`] to a state-changing request: who sent it and, when the
/// body names a `process_id`, what that process is on this machine.
async fn identify_caller(req: &mut hyper::Request<Full<Bytes>>, token: &str) {
    if matches!(*req.method(), hyper::Method::GET | hyper::Method::HEAD) {
        return;
    }
    let Some(conn) = req.extensions().get::<ConnInfo>().cloned() else {
        return; // the host's own in-process call
    };
    // What the body names: the process a registration is for, or (a renewal) its id.
    #[derive(serde::Deserialize, Default)]
    struct Claim {
        process_id: Option<u64>,
        registration_id: Option<serde::de::IgnoredAny>,
    }
    let body = req.body().clone().collect().await.map(|b| b.to_bytes());
    let claim: Claim = body
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let wanted = match (req.method(), claim.process_id, &claim.registration_id) {
        // A renewal without its id (`POST /heartbeat/{port}`, which names no process), which
        // a relative of the registered process may send.
        (&hyper::Method::POST, None, None) => caller::Relatives::All,
        (_, pid, _) => caller::Relatives::Line {
            claimed: pid.and_then(|p| u32::try_from(p).ok()),
        },
    };
    let claimed_pid = claim.process_id;
    let found = tokio::task::spawn_blocking(move || {
        (
            caller::identify(&conn, wanted),
            claimed_pid.map(caller::claimed),
        )
    })
    .await;
    let (caller, claimed) = found.unwrap_or((caller::Caller::Unknown, None));
    let value = caller::Identity { caller, claimed }.header_value(token);
    if let Ok(v) = hyper::header::HeaderValue::from_str(&value) {
        req.headers_mut().insert(caller::HEADER, v);
    }
}

/// Whether a request comes from a `runtime-host` (its client's `User-Agent`).
fn is_host_traffic<B>(req: &hyper::Request<B>) -> bool {
    req.headers()
        .get(hyper::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(service_client::is_host_user_agent)
}
