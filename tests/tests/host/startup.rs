//! Start-up that never loses a model or a Ctrl-C (issue 23):
//! - Ctrl-C at any moment: `up`, `model` and `registry` stop what they started, in order,
//!   unregister what registered and exit 0 by themselves, whether the parent left SIGINT at
//!   its default or ignored it (as shells do for background jobs);
//! - a self-test that runs out of time is tried again before the model is declared failed,
//!   and `up`'s table says why a model failed.

use e2e_tests::{HostBuilder, component, host_binary, interrupt, temp_dir, wait_for_exit};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the parent leaves SIGINT for the child.
#[derive(Clone, Copy, Debug)]
enum Disposition {
    Default,
    /// `trap '' INT` before `exec`, as a shell does for `cmd &`.
    Ignored,
}

/// A `runtime-host` child whose stdout and stderr are kept, line by line.
struct Child2 {
    child: Child,
    output: Arc<Mutex<String>>,
}

impl Child2 {
    fn spawn(args: &[String], how: Disposition) -> Self {
        let mut cmd = match how {
            Disposition::Default => Command::new(host_binary()),
            Disposition::Ignored => {
                let mut c = Command::new("sh");
                c.args(["-c", r#"trap '' INT; exec "$0" "$@""#])
                    .arg(host_binary());
                c
            }
        };
        let mut child = cmd
            .args(args)
            .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning runtime-host");
        let output = Arc::new(Mutex::new(String::new()));
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let out = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let mut o = out.lock().unwrap();
                    o.push_str(&line);
                    o.push('\n');
                }
            });
        }
        Self { child, output }
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Waits until the output holds `needle` (panics with the output after `timeout`).
    fn wait_for(&self, needle: &str, timeout: Duration) {
        let start = Instant::now();
        while !self.output().contains(needle) {
            assert!(
                start.elapsed() < timeout,
                "no `{needle}` within {timeout:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Ctrl-C; the process must exit 0 by itself within 20 s. Returns its output.
    fn interrupt_and_expect_orderly_exit(mut self, moment: &str) -> String {
        interrupt(&self.child);
        let status = wait_for_exit(&mut self.child, Duration::from_secs(20));
        let output = self.output();
        let Some(status) = status else {
            let _ = self.child.kill();
            panic!("still running 20 s after Ctrl-C {moment}:\n{output}");
        };
        assert!(
            status.success(),
            "Ctrl-C {moment}: {status:?} (killed by the signal, or failed):\n{output}"
        );
        output
    }
}

impl Drop for Child2 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Log lines of models that registered, and of registrations given back.
fn count(output: &str, event: &str) -> usize {
    output
        .lines()
        .filter(|l| l.contains(&format!(": {event} ")) || l.ends_with(&format!(": {event}")))
        .count()
}

/// `up` with molprop and the two ONNX models, on free ports.
fn up_args(data: &std::path::Path) -> Vec<String> {
    let models = data.join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::copy(component("molprop"), models.join("molprop.wasm")).unwrap();
    for onnx in ["iris", "solubility"] {
        std::os::unix::fs::symlink(e2e_tests::model_dir(onnx), models.join(onnx)).unwrap();
    }
    up_args_with(data, &models)
}

/// `up` with the models of `models`, on free ports.
fn up_args_with(data: &std::path::Path, models: &std::path::Path) -> Vec<String> {
    let first = e2e_tests::port_block(6);
    [
        "up",
        "--models",
        &models.display().to_string(),
        "--ports",
        &format!("{first}-{}", first + 5),
        "--registry-port",
        &e2e_tests::free_port().to_string(),
        "--chat-port",
        &e2e_tests::free_port().to_string(),
        "--app-port",
        &e2e_tests::free_port().to_string(),
        "--data-dir",
        &data.join("data").display().to_string(),
    ]
    .map(str::to_owned)
    .to_vec()
}

fn up_stops_in_order_at_every_moment(how: Disposition) {
    // Right away (compiling), once the first model registered, and once ready.
    for moment in ["at once", "after a registration", "when ready"] {
        let dir = temp_dir();
        let up = Child2::spawn(&up_args(dir.path()), how);
        match moment {
            "at once" => std::thread::sleep(Duration::from_millis(300)),
            "after a registration" => up.wait_for(": registered", Duration::from_secs(180)),
            _ => up.wait_for("stack ready", Duration::from_secs(180)),
        }
        let out = up.interrupt_and_expect_orderly_exit(&format!("{moment} ({how:?})"));
        assert!(out.contains("stack stopped"), "{moment} ({how:?}):\n{out}");
        assert_eq!(
            count(&out, "unregistered"),
            count(&out, "registered"),
            "every registration given back, {moment} ({how:?}):\n{out}"
        );
    }
}

#[test]
fn up_stops_in_order_at_any_moment_of_start_up() {
    up_stops_in_order_at_every_moment(Disposition::Default);
}

#[test]
fn up_started_with_sigint_ignored_still_stops_on_ctrl_c() {
    up_stops_in_order_at_every_moment(Disposition::Ignored);
}

#[tokio::test(flavor = "multi_thread")]
async fn model_and_registry_stop_in_order_during_start_up() {
    for how in [Disposition::Default, Disposition::Ignored] {
        // The registry, at once.
        let dir = temp_dir();
        let args: Vec<String> = ["registry", "--listen", "127.0.0.1:0", "--data-dir"]
            .map(str::to_owned)
            .into_iter()
            .chain([dir.path().display().to_string()])
            .collect();
        let registry = Child2::spawn(&args, how);
        std::thread::sleep(Duration::from_millis(100));
        registry.interrupt_and_expect_orderly_exit(&format!("to the registry ({how:?})"));

        // A model, at once and right after it registered; it leaves no registration behind.
        // On its own range: with the test binaries running side by side, a model on the
        // default range's 5100 met other tests' clients and outlived its Ctrl-C.
        let (rdir, first) = (temp_dir(), e2e_tests::port_block(4));
        let reg = HostBuilder::registry(rdir.path())
            .arg("--ports")
            .arg(format!("{first}-{}", first + 3))
            .start();
        for wait_for_registration in [false, true] {
            let mdir = temp_dir();
            let args: Vec<String> = ["model", &component("molprop").display().to_string()]
                .map(str::to_owned)
                .into_iter()
                .chain(["--registry".into(), reg.base_url()])
                .chain(["--data-dir".into(), mdir.path().display().to_string()])
                .collect();
            let model = Child2::spawn(&args, how);
            if wait_for_registration {
                model.wait_for(": registered", Duration::from_secs(60));
            } else {
                std::thread::sleep(Duration::from_millis(100));
            }
            let out = model.interrupt_and_expect_orderly_exit(&format!("to a model ({how:?})"));
            assert_eq!(
                count(&out, "unregistered"),
                count(&out, "registered"),
                "{out}"
            );
            let listing: edge_api::registry::RegistryListing = e2e_tests::Client::new()
                .get(&reg.url("/registry"))
                .await
                .json();
            assert_eq!(listing.count, 0, "nothing left registered ({how:?})");
        }
    }
}

/// Ctrl-C while a child process prepares a model's snapshot (an empty cache) stops the model
/// at once: the child is killed, not waited for (it would have written the snapshot).
#[test]
fn a_model_stops_at_once_while_a_child_prepares_it() {
    let dir = temp_dir();
    let cache = dir.path().join("cache");
    let args: Vec<String> = ["model", &component("onnx-model").display().to_string()]
        .map(str::to_owned)
        .into_iter()
        .chain([
            "--dir".into(),
            format!("{}:/model", e2e_tests::model_dir("solubility").display()),
        ])
        .chain(["--cache-dir".into(), cache.display().to_string()])
        .chain([
            "--data-dir".into(),
            dir.path().join("data").display().to_string(),
        ])
        .chain(["--registry".into(), "http://127.0.0.1:9".into()])
        .collect();
    let model = Child2::spawn(&args, Disposition::Default);
    model.wait_for("preparing it in a child process", Duration::from_secs(30));
    let out = model.interrupt_and_expect_orderly_exit("while a child prepares the model");
    assert!(out.contains("stopped during start-up"), "{out}");
    let snapshots = std::fs::read_dir(cache.join("snapshots")).map_or(0, |d| d.count());
    assert_eq!(
        snapshots, 0,
        "the child was stopped before its snapshot:\n{out}"
    );
    let cache = cache.display().to_string();
    let left = e2e_tests::processes_with(&[" prepare ", &cache]);
    assert!(left.is_empty(), "the child outlived the model: {left:?}");
}

#[test]
fn a_self_test_out_of_time_is_retried_and_the_failure_is_named() {
    // A self-test that takes 1.5 s under its own deadline of 1 s: every attempt times out.
    let dir = temp_dir();
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::copy(component("echo-model"), models.join("echo.wasm")).unwrap();
    let mut args = up_args_with(dir.path(), &models);
    args.extend(
        [
            "--self-test-deadline",
            "1s",
            "--variable",
            "echo_busy_ms=1500",
        ]
        .map(str::to_owned),
    );
    let up = Child2::spawn(&args, Disposition::Default);
    up.wait_for("stack ready", Duration::from_secs(120));
    let out = up.interrupt_and_expect_orderly_exit("after a failed model");
    let retries = out.matches("trying again").count();
    assert_eq!(retries, 2, "two more attempts before giving up:\n{out}");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("echo "))
        .unwrap_or_else(|| panic!("no table row for echo:\n{out}"));
    assert!(
        row.contains("failed: the model failed its self-test"),
        "the table says why: {row}"
    );
    assert!(
        out.contains("deadline of 1 s"),
        "the self-test's own deadline is the one named:\n{out}"
    );
}

#[test]
fn the_self_test_has_its_own_deadline_apart_from_requests() {
    // Requests may take 1 s; the self-test takes 1.5 s and is allowed its default 120 s.
    let dir = temp_dir();
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::copy(component("echo-model"), models.join("echo.wasm")).unwrap();
    let mut args = up_args_with(dir.path(), &models);
    args.extend(["--deadline", "1s", "--variable", "echo_busy_ms=1500"].map(str::to_owned));
    let up = Child2::spawn(&args, Disposition::Default);
    up.wait_for("stack ready", Duration::from_secs(120));
    let out = up.interrupt_and_expect_orderly_exit("after start-up");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("echo "))
        .unwrap_or_else(|| panic!("no table row for echo:\n{out}"));
    assert!(row.ends_with("registered"), "{row}");
    assert!(
        !out.contains("trying again"),
        "passed at the first try:\n{out}"
    );
}
