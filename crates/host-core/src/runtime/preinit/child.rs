//! A component's cold work (its snapshot, compiling it) done in a child process.
//!
//! Compiling a component and pre-initializing it leave the compiler's and the
//! initialization's working memory behind in the process that did it: glibc keeps what
//! they freed in its arenas, fragmented around what stays alive. `up` does that work for
//! its models before serving them, and a first `up` (an empty cache) held 30-50 MiB more
//! anonymous memory for good than one whose cache had been written before (13 molprop and 12
//! solubility models: 148-171 MiB VmRSS against 116-122; docs/BENCHMARKS.md, issue 27).
//! So when a component's snapshot or compiled code is not in the cache yet,
//! [`crate::runtime::preinit::prepare`] (asked for `ColdWork::InChild`: by `up` for its
//! models and its own services, by `runtime-host model`, `serve` and `registry`) runs
//! `runtime-host prepare` on it (that command is [`crate::runtime::preinit::prepare`] with
//! `ColdWork::Here`), which writes both into the cache and exits, memory and all; the
//! process then maps them from the cache as it would after a restart.
//!
//! The child gets what decides the cache's entries: the component, its mounts, the memory
//! cap and the cache directory. Whatever goes wrong there (it cannot start, the
//! initialization fails), the process does the work itself afterwards as it always could,
//! and says why in its own log.

use crate::capabilities::files::Mounts;
use crate::runtime::limits::Limits;
use anyhow::{Context, Result};
use std::path::Path;
use std::process::Stdio;

/// Has a child process put what `component` (served with `mounts` and `limits`) needs into
/// the cache; [`crate::runtime::preinit::prepare`] asks for it when the cache lacks
/// something. Failing that, the caller does the work itself: the failure is logged, not
/// returned. Dropping the future kills the child.
pub async fn fill_cache(component: &Path, mounts: &Mounts, limits: &Limits, cache_dir: &Path) {
    tracing::info!(
        component = %component.display(),
        "the cache lacks its compiled code or snapshot: preparing it in a child process"
    );
    let started = std::time::Instant::now();
    let max_memory_mib = limits.max_memory_bytes >> 20;
    match prepare(component, mounts, max_memory_mib, cache_dir).await {
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

/// Runs `runtime-host prepare` for `component` with `mounts` and waits for it.
async fn prepare(
    component: &Path,
    mounts: &Mounts,
    max_memory_mib: usize,
    cache_dir: &Path,
) -> Result<()> {
    let exe = std::env::current_exe().context("finding this program to run it again")?;
    let mut command = tokio::process::Command::new(exe);
    command
        .arg("prepare")
        .arg(component)
        .arg("--cache-dir")
        .arg(cache_dir)
        .arg("--max-memory-mib")
        .arg(max_memory_mib.to_string());
    for mount in mounts.dir_args() {
        command.arg("--dir").arg(mount);
    }
    let output = command
        // Its warnings (an initialization that failed) are written again by `up` itself if
        // it has to do the work; its progress is not news.
        .env("RUNTIME_HOST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .context("starting `runtime-host prepare`")?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        anyhow::bail!(
            "`runtime-host prepare {}` ended with {}: {}",
            component.display(),
            output.status,
            said.trim()
        );
    }
    Ok(())
}
