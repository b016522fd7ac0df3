//! One connection's two ends, put in each request's extensions by the listener, so that a
//! service can ask who is at the other end (the registry's caller identification does).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// The two ends of a connection, and room for the process found at the client's end.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    pub peer: SocketAddr,
    pub local: SocketAddr,
    /// The process holding the client's end, once someone asked: kept for the connection's
    /// later requests. A socket changes hands only when its holder gives it away (forks, or
    /// passes the descriptor), so whoever reads it asks again only once that process ended.
    peer_process: Arc<Mutex<Option<u32>>>,
}

impl ConnInfo {
    pub fn new(peer: SocketAddr, local: SocketAddr) -> Self {
        Self {
            peer,
            local,
            peer_process: Arc::default(),
        }
    }

    /// The process at the client's end, as last found (`None` until someone looks).
    pub fn peer_process(&self) -> MutexGuard<'_, Option<u32>> {
        // Setting an `Option<u32>` cannot be left half-done: poisoning is harmless.
        self.peer_process.lock().unwrap_or_else(|p| p.into_inner())
    }
}
