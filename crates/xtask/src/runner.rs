//! Runs the workspace's tests several processes at a time.
//!
//! `cargo test` runs one test binary after another; most of ours spend their time waiting on
//! the servers they start, so on two cores the run was mostly idle. Here cargo builds the
//! binaries once (`--no-run`), and each job (a binary, or one module of the end-to-end
//! binary, see [`crate::test_binaries`]) then runs as its own process, a few at a time, the
//! slowest of the last run first, so the long ones do not end up alone at the tail. Each
//! job's output is kept in `target/xtask-tests/<name>.log` and printed whole when it ends,
//! with libtest's own `test result:` line, so tools still read the summary.

use crate::test_binaries::Binary;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest one test binary may run before it is stopped and counted as failed: a hung test
/// should name itself, not eat CI's whole time limit.
const BINARY_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// One run of a binary: a label for the log, and the variables it runs with.
pub struct Job {
    pub label: String,
    pub binary: Binary,
    pub env: Vec<(String, String)>,
    /// Further arguments for the binary (e.g. `--skip NAME`).
    pub args: Vec<String>,
    /// Runs with no other binary beside it: it loads every core on purpose (the bench) or
    /// times CPU-bound work against deadlines (the embedding model).
    pub alone: bool,
}

/// What the jobs added up to.
#[derive(Default)]
pub struct Totals {
    pub passed: u64,
    pub failed: u64,
    /// Every binary exited successfully.
    pub ok: bool,
    /// What each failed binary said about its failures, to repeat at the very end, where
    /// a CI log cut to its tail still shows why.
    pub failures: Vec<(String, String)>,
}

/// Runs `jobs`: those not `alone` at most `parallel` at once, then each `alone` one by
/// itself; the longest of the last run first (times kept in `log_dir/times.json`). Prints
/// each job's output as it ends and returns the totals.
pub fn run(jobs: Vec<Job>, parallel: usize, log_dir: &Path) -> Result<Totals, String> {
    std::fs::create_dir_all(log_dir).map_err(|e| format!("{}: {e}", log_dir.display()))?;
    let times_file = log_dir.join("times.json");
    let mut times = read_times(&times_file);
    let mut totals = Totals {
        ok: true,
        ..Totals::default()
    };
    let started = Instant::now();
    let (alone, shared): (Vec<Job>, Vec<Job>) = jobs.into_iter().partition(|j| j.alone);
    run_pool(shared, parallel, log_dir, &mut times, &mut totals)?;
    run_pool(alone, 1, log_dir, &mut times, &mut totals)?;
    eprintln!(
        "xtask: every test binary ran in {:.0} s, {parallel} at a time (those that need the \
         machine to themselves alone)",
        started.elapsed().as_secs_f64(),
    );
    write_times(&times_file, &times);
    Ok(totals)
}

/// Runs `jobs` at most `parallel` at once, the longest of the last run first.
fn run_pool(
    mut jobs: Vec<Job>,
    parallel: usize,
    log_dir: &Path,
    times: &mut BTreeMap<String, f64>,
    totals: &mut Totals,
) -> Result<(), String> {
    // Unknown jobs count as long: a new test file is started early rather than last.
    let expected = |label: &str| times.get(label).copied().unwrap_or(f64::MAX);
    jobs.sort_by(|a, b| expected(&b.label).total_cmp(&expected(&a.label)));
    let (done_tx, done_rx) = mpsc::channel();
    let mut waiting = jobs.into_iter();
    let mut running = 0usize;
    loop {
        while running < parallel.max(1) {
            let Some(job) = waiting.next() else { break };
            let log = log_dir.join(format!("{}.log", job.label));
            let child = spawn(&job, &log)?;
            let done = done_tx.clone();
            std::thread::spawn(move || {
                let outcome = wait(child, BINARY_TIMEOUT);
                let _ = done.send((job.label, log, outcome));
            });
            running += 1;
        }
        if running == 0 {
            return Ok(());
        }
        let (label, log, (status, took)) = done_rx.recv().map_err(|e| e.to_string())?;
        running -= 1;
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        println!(
            "\n     Ran {label} in {:.1} s ({status}); output kept in {}",
            took.as_secs_f64(),
            log.display()
        );
        print!("{output}");
        let (passed, failed) = count(&output);
        totals.passed += passed;
        totals.failed += failed;
        if status != "ok" {
            totals.ok = false;
            println!("xtask: {label}: {status}");
            totals
                .failures
                .push((label.clone(), failure_report(&output, &status)));
        }
        times.insert(label, took.as_secs_f64());
    }
}

fn spawn(job: &Job, log: &Path) -> Result<Child, String> {
    let out = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    Command::new(&job.binary.executable)
        // --show-output: the agreement-with-RDKit tables and the RSS figure that tests print
        // belong in the log even when they pass.
        .arg("--show-output")
        .args(&job.args)
        .current_dir(&job.binary.dir)
        .envs(job.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", job.binary.executable.display()))
}

/// Waits for `child` up to `timeout` (killing it then); says how it ended and how long it took.
fn wait(mut child: Child, timeout: Duration) -> (String, Duration) {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return ("ok".into(), start.elapsed()),
            Ok(Some(status)) => return (format!("failed, {status}"), start.elapsed()),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return (
                    format!("stopped after {} s", timeout.as_secs()),
                    start.elapsed(),
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return (format!("lost: {e}"), start.elapsed()),
        }
    }
}

/// The part of a failed binary's output that says why: libtest's `failures:` section (the
/// panic messages), at most 80 lines; its last lines if it has none (it crashed or hung).
pub fn failure_report(output: &str, status: &str) -> String {
    const MAX_LINES: usize = 80;
    let lines: Vec<&str> = output.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == "failures:")
        .unwrap_or(lines.len().saturating_sub(MAX_LINES / 2));
    let mut report: Vec<&str> = lines[start..].iter().take(MAX_LINES).copied().collect();
    if lines.len() - start > MAX_LINES {
        report.push("[... cut; the whole output is in the log]");
    }
    format!("{status}\n{}", report.join("\n"))
}

/// Passed and failed tests in libtest's `test result:` lines of `output`.
pub fn count(output: &str) -> (u64, u64) {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("test result: "))
        .fold((0, 0), |(p, f), rest| {
            (
                p + count_before(rest, "passed"),
                f + count_before(rest, "failed"),
            )
        })
}

/// The number before `label` in a libtest summary (`ok. 7 passed; 0 failed; ...`).
fn count_before(summary: &str, label: &str) -> u64 {
    summary
        .split(';')
        .find_map(|part| part.trim().strip_suffix(label))
        .and_then(|n| n.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn read_times(file: &Path) -> BTreeMap<String, f64> {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.as_object().cloned())
        .map(|o| {
            o.into_iter()
                .filter_map(|(k, v)| Some((k, v.as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

fn write_times(file: &Path, times: &BTreeMap<String, f64>) {
    let value: serde_json::Map<String, serde_json::Value> = times
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::json!((v * 10.0).round() / 10.0)))
        .collect();
    let _ = std::fs::write(
        file,
        serde_json::to_string_pretty(&value).unwrap_or_default(),
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_libtest_summaries() {
        let out = "running 9 tests\n\
                   test result: ok. 7 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.76s\n\
                   test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.1s\n";
        assert_eq!(super::count(out), (8, 2));
    }

    #[test]
    fn a_failure_report_starts_at_the_failures_section() {
        let out = "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\nfailures:\n\n\
                   ---- b stdout ----\npanicked at tests/b.rs:3:5: names the port\n";
        let report = super::failure_report(out, "failed, exit status: 101");
        assert!(report.starts_with("failed, exit status: 101\nfailures:"));
        assert!(report.contains("names the port"));
        assert!(!report.contains("test a ... ok"));
        let hung = (0..200).map(|i| format!("line {i}\n")).collect::<String>();
        let report = super::failure_report(&hung, "stopped after 900 s");
        assert!(report.contains("line 199") && !report.contains("line 100\n"));
    }
}
