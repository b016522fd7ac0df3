//! A `runtime-host` child process.

use process_harness::{Output, Process, Signal, Transcript};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

/// How long a host may take to come up (includes compiling the component on a cold cache).
const START_TIMEOUT: Duration = Duration::from_secs(120);

pub struct HostBuilder {
    /// Subcommand and its positional arguments.
    command: Vec<String>,
    /// Whether to pass `--listen 127.0.0.1:0` (a model binds the port its registry assigns).
    listen: bool,
    data_dir: PathBuf,
    args: Vec<String>,
    envs: Vec<(String, String)>,
}

impl HostBuilder {
    /// `runtime-host serve <component>`.
    pub fn new(component: PathBuf, data_dir: &Path) -> Self {
        Self::command(
            vec!["serve".into(), component.display().to_string()],
            data_dir,
        )
    }

    /// `runtime-host registry --component registry.wasm`.
    pub fn registry(data_dir: &Path) -> Self {
        let component = crate::component("registry").display().to_string();
        Self::command(
            vec!["registry".into(), "--component".into(), component],
            data_dir,
        )
    }

    /// `runtime-host model <component> --registry <url>`.
    pub fn model(component: PathBuf, data_dir: &Path, registry: &str) -> Self {
        let mut b = Self::command(
            vec![
                "model".into(),
                component.display().to_string(),
                "--registry".into(),
                registry.into(),
            ],
            data_dir,
        );
        b.listen = false;
        b
    }

    fn command(command: Vec<String>, data_dir: &Path) -> Self {
        Self {
            listen: true,
            command,
            data_dir: data_dir.to_path_buf(),
            args: Vec::new(),
            envs: Vec::new(),
        }
    }

    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    /// Listens on this address instead of a free port.
    pub fn listen_on(mut self, addr: &str) -> Self {
        self.listen = false;
        self.arg("--listen").arg(addr)
    }

    pub fn variable(self, name: &str, value: &str) -> Self {
        self.arg("--variable").arg(format!("{name}={value}"))
    }

    /// Compiles into (and reuses) the cache all tests share; see [`crate::shared_cache_dir`].
    pub fn shared_compile_cache(self) -> Self {
        let dir = crate::shared_cache_dir().display().to_string();
        self.env("RUNTIME_HOST_CACHE_DIR", &dir)
    }

    /// Mounts a host directory read-only at a guest path (`--dir HOST:GUEST`).
    pub fn mount(self, host: &Path, guest: &str) -> Self {
        self.arg("--dir").arg(format!("{}:{guest}", host.display()))
    }

    /// Grants the component an AI model (`--ai-model`), read from `dir` (`--ai-models-dir`).
    pub fn ai_model(self, name: &str, dir: &Path) -> Self {
        self.arg("--ai-model")
            .arg(name)
            .arg("--ai-models-dir")
            .arg(dir.display().to_string())
    }

    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.envs.push((k.into(), v.into()));
        self
    }

    /// Starts the host on a free loopback port and waits until it listens.
    pub fn start(self) -> Host {
        let mut cmd = Command::new(crate::host_binary());
        cmd.args(&self.command);
        if self.listen {
            cmd.args(["--listen", "127.0.0.1:0"]);
        }
        cmd.arg("--data-dir").arg(&self.data_dir);
        // The Redis pass: the same scenario, its store on Redis (see crate::redis).
        if !self.args.iter().any(|a| a == "--runtime-config-file")
            && let Some(config) = crate::redis::pass_runtime_config(&self.data_dir)
        {
            cmd.arg("--runtime-config-file").arg(config);
        }
        cmd.args(&self.args).env_remove("RUST_BACKTRACE");
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        let output = Transcript::new();
        let process = Process::start(
            "runtime-host",
            cmd,
            Output::Kept(output.clone()),
            Output::Kept(output.clone()),
        )
        .expect("spawning runtime-host");
        let listening =
            output.wait_for_line(|l| l.starts_with("listening on http://"), START_TIMEOUT);
        let addr = match listening {
            Ok(lines) => lines.last().expect("the line found")["listening on http://".len()..]
                .trim()
                .to_owned(),
            Err(why) => {
                process.kill();
                // The rest of what it said on its way out.
                output.wait_for_end(Duration::from_secs(1));
                panic!(
                    "runtime-host did not start listening ({why}):\n{}",
                    output.text()
                );
            }
        };
        Host {
            process,
            addr: addr.parse().expect("host printed a socket address"),
            output,
        }
    }
}

pub struct Host {
    process: Process,
    pub addr: SocketAddr,
    output: Transcript,
}

impl Host {
    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Everything the host printed so far.
    pub fn output(&self) -> String {
        self.output.text()
    }

    /// Everything the host printed, once it holds `text`: the log is read from a pipe and can
    /// lag the answers a test has already had. Panics with the log after five seconds.
    pub fn output_with(&self, text: &str) -> String {
        let started = std::time::Instant::now();
        loop {
            let log = self.output();
            if log.contains(text) {
                return log;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "the host never printed {text:?}:\n{log}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn signal(&self, signal: Signal) {
        if let Err(e) = self.process.signal(signal) {
            panic!("{signal:?} to runtime-host: {e}");
        }
    }

    /// Sends SIGTERM without waiting.
    pub fn terminate(&self) {
        self.signal(Signal::Terminate);
    }

    /// Waits for the process to exit (panics after `timeout`).
    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let Some(status) = self.process.wait(timeout) else {
            panic!(
                "runtime-host did not exit within {timeout:?}:\n{}",
                self.output()
            );
        };
        status
    }

    /// SIGTERM and wait: the graceful path.
    pub fn stop(mut self) -> ExitStatus {
        self.terminate();
        self.wait(Duration::from_secs(60))
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill9(mut self) {
        self.signal(Signal::Kill);
        self.wait(Duration::from_secs(30));
    }
}

/// `runtime-host snapshot` of `component` with `dir` at /model into `output`, caching in
/// `cache`; its exit status and what it said.
pub fn snapshot(
    component: &Path,
    dir: Option<&Path>,
    output: &Path,
    cache: &Path,
) -> (bool, String) {
    let data = crate::temp_dir();
    let mut cmd = Command::new(crate::host_binary());
    cmd.arg("snapshot").arg(component).arg("-o").arg(output);
    cmd.arg("--data-dir").arg(data.path());
    cmd.arg("--cache-dir").arg(cache);
    if let Some(dir) = dir {
        cmd.arg("--dir").arg(format!("{}:/model", dir.display()));
    }
    let out = cmd.output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}
