//! What one request's `Store` holds: WASI, wasi-http, key-value and variables state, and the
//! memory limiter. A new one is made for every request (instance-per-request, as in Spin).

use crate::keyvalue::{KeyValue, KvCtx};
use crate::limits::MemoryLimiter;
use crate::variables::{ConfigCtx, Variables};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

pub struct RequestState {
    table: ResourceTable,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    kv: KeyValue,
    vars: Variables,
    pub limiter: MemoryLimiter,
}

impl RequestState {
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

impl WasiView for RequestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for RequestState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: Default::default(),
        }
    }
}
