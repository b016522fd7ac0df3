//! A component's cold work (its snapshot, compiling it) done in a child process.
//!
//! Compiling a component and pre-initializing it leave the compiler's and the
//! initialization's working memory behind in the process that did it: glibc keeps what
//! they freed in its arenas, fragmented around what stays alive. `up` does that work for
//! its models before serving them, and a first `up` (an empty cache) held 30-50 MiB more
//! anonymous memory for good than one whose cache had been written before (13 molprop and 12
//! solubility models: 148-171 MiB VmRSS against 116-122; docs/BENCHMARKS.md, issue 27).
//! So when a component's snapshot or compiled code is not in the cache yet,
//! [`crate::preinit::prepare`] (asked for `ColdWork::InChild`: by `up` for its
//! models and its own services, by `runtime-host model`, `serve` and `registry`) runs a
//! child process on it that does the same with `ColdWork::Here`, writes both into the cache
//! and exits, memory and all; the process then maps them from the cache as it would after
//! a restart. Which program and command line that is, is the program's business: it says
//! so with a [`ChildCommand`] (runtime-host's is its hidden `prepare` command).
//!
//! The child gets what decides the cache's entries: the component, its mounts, the memory
//! cap and the cache directory. Whatever goes wrong there (it cannot start, the
//! initialization fails), the process does the work itself afterwards as it always could,
//! and says why in its own log.

use crate::limits::Limits;
use anyhow::{Context, Result};
use host_capabilities::files::Mounts;
use std::path::Path;
use std::process::Stdio;

/// What a child process is asked to put into the cache: `component`, as a deployment with
/// `mounts` and a memory cap of `max_memory_mib` would have it, in `cache_dir`.
pub struct ChildJob<'a> {
    pub component: &'a Path,
    pub mounts: &'a Mounts,
    pub max_memory_mib: usize,
    pub cache_dir: &'a Path,
}

/// The command that runs a child doing `job` (it must exit 0 once the cache holds it).
pub type ChildCommand = fn(&ChildJob<'_>) -> Result<tokio::process::Command>;

/// Has a child process (started by `command`) put what `component` (served with `mounts` and
/// `limits`) needs into the cache; [`crate::preinit::prepare`] asks for it when the
/// cache lacks something. Failing that, the caller does the work itself: the failure is
/// logged, not returned. Dropping the future kills the child.
pub async fn fill_cache(
    command: ChildCommand,
    component: &Path,
    mounts: &Mounts,
    limits: &Limits,
    cache_dir: &Path,
) {
    tracing::info!(
        component = %component.display(),
        "the cache lacks its compiled code or snapshot: preparing it in a child process"
    );
    let started = std::time::Instant::now();
    let job = ChildJob {
        component,
        mounts,
        max_memory_mib: limits.max_memory_bytes >> 20,
        cache_dir,
    };
    match run(command, &job).await {
        Ok(()) => tracing::info!(
            component = %component.display(),
            took_ms = started.elapsed().as_millis() as u64,
            "compiled (and snapshotted, where it has a snapshot) in a child process"
        ),
        Err(e) => tracing::warn!(
            component = %component.display(),
            "could not prepare the component in a child process; doing it here: {e:#}"
        ),
    }
}

/// Runs the child for `job` and waits for it.
async fn run(command: ChildCommand, job: &ChildJob<'_>) -> Result<()> {
    let mut child = command(job)?;
    let shown = format!("{:?}", child.as_std());
    let mut running = child
        // Its warnings (an initialization that failed) are written again by the parent if it
        // has to do the work; its progress is not news.
        .env("RUNTIME_HOST_LOG", "error")
        // A pipe nothing is written to: the child ends when it closes, which the kernel does
        // whenever this process ends, however (see `runtime-host prepare --until-stdin-closes`).
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {shown}"))?;
    let held_open = running.stdin.take();
    let output = running
        .wait_with_output()
        .await
        .with_context(|| format!("running {shown}"))?;
    drop(held_open);
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        anyhow::bail!("{shown} ended with {}: {}", output.status, said.trim());
    }
    Ok(())
}
