//! Batches run on threads of their own, at a lower priority, so short requests never wait
//! behind them. Every deployment of a process shares its cores: eight 1,000-item batches at
//! once kept another model's `/health` at a median of 134-215 ms (the specification's
//! guideline is 100 ms), as a guest yields only every epoch tick and the short request
//! queued behind all of them on the same worker threads. So a request with a large body (a
//! batch: [`BATCH_BYTES`] or more) runs its guest on a runtime of its own whose threads
//! (`--batch-lanes` in the process's [`crate::settings`], by default one per core) are niced (10): batches still use every core
//! the short requests leave, and the kernel runs a short request's thread first whenever it
//! has work, so `/health` answers in milliseconds beside them.

use host_support::task::AbortOnDrop;
use std::future::Future;
use std::sync::OnceLock;

/// Bytes of body from which a request counts as a batch: a few hundred SMILES.
pub const BATCH_BYTES: usize = 16 << 10;

/// The nice value of the batch threads: the kernel gives a thread at 0 about nine times the
/// CPU of one at 10 when both want it.
const BATCH_NICENESS: i32 = 10;

static LANES: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

fn runtime() -> &'static tokio::runtime::Runtime {
    LANES.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(crate::settings::current().batch_lanes)
            .thread_name("batch-lane")
            .on_thread_start(lower_priority)
            .enable_all()
            .build()
            .expect("starting the batch threads")
    })
}

#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: on Linux, PRIO_PROCESS with this thread's id sets this thread's nice value
    // alone (threads have their own); a failure leaves it at the default, which is harmless.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, BATCH_NICENESS);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

/// Runs `work` where a request with a body of `body_len` bytes belongs: here for a short
/// one, on the batch threads for a batch.
pub async fn run<F>(body_len: usize, work: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if body_len < BATCH_BYTES {
        return work.await;
    }
    // Aborted if this future is dropped (its client went away), so the request's own guards
    // run now, as they would on the main runtime, rather than whenever the work ends.
    let mut task = AbortOnDrop(runtime().spawn(work));
    match (&mut task.0).await {
        Ok(output) => output,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => unreachable!("the batch runtime lives as long as the process"),
    }
}
