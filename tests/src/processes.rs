//! Waiting on processes and on what they say: a stack's `stack ready`, an exit, a line of
//! output, a condition polled; signals to them; which are still running. The plumbing is
//! the workspace's process harness (`crates/process-harness`), which the bench and the
//! fleet share; what is here is what the tests add to it.

use crate::host_binary;
use process_harness::{Transcript, Unsaid};

pub use process_harness::{processes_with, wait_for_exit};

/// Waits until a `runtime-host up` child prints `stack ready` (its stdout must be piped);
/// kills it and panics if it does not within `timeout`.
pub fn wait_for_stack_ready(child: &mut std::process::Child, timeout: std::time::Duration) {
    let stdout = Transcript::new();
    stdout.keep(child.stdout.take().expect("up's stdout is piped"));
    match stdout.wait_for_line(|line| line.trim() == "stack ready", timeout) {
        Ok(_) => {}
        Err(Unsaid::Ended) => {
            let status = child.wait().expect("waiting for runtime-host up");
            panic!("runtime-host up exited ({status}) before it was ready");
        }
        Err(Unsaid::TimedOut(_)) => {
            let _ = child.kill();
            panic!("runtime-host up did not become ready within {timeout:?}");
        }
    }
}

/// Sends SIGINT (Ctrl-C) to a child process.
pub fn interrupt(child: &std::process::Child) {
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) } == 0;
    assert!(sent, "could not send SIGINT to {}", child.id());
}

/// Runs `runtime-host ARGS` expecting it to refuse and exit by itself within `timeout`
/// (killed then, so a regression that starts serving fails instead of hanging). Returns its
/// standard error; panics if it ran on or exited successfully.
pub fn host_refuses(args: &[&str], timeout: std::time::Duration) -> String {
    let mut child = std::process::Command::new(host_binary())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running runtime-host");
    let status = wait_for_exit(&mut child, timeout);
    let _ = child.kill();
    let out = child.wait_with_output().expect("runtime-host's output");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        status.is_some_and(|s| !s.success()),
        "runtime-host {args:?} did not refuse within {timeout:?} ({status:?}): {err}"
    );
    err
}

/// Polls `check` every 100 ms until it holds; fails the test naming `what` after `within`.
pub async fn until<F: std::future::Future<Output = bool>>(
    what: &str,
    within: std::time::Duration,
    mut check: impl FnMut() -> F,
) {
    let started = std::time::Instant::now();
    while !check().await {
        assert!(started.elapsed() < within, "{what} within {within:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Waits until what `said` returns (a process's output so far) contains `text`; fails the
/// test naming `what` after `within`.
pub async fn until_said(
    what: &str,
    within: std::time::Duration,
    said: impl Fn() -> String,
    text: &str,
) {
    until(what, within, || {
        let done = said().contains(text);
        async move { done }
    })
    .await;
}

/// As many connections as the file limit allows up to `wanted` (raised to its hard limit
/// first; the host started afterwards inherits it), keeping 200 for everything else.
pub fn connections_allowed(wanted: usize) -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with a valid struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
    wanted.min((limit.rlim_cur as usize).saturating_sub(200))
}

/// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `RssAnon`, `RssFile`).
pub fn status_kib(pid: u32, field: &str) -> u64 {
    process_harness::status_kib(pid, field)
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The resident memory of process `pid`, in MiB.
pub fn rss_mib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS") >> 10
}
