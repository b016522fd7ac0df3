//! Warm instances: a component instance serves several requests, one after another, instead
//! of one instance per request.
//!
//! Rules, each tested in `tests/tests/warm_instances.rs`:
//! - one request at a time per instance (a WASI 0.2 handler is not re-entrant): an instance
//!   is either serving one request or idle in [`InstancePool`];
//! - an instance is reused at most `--instance-reuse` times (1 = a fresh instance for every
//!   request, as Spin does) and dropped after `--instance-idle` without work;
//! - an instance that trapped, ran past its deadline, hit its memory cap, or answered 5xx is
//!   never reused: whatever state it was left in dies with it;
//! - the deadline is per request (set afresh when an instance starts a request), the memory
//!   cap is per instance;
//! - with `--max-instances N`, at most N instances of the component exist at once; a
//!   request finding all N busy waits (within its deadline) for one to come back.
//!
//! Why not `wasmtime_wasi_http::handler::ProxyHandler`: its reuse decision
//! (`WorkerState::should_accept_request`) sees only request counts, not the status the guest
//! answered, so "never reuse after a 5xx" would race the next request; a trap reaches the
//! caller as "guest never invoked response-outparam::set", not as the trap; and it needs
//! `component-model-async`, whose event loop our synchronous host calls would block (the
//! module's own notes, wasmtime issues #11869/#11870). [`InstancePool::serve`] is the same
//! idea for serial reuse, with the status and the failure in hand when the decision is made,
//! and without a task per request: the guest runs in the connection's own task.

use crate::limits::Limits;
use crate::release_order;
use crate::responses::HostResponse;
use crate::state::{Grants, InstanceState};
use anyhow::Result;
use bytes::Bytes;
use http_body_util::Full;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use wasmtime::Store;
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http::types::{ErrorCode as HttpErrorCode, Scheme};
use wasmtime_wasi_http::p2::bindings::{Proxy, ProxyPre};

/// An instance with its store, between requests or serving one.
struct Warm {
    store: Store<InstanceState>,
    proxy: Proxy,
    served: usize,
    idle_since: Instant,
    memory_exceeded: Arc<AtomicBool>,
    /// Counts this instance among the pool's live ones until it is dropped.
    _alive: Alive,
}

/// What a pool has done, for the metrics ([`InstancePool::stats`]).
#[derive(Default)]
pub struct PoolCounters {
    live: AtomicI64,
    waiting: AtomicI64,
    created: AtomicU64,
    reused: AtomicU64,
}

/// The pool as it is now: instances alive and idle, requests waiting for one, instances made
/// and requests served by an instance that had served before.
pub struct PoolStats {
    pub live: i64,
    pub idle: i64,
    pub waiting: i64,
    pub created: u64,
    pub reused: u64,
}

/// One live instance of a pool's count, given back when dropped.
struct Alive(Arc<PoolCounters>);

impl Alive {
    fn new(counters: &Arc<PoolCounters>) -> Self {
        counters.live.fetch_add(1, Ordering::Relaxed);
        counters.created.fetch_add(1, Ordering::Relaxed);
        Self(counters.clone())
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A request counted among those waiting for an instance while it lives.
struct Waiting<'a>(&'a PoolCounters);

impl<'a> Waiting<'a> {
    fn new(counters: &'a PoolCounters) -> Self {
        counters.waiting.fetch_add(1, Ordering::Relaxed);
        Self(counters)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How a request on an instance ended, when the guest did not answer normally.
pub enum Failure {
    /// The guest answered with a wasi-http error code instead of a response.
    Guest(HttpErrorCode),
    /// The request ran past its deadline.
    Timeout,
    /// No instance could be made, or the guest trapped or returned without answering.
    Fault {
        error: anyhow::Error,
        memory_exceeded: bool,
    },
}

/// The idle instances of one component, and how to make new ones.
pub struct InstancePool {
    pre: ProxyPre<InstanceState>,
    grants: Grants,
    limits: Limits,
    idle: Mutex<Vec<Warm>>,
    /// One permit per instance in use, when `--max-instances` caps them. An instance is
    /// made only when none is idle, so instances in use plus idle never exceed the cap.
    in_use: Option<Arc<Semaphore>>,
    counters: Arc<PoolCounters>,
}

impl InstancePool {
    pub fn new(pre: ProxyPre<InstanceState>, grants: Grants, limits: Limits) -> Arc<Self> {
        let in_use =
            (limits.max_instances > 0).then(|| Arc::new(Semaphore::new(limits.max_instances)));
        let pool = Arc::new(Self {
            pre,
            grants,
            limits,
            idle: Mutex::new(Vec::new()),
            in_use,
            counters: Arc::default(),
        });
        if pool.limits.instance_reuse > 1 && tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(sweep_idle(Arc::downgrade(&pool)));
        }
        pool
    }

    /// What the pool holds and has done, for the metrics.
    pub fn stats(&self) -> PoolStats {
        let c = &self.counters;
        PoolStats {
            live: c.live.load(Ordering::Relaxed),
            idle: self.lock_idle().len() as i64,
            waiting: c.waiting.load(Ordering::Relaxed),
            created: c.created.load(Ordering::Relaxed),
            reused: c.reused.load(Ordering::Relaxed),
        }
    }

    fn lock_idle(&self) -> std::sync::MutexGuard<'_, Vec<Warm>> {
        // Pushing and popping cannot leave the list half-changed: poisoning is harmless.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The most recently used idle instance (its caches are the warmest), else a new one.
    async fn checkout(&self) -> Result<Warm> {
        let (warm, stale) = {
            let mut idle = self.lock_idle();
            let stale = self.take_timed_out(&mut idle);
            (idle.pop(), stale)
        };
        drop(stale); // outside the lock: freeing an instance resets its memory
        match warm {
            Some(w) => {
                self.counters.reused.fetch_add(1, Ordering::Relaxed);
                Ok(w)
            }
            None => self.instantiate().await,
        }
    }

    /// Removes the instances idle longer than `--instance-idle`. The list is oldest first,
    /// so they are the ones before the first that is still fresh.
    fn take_timed_out(&self, idle: &mut Vec<Warm>) -> Vec<Warm> {
        let fresh_from = idle
            .iter()
            .position(|w| w.idle_since.elapsed() < self.limits.instance_idle)
            .unwrap_or(idle.len());
        idle.drain(..fresh_from).collect()
    }

    async fn instantiate(&self) -> Result<Warm> {
        // Instantiation runs guest code (start functions): it has a deadline too.
        let (mut store, memory_exceeded) = InstanceState::store(
            self.pre.engine(),
            &self.grants,
            self.limits.max_memory_bytes,
            self.limits.deadline,
        )?;
        let proxy = self.pre.instantiate_async(&mut store).await?;
        Ok(Warm {
            store,
            proxy,
            served: 0,
            idle_since: Instant::now(),
            memory_exceeded,
            _alive: Alive::new(&self.counters),
        })
    }

    /// Keeps `warm` for a later request unless it has served its share or too many wait.
    fn checkin(&self, mut warm: Warm) {
        warm.served += 1;
        if warm.served >= self.limits.instance_reuse {
            return;
        }
        warm.idle_since = Instant::now();
        let mut idle = self.lock_idle();
        if idle.len() < self.limits.max_concurrency {
            idle.push(warm);
        }
    }

    /// Serves one request on a warm or new instance. `Ok` is the guest's response head (its
    /// body possibly still streaming from the guest); the instance goes back to the pool
    /// afterwards only if it is healthy. `slot` is released when the instance is done with
    /// the request.
    ///
    /// The guest runs in the caller's task until it has answered and returned, which for
    /// almost every answer (a body that fits the pipe to the client) happens in one go: no
    /// task is spawned and the instance is back in the pool before the answer leaves. Only a
    /// guest still running once it has answered (its body larger than the pipe holds, or
    /// work after the answer) goes on in a task of its own, and the answer then ends only
    /// once that task has settled the instance ([`release_order`]).
    pub async fn serve(
        self: &Arc<Self>,
        req: hyper::Request<Full<Bytes>>,
        deadline: Instant,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Result<HostResponse, Failure> {
        let turn = self.take_turn(deadline).await?;
        // Released only after the instance is back in the pool (or gone).
        let held = (slot, turn);
        let mut warm = self.checkout().await.map_err(fault)?;
        warm.store
            .data_mut()
            .start_request(deadline, self.limits.deadline);
        warm.store.set_epoch_deadline(1);

        // Answered without a body: HTTP leaves it out (RFC 9110, 6.4.1).
        let bodiless = req.method() == hyper::Method::HEAD;
        let (sender, mut receiver) = oneshot::channel();
        let mut http = warm.store.data_mut().http();
        let prepared = http
            .new_incoming_request(Scheme::Http, req)
            .and_then(|req| Ok((req, http.new_response_outparam(sender)?)));
        let (req, out) = prepared.map_err(|e| {
            fault(anyhow::Error::from(e).context("could not hand the request to the component"))
        })?;
        let mut run: Run = Box::pin(async move {
            let call =
                warm.proxy
                    .wasi_http_incoming_handler()
                    .call_handle(&mut warm.store, req, out);
            let called = tokio::time::timeout_at(deadline.into(), call).await;
            (warm, called)
        });

        let mut answer = Answer::Awaited;
        let returned = std::future::poll_fn(|cx| {
            if let Poll::Ready(done) = run.as_mut().poll(cx) {
                return Poll::Ready(Some(done));
            }
            if let Answer::Awaited = answer {
                match Pin::new(&mut receiver).poll(cx) {
                    Poll::Ready(Ok(set)) => {
                        answer = Answer::Set(set);
                        return Poll::Ready(None);
                    }
                    // The outparam was dropped unset: the guest's return says why.
                    Poll::Ready(Err(_)) => answer = Answer::Dropped,
                    Poll::Pending => {}
                }
            }
            Poll::Pending
        })
        .await;

        let Some((warm, called)) = returned else {
            let Answer::Set(set) = answer else {
                unreachable!("the guest's run is left only once it has answered")
            };
            let resp = set.map_err(Failure::Guest)?;
            // Answered, still running: the rest of the run goes on in its own task.
            let healthy = resp.status().as_u16() < 500;
            let (released, on_release) = oneshot::channel::<()>();
            let pool = self.clone();
            tokio::spawn(async move {
                let (warm, called) = run.await;
                let _ = pool.settle(warm, called, healthy);
                drop((held, released));
            });
            return Ok(
                release_order::ends_after_release(resp, bodiless, deadline, on_release).await,
            );
        };
        // The guest returned: its outparam was set or never will be.
        let set = match answer {
            Answer::Set(set) => Some(set),
            Answer::Awaited => receiver.try_recv().ok(),
            Answer::Dropped => None,
        };
        let healthy = matches!(&set, Some(Ok(r)) if r.status().as_u16() < 500);
        let settled = self.settle(warm, called, healthy);
        drop(held);
        match (set, settled) {
            (Some(Ok(resp)), _) => Ok(release_order::without_body_if_bodiless(resp, bodiless)),
            (Some(Err(code)), _) => Err(Failure::Guest(code)),
            (None, Err(failure)) => Err(failure),
            (None, Ok(())) => Err(fault(anyhow::anyhow!(
                "the component returned without sending a response"
            ))),
        }
    }

    /// A turn under `--max-instances`, waited for within the deadline (none without a cap).
    async fn take_turn(&self, deadline: Instant) -> Result<Option<OwnedSemaphorePermit>, Failure> {
        let Some(cap) = &self.in_use else {
            return Ok(None);
        };
        let wait = cap.clone().acquire_owned();
        let _waiting = Waiting::new(&self.counters);
        match tokio::time::timeout_at(deadline.into(), wait).await {
            Ok(Ok(permit)) => Ok(Some(permit)),
            Ok(Err(_)) => Err(fault(anyhow::anyhow!("the instance pool is closed"))),
            Err(_) => Err(Failure::Timeout),
        }
    }

    /// After the guest's handler returned (or ran out of time): keeps the instance for a
    /// later request if it answered healthily and stayed within its limits, and says how
    /// the run failed otherwise.
    fn settle(&self, warm: Warm, called: Called, healthy: bool) -> Result<(), Failure> {
        let memory_exceeded = warm.memory_exceeded.load(Ordering::Relaxed);
        match called {
            Ok(Ok(())) => {
                if healthy && !memory_exceeded {
                    self.checkin(warm);
                }
                Ok(())
            }
            Ok(Err(error)) => Err(Failure::Fault {
                error: error.into(),
                memory_exceeded,
            }),
            // Dropping a timed-out instance: it is never reused.
            Err(_) => Err(Failure::Timeout),
        }
    }
}

/// How the guest's handler call ended: returned (or trapped) within the deadline, or not.
type Called = Result<wasmtime::Result<()>, tokio::time::error::Elapsed>;

/// A request's run on an instance: the guest's handler under the deadline, giving the
/// instance back when it ends.
type Run = Pin<Box<dyn Future<Output = (Warm, Called)> + Send>>;

/// The guest's answer (its response or error code) as far as it has come.
enum Answer {
    Awaited,
    Set(Result<HostResponse, HttpErrorCode>),
    Dropped,
}

fn fault(error: anyhow::Error) -> Failure {
    Failure::Fault {
        error,
        memory_exceeded: false,
    }
}

/// Drops instances idle longer than `--instance-idle`, so a quiet service gives its memory
/// and pool slots back. Ends when the pool is gone.
async fn sweep_idle(pool: Weak<InstancePool>) {
    let period = match pool.upgrade() {
        Some(p) => (p.limits.instance_idle / 2).max(Duration::from_millis(50)),
        None => return,
    };
    let mut ticker = tokio::time::interval(period);
    loop {
        ticker.tick().await;
        let Some(pool) = pool.upgrade() else { return };
        let stale = pool.take_timed_out(&mut pool.lock_idle());
        drop(stale); // outside the lock, as in `checkout`
    }
}
