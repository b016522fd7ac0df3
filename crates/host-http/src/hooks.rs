//! What a service adds to its component's requests, without the server knowing the service:
//! the seam wasmtime-wasi-http calls `WasiHttpHooks` and Spin `ExecutorHooks`. The registry
//! tells its component who calls; a model deployment serves `POST /shutdown` itself and names
//! its version on every answer. A server runs its hooks in the order it was given them, on
//! requests from the network (not on the host's own in-process calls).

use crate::responses::HostResponse;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

/// Work a hook does on a request before the component sees it.
pub type HookWork<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

pub trait Hook: Send + Sync + 'static {
    /// The host's own answer in the component's place, before the body is read; `None` lets
    /// the request through.
    fn answer_instead(
        &self,
        _req: &hyper::Request<Incoming>,
        _peer: SocketAddr,
    ) -> Option<HostResponse> {
        None
    }

    /// Work on a request the component is about to get (its body read in full, a slot
    /// taken), e.g. adding a header; `None` when there is nothing to do (no allocation).
    fn before_guest<'a>(
        &'a self,
        _req: &'a mut hyper::Request<Full<Bytes>>,
    ) -> Option<HookWork<'a>> {
        None
    }

    /// Changes to every answer, the host's own error answers included.
    fn on_answer(&self, _resp: &mut HostResponse) {}
}
