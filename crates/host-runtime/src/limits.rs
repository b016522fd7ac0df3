//! Per-request limits and how a guest that hits one is recognised afterwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Limits applied to every request a host serves.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Wall-clock time a request may take, guest execution and host calls included.
    pub deadline: Duration,
    /// Linear memory one component instance may grow to.
    pub max_memory_bytes: usize,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Requests served at once; more are answered 503 `overloaded` at once.
    pub max_concurrency: usize,
    /// Requests one instance serves, one after another, before it is replaced (1: a fresh
    /// instance for every request).
    pub instance_reuse: usize,
    /// How long an instance may wait for its next request before it is dropped.
    pub instance_idle: Duration,
    /// Instances of one component alive at once; further requests wait (within their
    /// deadline) for one to be free. 0: one per request in flight.
    pub max_instances: usize,
}

/// Default of `--instance-reuse` (see docs/BENCHMARKS.md for the measurements behind it: a
/// model component reloads its model on every new instance).
pub const DEFAULT_INSTANCE_REUSE: usize = 4096;
/// Default of `--instance-idle`.
pub const DEFAULT_INSTANCE_IDLE: Duration = Duration::from_secs(5);

/// Default of `--max-held-bodies` (see `http::held`): 256 MiB, the bodies of 256 requests
/// at the default 1 MiB cap (the default `--max-concurrency`).
pub const DEFAULT_MAX_HELD_BYTES: usize = 256 << 20;
/// Default of `--max-receiving`.
pub const DEFAULT_MAX_RECEIVING: usize = 1024;

/// Default of `--max-instances`: 4 per core. More instances than cores add no throughput to
/// CPU-bound guests, and the headroom covers guests waiting on the store.
pub fn default_max_instances() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(30),
            max_memory_bytes: 128 << 20,
            max_body_bytes: 1 << 20,
            max_concurrency: 256,
            instance_reuse: DEFAULT_INSTANCE_REUSE,
            instance_idle: DEFAULT_INSTANCE_IDLE,
            max_instances: default_max_instances(),
        }
    }
}

/// Refuses memory growth past the cap and remembers that it did, so the trap that follows
/// (a Rust guest aborts on allocation failure) is reported as a memory error.
pub struct MemoryLimiter {
    cap: usize,
    exceeded: Arc<AtomicBool>,
}

impl MemoryLimiter {
    pub fn new(cap: usize) -> (Self, Arc<AtomicBool>) {
        let flag = Arc::new(AtomicBool::new(false));
        (
            Self {
                cap,
                exceeded: flag.clone(),
            },
            flag,
        )
    }
}

/// Table elements an instance may grow to; generous, but bounded.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.cap {
            self.exceeded.store(true, Ordering::Relaxed);
            return Ok(false);
        }
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.exceeded.store(true, Ordering::Relaxed);
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// The error an epoch callback raises when a request's deadline has passed.
#[derive(Debug)]
pub struct DeadlineExceeded(pub Duration);

impl std::fmt::Display for DeadlineExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "request exceeded its deadline of {:?}", self.0)
    }
}

impl std::error::Error for DeadlineExceeded {}
