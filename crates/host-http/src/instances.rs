//! Warm instances: a component instance serves several requests, one after another, instead
//! of one instance per request.
//!
//! Rules, each tested in `tests/tests/host/warm_instances.rs`:
//! - one request at a time per instance (a WASI 0.2 handler is not re-entrant): an instance
//!   is either serving one request or idle in [`InstancePool`];
//! - an instance is reused at most `--instance-reuse` times (1 = a fresh instance for every
//!   request, as Spin does) and dropped after `--instance-idle` without work;
//! - an instance that trapped, ran past its deadline, hit its memory cap, or answered 5xx is
//!   never reused: whatever state it was left in dies with it;
//! - the deadline is per request (set afresh when an instance starts a request), the memory
//!   cap is per instance;
//! - with `--max-instances N`, at most N instances of the component exist at once; a
//!   request finding all N busy waits (within its deadline) for one to come back;
//! - when the component's code is replaced ([`InstancePool::replace_code`]: its optimized
//!   code is ready, see `runtime::engine::Tier`), new instances come from the new code and
//!   those of the old drain: each finishes its request and is not reused.
//!
//! Why not `wasmtime_wasi_http::handler::ProxyHandler`: it was tried in this module's place
//! and measured slower (logp at 16 connections 0.37-0.40x native against 0.51-0.53x), and its
//! design decides reuse before the answer's status is known, binds a request to a new worker
//! when none is free (which `--max-instances` cannot wait on), and can report a deadline as
//! "guest never invoked response-outparam::set" (docs/DECISIONS.md "Instance pool"). The
//! loop below is the same idea for serial reuse, with the status and the failure in hand
//! when the decision is made.

use crate::release_order;
use crate::responses::HostResponse;
use anyhow::Result;
use bytes::Bytes;
use host_metrics::PoolFigures;
use host_runtime::limits::Limits;
use host_runtime::state::{Grants, InstanceState};
use http_body_util::Full;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
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
    /// Which of the pool's codes made it ([`InstancePool::replace_code`]).
    code: u64,
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
struct WaitTicket<'a>(&'a PoolCounters);

impl<'a> WaitTicket<'a> {
    fn new(counters: &'a PoolCounters) -> Self {
        counters.waiting.fetch_add(1, Ordering::Relaxed);
        Self(counters)
    }
}

impl Drop for WaitTicket<'_> {
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
    /// The code new instances come from, and its number (1, then one more per replacement).
    code: std::sync::RwLock<(u64, ProxyPre<InstanceState>)>,
    /// That code is baseline code ([`InstancePool::mark_baseline`]) until replaced.
    baseline: AtomicBool,
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
            code: std::sync::RwLock::new((1, pre)),
            baseline: AtomicBool::new(false),
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
    pub fn stats(&self) -> PoolFigures {
        let c = &self.counters;
        PoolFigures {
            live: c.live.load(Ordering::Relaxed),
            idle: self.lock_idle().len() as i64,
            waiting: c.waiting.load(Ordering::Relaxed),
            created: c.created.load(Ordering::Relaxed),
            reused: c.reused.load(Ordering::Relaxed),
            baseline: self.baseline.load(Ordering::Relaxed),
        }
    }

    /// Makes new instances from `pre` from now on (the same component, compiled otherwise);
    /// idle instances of the code before are dropped, busy ones when their request ends.
    pub fn replace_code(&self, pre: ProxyPre<InstanceState>) {
        {
            let mut code = self.code.write().unwrap_or_else(|p| p.into_inner());
            *code = (code.0 + 1, pre);
        }
        self.baseline.store(false, Ordering::Relaxed);
        let stale = std::mem::take(&mut *self.lock_idle());
        drop(stale); // outside the lock, as in `checkout`
    }

    /// Says (in its [`PoolFigures`]) that its code is baseline code, until [`Self::replace_code`].
    pub fn mark_baseline(&self) {
        self.baseline.store(true, Ordering::Relaxed);
    }

    /// The code new instances come from, with its number.
    fn current_code(&self) -> (u64, ProxyPre<InstanceState>) {
        self.code.read().unwrap_or_else(|p| p.into_inner()).clone()
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
        let (code, pre) = self.current_code();
        // Instantiation runs guest code (start functions): it has a deadline too.
        let (mut store, memory_exceeded) = InstanceState::store(
            pre.engine(),
            &self.grants,
            self.limits.max_memory_bytes,
            self.limits.deadline,
        )?;
        let proxy = pre.instantiate_async(&mut store).await?;
        Ok(Warm {
            store,
            proxy,
            code,
            served: 0,
            idle_since: Instant::now(),
            memory_exceeded,
            _alive: Alive::new(&self.counters),
        })
    }

    /// Keeps `warm` for a later request unless it has served its share, too many wait, or
    /// its code has been replaced.
    fn checkin(&self, mut warm: Warm) {
        warm.served += 1;
        if warm.served >= self.limits.instance_reuse {
            return;
        }
        warm.idle_since = Instant::now();
        let mut idle = self.lock_idle();
        // Read under the idle list's lock: `replace_code` changes the code before it empties
        // the list, so an instance of the old code is either refused here or emptied there.
        let current = self.code.read().unwrap_or_else(|p| p.into_inner()).0;
        if warm.code == current && idle.len() < self.limits.max_concurrency {
            idle.push(warm);
        }
    }

    /// Serves one request on a warm or new instance. `Ok` is the guest's response head (its
    /// body still streaming from the guest); the instance goes back to the pool afterwards
    /// only if it is healthy. `slot` is released when the instance is done with the request.
    pub async fn serve(
        self: &Arc<Self>,
        req: hyper::Request<Full<Bytes>>,
        deadline: Instant,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Result<HostResponse, Failure> {
        let fault = |error: anyhow::Error| Failure::Fault {
            error,
            memory_exceeded: false,
        };
        let turn = match &self.in_use {
            Some(cap) => {
                let wait = cap.clone().acquire_owned();
                let _waiting = WaitTicket::new(&self.counters);
                match tokio::time::timeout_at(deadline.into(), wait).await {
                    Ok(Ok(permit)) => Some(permit),
                    Ok(Err(_)) => {
                        return Err(fault(anyhow::anyhow!("the instance pool is closed")));
                    }
                    Err(_) => return Err(Failure::Timeout),
                }
            }
            None => None,
        };
        let mut warm = self.checkout().await.map_err(fault)?;
        warm.store
            .data_mut()
            .start_request(deadline, self.limits.deadline);
        warm.store.set_epoch_deadline(1);
        let gone = warm.store.data_mut().watch_caller();

        // Answered without a body: HTTP leaves it out (RFC 9110, 6.4.1).
        let bodiless = req.method() == hyper::Method::HEAD;
        let (sender, receiver) = oneshot::channel();
        let mut http = warm.store.data_mut().http();
        let prepared = http
            .new_incoming_request(Scheme::Http, req)
            .and_then(|req| Ok((req, http.new_response_outparam(sender)?)));
        let (req, out) = prepared.map_err(|e| {
            fault(anyhow::Error::from(e).context("could not hand the request to the component"))
        })?;

        let (to_caller, answer) = oneshot::channel();
        // Dropped by the task once the instance is back in the pool (or gone).
        let (released, on_release) = oneshot::channel::<()>();
        let pool = self.clone();
        let task = tokio::spawn(async move {
            let _released = released;
            let _slot = slot;
            // Released after the instance is back in the pool (or gone), as `released`.
            let _turn = turn;
            let memory_exceeded = warm.memory_exceeded.clone();
            let call =
                warm.proxy
                    .wasi_http_incoming_handler()
                    .call_handle(&mut warm.store, req, out);
            // Hand the response head on the moment the guest sets it (its body may be larger
            // than a pipe holds), and note whether it was a healthy one.
            let forward = async move {
                let answer = receiver.await.ok()?;
                let healthy = matches!(&answer, Ok(r) if r.status().as_u16() < 500);
                let _ = to_caller.send(answer);
                Some(healthy)
            };
            let run = async {
                tokio::pin!(call, forward);
                let mut healthy = None;
                let called = loop {
                    tokio::select! {
                        r = &mut call => break r,
                        h = &mut forward, if healthy.is_none() => healthy = Some(h),
                    }
                };
                let healthy = match healthy {
                    Some(h) => h,
                    // The guest returned: its outparam was set or dropped, so this is quick.
                    None if called.is_ok() => forward.await,
                    None => None,
                };
                (called, healthy == Some(true))
            };
            match tokio::time::timeout_at(deadline.into(), run).await {
                Ok((Ok(()), healthy)) => {
                    if healthy && !memory_exceeded.load(Ordering::Relaxed) {
                        pool.checkin(warm);
                    }
                    Ok(())
                }
                Ok((Err(error), _)) => Err(Failure::Fault {
                    error: error.into(),
                    memory_exceeded: memory_exceeded.load(Ordering::Relaxed),
                }),
                Err(_) => Err(Failure::Timeout),
            }
        });

        let mut caller_waits = TellIfAbandoned(Some(gone));
        match tokio::time::timeout_at(deadline.into(), answer).await {
            Ok(Ok(Ok(resp))) => {
                caller_waits.0 = None;
                Ok(release_order::ends_after_release(resp, bodiless, deadline, on_release).await)
            }
            Ok(Ok(Err(code))) => Err(Failure::Guest(code)),
            // The guest finished or trapped without answering: its task says why.
            Ok(Err(_)) => Err(match task.await {
                Ok(Ok(())) => fault(anyhow::anyhow!(
                    "the component returned without sending a response"
                )),
                Ok(Err(failure)) => failure,
                Err(join) => fault(anyhow::anyhow!("the request task failed: {join}")),
            }),
            Err(_) => {
                // Dropping the task drops the instance: it is never reused.
                task.abort();
                Err(Failure::Timeout)
            }
        }
    }
}

/// Tells the guest's host calls if its caller stops waiting for the response head (the client
/// went away): a generation stops, the guest finishes normally. Disarmed once the head is out.
struct TellIfAbandoned(Option<tokio::sync::watch::Sender<bool>>);

impl Drop for TellIfAbandoned {
    fn drop(&mut self) {
        if let Some(gone) = self.0.take() {
            let _ = gone.send(true);
        }
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
