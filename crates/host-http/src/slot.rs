//! A deployment's place: what its port (and its `/models/<name>/` on the app port) serves,
//! replaceable while it serves. An upgrade puts the new version's server in the slot once
//! it has passed its self-test; requests already running keep the server they started on
//! (each holds its own reference), so the old version drains by itself and is dropped when
//! its last request ends. No request is refused or cut at the switch.

use crate::listener::Handler;
use crate::responses::HostResponse;
use crate::server::ComponentServer;
use hyper::body::Incoming;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

pub struct ServerSlot {
    current: RwLock<Arc<ComponentServer>>,
}

impl ServerSlot {
    pub fn new(server: Arc<ComponentServer>) -> Arc<Self> {
        Arc::new(Self {
            current: RwLock::new(server),
        })
    }

    /// The server new requests go to.
    pub fn current(&self) -> Arc<ComponentServer> {
        // A panic while holding the lock cannot leave a half-written Arc.
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sends new requests to `server` from now on; gives back the one replaced.
    pub fn replace(&self, server: Arc<ComponentServer>) -> Arc<ComponentServer> {
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *current, server)
    }
}

impl Handler for ServerSlot {
    async fn handle(
        self: Arc<Self>,
        req: hyper::Request<Incoming>,
        peer: SocketAddr,
    ) -> HostResponse {
        self.current().handle(req, peer).await
    }
}
