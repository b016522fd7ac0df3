//! What one instance's `Store` holds: WASI, wasi-http, key-value and variables state, the
//! memory limiter, and the deadline of the request it is serving. An instance serves one
//! request at a time, possibly several in a row (see `http::instances`).

use crate::limits::{DeadlineExceeded, MemoryLimiter};
use host_capabilities::files::Mounts;
use host_capabilities::keyvalue::{KeyValue, KvCtx};
use host_capabilities::llm::{AiGrant, CallerGone, LlmCtx};
use host_capabilities::outbound::Outbound;
use host_capabilities::variables::{ConfigCtx, Variables};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// What the host grants one component, as a Spin manifest would: its key-value store, its
/// variables, its read-only file mounts, its AI models and the hosts it may send HTTP
/// requests to (`allowed_outbound_hosts`). Every instance of the component
/// gets the same. Made in one place, `RuntimeArgs::grants` ([`crate::flags`]).
#[derive(Clone)]
pub struct Grants {
    pub kv: KeyValue,
    pub vars: Variables,
    pub files: Mounts,
    pub ai: AiGrant,
    pub outbound: Outbound,
}

impl Grants {
    /// What a component's pre-initialization gets: the same variables, mounts and AI models,
    /// and a key-value store of its own, empty and thrown away afterwards, so that nothing it
    /// writes reaches a real store (or, through the snapshot, every deployment of its files);
    /// and no outgoing HTTP, so that nothing fetched at start-up is frozen into a snapshot
    /// (the initialization would fail the same under Spin, which runs none).
    pub fn for_initialization(&self) -> Self {
        Self {
            kv: KeyValue::in_memory(),
            outbound: Outbound::none(),
            ..self.clone()
        }
    }

    /// The same grants, the refusals of outgoing requests logged and counted as deployment
    /// `name`'s.
    pub fn for_deployment(&self, name: &str) -> Self {
        Self {
            outbound: self.outbound.for_deployment(name),
            ..self.clone()
        }
    }
}

pub struct InstanceState {
    table: ResourceTable,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    kv: KeyValue,
    vars: Variables,
    ai: AiGrant,
    /// The hooks every outgoing HTTP request passes: the component's allowed hosts.
    outbound: Outbound,
    pub limiter: MemoryLimiter,
    /// When the request being served must be done, and the budget it was given.
    deadline: Instant,
    budget: Duration,
    /// Turns true when the request's caller went away (`host_http::instances`): a
    /// language model's generation for it stops.
    caller_gone: CallerGone,
}

impl InstanceState {
    pub fn new(grants: &Grants, limiter: MemoryLimiter) -> anyhow::Result<Self> {
        // Guests get no environment, arguments or sockets, and no files beyond their
        // read-only mounts; their stdout and stderr go to the host's, so a component's logs
        // appear beside the request log.
        let mut wasi = WasiCtx::builder();
        wasi.inherit_stdout().inherit_stderr();
        grants.files.grant(&mut wasi)?;
        Ok(Self {
            table: ResourceTable::new(),
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            kv: grants.kv.clone(),
            vars: grants.vars.clone(),
            ai: grants.ai.clone(),
            outbound: grants.outbound.clone(),
            limiter,
            deadline: Instant::now(),
            budget: Duration::ZERO,
            caller_gone: CallerGone::never(),
        })
    }

    /// A store for one instance of a component with `grants`: its linear memory capped at
    /// `max_memory_bytes`, the deadline checked at each epoch tick (yielding to other tasks),
    /// and a first deadline `budget` from now for what runs before a request (instantiation,
    /// a pre-initialization). The flag turns true when the memory cap refused a growth.
    pub fn store(
        engine: &Engine,
        grants: &Grants,
        max_memory_bytes: usize,
        budget: Duration,
    ) -> anyhow::Result<(Store<Self>, Arc<AtomicBool>)> {
        let (limiter, memory_exceeded) = MemoryLimiter::new(max_memory_bytes);
        let mut store = Store::new(engine, Self::new(grants, limiter)?);
        store.limiter(|s| &mut s.limiter);
        store.epoch_deadline_callback(|ctx| {
            ctx.data().check_deadline()?;
            Ok(UpdateDeadline::Yield(1))
        });
        store
            .data_mut()
            .start_request(Instant::now() + budget, budget);
        store.set_epoch_deadline(1);
        Ok((store, memory_exceeded))
    }

    /// Starts the clock of the next request this instance serves.
    pub fn start_request(&mut self, deadline: Instant, budget: Duration) {
        self.deadline = deadline;
        self.budget = budget;
        self.caller_gone = CallerGone::never();
    }

    /// Lets the current request's host calls learn that its caller went away: the sender
    /// returned raises it (`send(true)`).
    pub fn watch_caller(&mut self) -> tokio::sync::watch::Sender<bool> {
        let (gone, caller_gone) = CallerGone::channel();
        self.caller_gone = caller_gone;
        gone
    }

    /// Whether the current request may keep running: the epoch callback asks at each tick.
    pub fn check_deadline(&self) -> Result<(), DeadlineExceeded> {
        if Instant::now() >= self.deadline {
            Err(DeadlineExceeded(self.budget))
        } else {
            Ok(())
        }
    }

    pub fn keyvalue(&mut self) -> KvCtx<'_> {
        KvCtx {
            table: &mut self.table,
            kv: &self.kv,
        }
    }

    pub fn config(&mut self) -> ConfigCtx<'_> {
        ConfigCtx(&self.vars)
    }

    pub fn llm(&mut self) -> LlmCtx<'_> {
        LlmCtx(&self.ai, &self.caller_gone)
    }
}

impl WasiView for InstanceState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for InstanceState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.outbound,
        }
    }
}
