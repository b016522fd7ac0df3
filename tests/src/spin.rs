//! The project's `spin.toml` under the real Spin (`spin up`), as a child process on a free
//! port with a state directory of its own: the components `cargo xtask test` built, the
//! embedding model's files linked where Spin looks for them, the chat admin token given as a
//! Spin variable. Stopped when dropped; its log is printed when it fails to start.

use process_harness::{Output, Process, Signal, Transcript};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The Spin CLI: `SPIN`, else `spin` on the PATH, else the one the project's machines share
/// (`../shared/bin/spin` beside the repository; see its README).
pub fn spin_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SPIN") {
        return Some(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("spin"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let shared = crate::workspace_root().join("../shared/bin/spin");
        shared.is_file().then_some(shared)
    })
}

/// The Spin CLI, or `None` where there is none (see [`crate::tools::require_or_skip`]).
pub fn spin_or_skip(test: &str) -> Option<PathBuf> {
    crate::tools::require_or_skip(crate::tools::Tool::Spin, test, spin_binary())
}

/// The project's app serves once its registry answers (Spin compiles every component first).
const APP_READY: &str = "/registry";

/// How one `spin up` is started beside its manifest and token.
struct Start<'a> {
    runtime_config: Option<&'a Path>,
    variables: &'a [(&'a str, &'a str)],
    /// The path that answers 200 once the app serves.
    ready: &'a str,
}

impl Start<'_> {
    /// The project's app as it is: Spin's default stores, the manifest's variables.
    fn app() -> Self {
        Start {
            runtime_config: None,
            variables: &[],
            ready: APP_READY,
        }
    }
}

/// `spin up` of the project's app.
pub struct SpinApp {
    process: Process,
    pub port: u16,
    log: Transcript,
    /// Its state directory, where the test made one.
    _state: Option<tempfile::TempDir>,
}

impl SpinApp {
    /// Starts the app with the chat admin token `token`, or `None` (announced loudly, naming
    /// `test`) where Spin is not here, or a failure where the test command has it.
    pub fn up(test: &str, token: &str) -> Option<Self> {
        Self::up_with(test, token, None, &[])
    }

    /// [`SpinApp::up`] with Spin's runtime configuration file (`--runtime-config-file`: its
    /// stores on Redis, say) and further application `variables` (`--variable name=value`,
    /// e.g. a short `registry_ttl_secs`).
    pub fn up_with(
        test: &str,
        token: &str,
        runtime_config: Option<&Path>,
        variables: &[(&str, &str)],
    ) -> Option<Self> {
        let manifest = crate::workspace_root().join("spin.toml");
        let spin = spin_or_skip(test)?;
        let from = manifest.display().to_string();
        let start = Start {
            runtime_config,
            variables,
            ready: APP_READY,
        };
        Some(Self::start(&spin, &from, token, start))
    }

    /// The app pushed to a registry, run from its `reference` (`spin up --from`, certificate
    /// checks off for a plain-HTTP registry on loopback) in an empty directory, with Spin's
    /// runtime configuration file where given (its LLM calls sent to runtime-host, say).
    pub fn up_from_reference(
        spin: &Path,
        reference: &str,
        token: &str,
        runtime_config: Option<&Path>,
    ) -> Self {
        let start = Start {
            runtime_config,
            ..Start::app()
        };
        Self::start(spin, reference, token, start)
    }

    /// `spin up` of another manifest (`from`), serving once `ready` answers 200.
    pub fn up_manifest(spin: &Path, from: &Path, token: &str, ready: &str) -> Self {
        let start = Start {
            ready,
            ..Start::app()
        };
        Self::start(spin, &from.display().to_string(), token, start)
    }

    /// [`SpinApp::up_manifest`] with Spin's runtime configuration file `runtime_config`
    /// (e.g. `[llm_compute]` sending the app's LLM calls to another server).
    pub fn up_manifest_with(spin: &Path, from: &Path, ready: &str, runtime_config: &Path) -> Self {
        let start = Start {
            ready,
            runtime_config: Some(runtime_config),
            ..Start::app()
        };
        Self::start(spin, &from.display().to_string(), "unused", start)
    }

    fn start(spin: &Path, from: &str, token: &str, start: Start) -> Self {
        let state = crate::temp_dir();
        let models = state.path().join("ai-models");
        std::fs::create_dir_all(&models).unwrap();
        let embedding = crate::ai_models_dir().join("all-minilm-l6-v2");
        std::os::unix::fs::symlink(&embedding, models.join("all-minilm-l6-v2")).unwrap();
        let port = crate::free_port();
        let mut command = Command::new(spin);
        command
            .current_dir(state.path())
            .arg("up")
            .args(["--from", from])
            .args((!from.ends_with(".toml")).then_some("--insecure"))
            // What a reference pulls stays with the test, not in the user's cache.
            .arg("--cache-dir")
            .arg(state.path().join("pulled"))
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--state-dir")
            .arg(state.path())
            .args(["--variable", &format!("chat_admin_token={token}")])
            .args(
                start
                    .variables
                    .iter()
                    .flat_map(|(name, value)| ["--variable".to_owned(), format!("{name}={value}")]),
            )
            .args(
                start
                    .runtime_config
                    .map(|file| {
                        let file = file.display().to_string();
                        ["--runtime-config-file".to_owned(), file]
                    })
                    .into_iter()
                    .flatten(),
            );
        Self::launched(spin, command, port, Some(state), start.ready)
    }

    /// Plain `spin up` in `dir` (the app's directory, holding its spin.toml), as a user runs
    /// it there: no `--from`, no `--state-dir` (Spin's own default, `dir/.spin/`), only a free
    /// port and `args`; serving once the registry answers.
    pub fn up_plain(spin: &Path, dir: &Path, args: &[&str]) -> Self {
        let port = crate::free_port();
        let mut command = Command::new(spin);
        command
            .current_dir(dir)
            .arg("up")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(args);
        Self::launched(spin, command, port, None, APP_READY)
    }

    /// Runs `command` (a `spin up` on `port`), its output kept, and waits until `ready`
    /// answers: a cold machine compiles every component of the app first (the ONNX one
    /// twice).
    fn launched(
        spin: &Path,
        command: Command,
        port: u16,
        state: Option<tempfile::TempDir>,
        ready: &str,
    ) -> Self {
        let log = Transcript::new();
        let process = Process::start(
            "spin up",
            command,
            Output::Kept(log.clone()),
            Output::Kept(log.clone()),
        )
        .unwrap_or_else(|e| panic!("starting {}: {e}", spin.display()));
        let mut app = Self {
            process,
            port,
            log,
            _state: state,
        };
        app.wait_until_serving(ready, Duration::from_secs(480));
        app
    }

    /// Waits for `ready` to answer 200 (Spin compiles every component first).
    fn wait_until_serving(&mut self, ready: &str, within: Duration) {
        let started = Instant::now();
        loop {
            if status_of(self.port, ready) == Some(200) {
                return;
            }
            if let Some(status) = self.process.exit_status() {
                std::thread::sleep(Duration::from_millis(200)); // the rest of its output
                panic!(
                    "spin up exited ({status}) before it served:\n{}",
                    self.log()
                );
            }
            assert!(
                started.elapsed() < within,
                "spin up did not serve within {within:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// What Spin has printed so far.
    pub fn log(&self) -> String {
        self.log.text()
    }
}

impl Drop for SpinApp {
    fn drop(&mut self) {
        // Ctrl-C, so Spin stops its components as it would for a user; killed after 10 s.
        self.process
            .stop(Signal::Interrupt, Duration::from_secs(10));
    }
}

/// The status of `GET path` on the loopback `port`, or `None` if nothing answers.
fn status_of(port: u16, path: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}
