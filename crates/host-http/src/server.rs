//! Serving one component: each request on a warm instance ([`InstancePool`]), with the
//! request's limits enforced, every failure answered with the JSON error body, and what the
//! service added ([`Hook`]s) run around it.

use crate::access_log::{self, RouteName};
use crate::body;
use crate::headers;
use crate::hooks::Hook;
use crate::instances::{Failure, InstancePool};
use crate::lanes;
use crate::listener::Handler;
use crate::responses::{self, HostResponse, classify_failure, internal, timeout};
use anyhow::Result;
use bytes::Bytes;
use edge_api::error::ErrorCode;
use host_metrics::Deployment;
use host_metrics::PoolFigures;
use host_metrics::routes;
use host_runtime::limits::Limits;
use host_runtime::state::{Grants, InstanceState};
use http_body_util::{BodyExt, Full};
use hyper::body::Body;
use hyper::body::Incoming;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// Everything needed to answer requests for one component.
pub struct ComponentServer {
    pool: Arc<InstancePool>,
    limits: Limits,
    slots: Arc<Semaphore>,
    /// What the service adds to each request from the network, in order.
    hooks: Vec<Arc<dyn Hook>>,
    /// The label this deployment's requests are counted under.
    metrics: Deployment,
}

impl ComponentServer {
    /// A server of `pre`, its requests counted as deployment `name`, with `hooks` run on
    /// each request from the network.
    pub fn new(
        name: &str,
        pre: ProxyPre<InstanceState>,
        grants: Grants,
        limits: Limits,
        hooks: Vec<Arc<dyn Hook>>,
    ) -> Self {
        let slots = Arc::new(Semaphore::new(limits.max_concurrency));
        Self {
            pool: InstancePool::new(pre, grants.for_deployment(name), limits.clone()),
            limits,
            slots,
            hooks,
            metrics: Deployment::new(name),
        }
    }

    /// The name this deployment's metrics carry.
    pub fn metrics(&self) -> &Deployment {
        &self.metrics
    }

    /// The instance pool's figures, for the metrics.
    pub fn pool_stats(&self) -> PoolFigures {
        self.pool.stats()
    }

    /// Says that it serves baseline code (Winch's), until [`Self::replace_code`].
    pub fn mark_baseline(&self) {
        self.pool.mark_baseline();
    }

    /// Serves the same component from `pre` (its optimized code) from now on: new instances
    /// come from it, the warm ones of the code before drain.
    pub fn replace_code(&self, pre: ProxyPre<InstanceState>) {
        self.pool.replace_code(pre);
    }

    /// Sends one request to the component in-process (no network, no hooks), for the host's
    /// own use: the self-test, reading `/capabilities`.
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
        let resp = run_guest(&self.pool, req, (Instant::now() + budget, budget), None).await;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| anyhow::anyhow!("reading the component's answer: {e:?}"))?
            .to_bytes();
        Ok((status, body))
    }

    /// Answers one request and counts it (the listener logs it).
    async fn serve_request(&self, req: hyper::Request<Incoming>, peer: SocketAddr) -> HostResponse {
        let started = Instant::now();
        let path = req.uri().path().to_owned();
        let path_info = req
            .headers()
            .get(headers::PATH_INFO)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let instead = self.hooks.iter().find_map(|h| h.answer_instead(&req, peer));
        let mut resp = match instead {
            Some(resp) => resp,
            None => self.answer(req).await,
        };
        for hook in &self.hooks {
            hook.on_answer(&mut resp);
        }
        let status = resp.status().as_u16();
        let took = started.elapsed();
        let code = resp
            .headers()
            .get(headers::ERROR_CODE)
            .and_then(|v| v.to_str().ok());
        let route = routes::template(&path, path_info.as_deref());
        self.metrics.request(route, status, took, code);
        if route != routes::OTHER {
            access_log::note_route(&mut resp, RouteName::Template(route));
        }
        resp
    }

    /// Reads the body first and only then takes a concurrency slot: a client trickling its
    /// body in holds a connection, never one of the slots the other clients need. The body
    /// must arrive within the request's deadline.
    async fn answer(&self, req: hyper::Request<Incoming>) -> HostResponse {
        let deadline = Instant::now() + self.limits.deadline;
        let mut req = match body::read_whole(req, self.limits.max_body_bytes, deadline).await {
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
        for hook in &self.hooks {
            if let Some(preparing) = hook.before_guest(&mut req) {
                preparing.await;
            }
        }
        // A batch runs on the batch threads (see `lanes`); a short request right here.
        let body_len = req.body().size_hint().exact().unwrap_or(0) as usize;
        let (pool, budget) = (self.pool.clone(), self.limits.deadline);
        lanes::run(body_len, async move {
            run_guest(&pool, req, (deadline, budget), Some(slot)).await
        })
        .await
    }
}

/// Runs `req` on an instance of `pool` by `deadline` (`budget` after it began, as errors
/// say it). `slot` (a place under `--max-concurrency`) is held until the instance is done
/// with the request, body included, not just until it answers.
async fn run_guest(
    pool: &Arc<InstancePool>,
    req: hyper::Request<Full<Bytes>>,
    (deadline, budget): (Instant, Duration),
    slot: Option<tokio::sync::OwnedSemaphorePermit>,
) -> HostResponse {
    match pool.serve(req, deadline, slot).await {
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

impl Handler for ComponentServer {
    async fn handle(
        self: Arc<Self>,
        req: hyper::Request<Incoming>,
        peer: SocketAddr,
    ) -> HostResponse {
        self.serve_request(req, peer).await
    }
}
