//! What one instance's `Store` holds: WASI, wasi-http, key-value and variables state, the
//! memory limiter, and the deadline of the request it is serving. An instance serves one
//! request at a time, possibly several in a row (see [`crate::instances`]).

use crate::keyvalue::{KeyValue, KvCtx};
use crate::limits::{DeadlineExceeded, MemoryLimiter};
use crate::variables::{ConfigCtx, Variables};
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

pub struct InstanceState {
    table: ResourceTable,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    kv: KeyValue,
    vars: Variables,
    pub limiter: MemoryLimiter,
    /// When the request being served must be done, and the budget it was given.
    deadline: Instant,
    budget: Duration,
}

impl InstanceState {
    pub fn new(kv: KeyValue, vars: Variables, limiter: MemoryLimiter) -> Self {
        // Guests get no environment, arguments, files or sockets; their stdout and stderr
        // go to the host's, so a component's logs appear beside the request log.
        let wasi = WasiCtx::builder().inherit_stdout().inherit_stderr().build();
        Self {
            table: ResourceTable::new(),
            wasi,
            http: WasiHttpCtx::new(),
            kv,
            vars,
            limiter,
            deadline: Instant::now(),
            budget: Duration::ZERO,
        }
    }

    /// Starts the clock of the next request this instance serves.
    pub fn start_request(&mut self, deadline: Instant, budget: Duration) {
        self.deadline = deadline;
        self.budget = budget;
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
            hooks: Default::default(),
        }
    }
}
