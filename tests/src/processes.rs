//! Waiting on processes and on what they say: a stack's `stack ready`, an exit, a line of
//! output, a condition polled; signals to them; which are still running.

use crate::host_binary;

/// Waits until a `runtime-host up` child prints `stack ready` (its stdout must be piped);
/// kills it and panics if it does not within `timeout`.
pub fn wait_for_stack_ready(child: &mut std::process::Child, timeout: std::time::Duration) {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("up's stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if line.trim() == "stack ready" {
                let _ = tx.send(());
            }
        }
    });
    match rx.recv_timeout(timeout) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let status = child.wait().expect("waiting for runtime-host up");
            panic!("runtime-host up exited ({status}) before it was ready");
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            let _ = child.kill();
            panic!("runtime-host up did not become ready within {timeout:?}");
        }
    }
}

/// Sends SIGINT (Ctrl-C) to a child process.
pub fn interrupt(child: &std::process::Child) {
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .is_ok_and(|s| s.success());
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

/// Waits up to `timeout` for `child` to exit; `None` if it is still running then.
pub fn wait_for_exit(
    child: &mut std::process::Child,
    timeout: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("waiting for a child process") {
            return Some(status);
        }
        if start.elapsed() >= timeout {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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

/// The command lines (arguments joined by spaces) of this machine's processes that contain
/// every one of `needles`: what a test checks is no longer running.
pub fn processes_with(needles: &[&str]) -> Vec<String> {
    std::fs::read_dir("/proc")
        .expect("reading /proc")
        .flatten()
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| needles.iter().all(|n| c.contains(n)))
        .collect()
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
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The resident memory of process `pid`, in MiB.
pub fn rss_mib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS") >> 10
}
