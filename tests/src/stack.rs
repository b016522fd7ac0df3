//! `runtime-host up` as a child process on free ports: registry, chat, the app port and every
//! model, ready when it prints `stack ready`, stopped with Ctrl-C when dropped. Its log is
//! kept and printed when the test fails, so a failure says what the stack saw.

use process_harness::{Output, Process, Signal, Transcript, Unsaid};
use std::process::Command;
use std::time::Duration;

/// The models the stack serves by default (and spin.toml serves), by name, besides the
/// language model's `textgen` ([`TEXT_MODEL`]): their answers are computed, not generated, so
/// the protocol tests compare them across clients and hosts.
pub const SHIPPED_MODELS: [&str; 6] = [
    "molprop",
    "minilm",
    "solubility",
    "iris",
    "digits",
    "spoken-digits",
];

/// The generation model the stack also serves by default.
pub const TEXT_MODEL: &str = "textgen";

pub struct Stack {
    process: Process,
    /// `up`'s log (stderr), printed when a test fails while the stack runs.
    log: Transcript,
    pub registry_port: u16,
    pub chat_port: u16,
    pub app_port: u16,
    /// The admin token the chat service was given.
    pub admin_token: String,
    /// `up`'s data directory, and the temporary directory holding it where the stack made it.
    data_dir: std::path::PathBuf,
    _data: Option<tempfile::TempDir>,
}

impl Stack {
    /// Starts `up` with `extra` arguments (e.g. `--copies 9`), models assigned from a block
    /// of `ports` free ports.
    pub fn up(extra: &[&str], ports: u16) -> Self {
        let data = crate::temp_dir();
        let mut stack = Self::up_at(data.path(), extra, ports);
        stack._data = Some(data);
        stack
    }

    /// [`Stack::up`] on the data directory `data_dir`, which the caller keeps (and removes).
    pub fn up_at(data_dir: &std::path::Path, extra: &[&str], ports: u16) -> Self {
        Self::up_on(data_dir, extra, crate::port_block(ports), ports)
    }

    /// [`Stack::up_at`] with models assigned ports `first` to `first + ports - 1` (a block
    /// the caller chose, e.g. to hold some of them itself).
    pub fn up_on(data_dir: &std::path::Path, extra: &[&str], first: u16, ports: u16) -> Self {
        let (registry_port, chat_port, app_port) =
            (crate::free_port(), crate::free_port(), crate::free_port());
        let admin_token = format!("stack-token-{}", std::process::id());
        let mut command = Command::new(crate::host_binary());
        command
            .arg("up")
            .args(extra)
            .args(["--ports", &format!("{first}-{}", first + ports - 1)])
            .args(["--registry-port", &registry_port.to_string()])
            .args(["--chat-port", &chat_port.to_string()])
            .args(["--app-port", &app_port.to_string()])
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--ai-models-dir")
            .arg(crate::ai_models_dir())
            .env("RUNTIME_HOST_CACHE_DIR", crate::shared_cache_dir())
            .env("CHAT_ADMIN_TOKEN", &admin_token);
        let (stdout, log) = (Transcript::new(), Transcript::new());
        let process = Process::start(
            "runtime-host up",
            command,
            Output::Kept(stdout.clone()),
            Output::Kept(log.clone()),
        )
        .expect("starting runtime-host up");
        let within = Duration::from_secs(180);
        if let Err(why) = stdout.wait_for_line(|line| line.trim() == "stack ready", within) {
            let why = match why {
                Unsaid::Ended => {
                    let status = process.wait(Duration::from_secs(10));
                    format!("exited ({status:?}) before it was ready")
                }
                Unsaid::TimedOut(_) => {
                    process.kill();
                    format!("did not become ready within {within:?}")
                }
            };
            log.wait_for_end(Duration::from_secs(1));
            eprintln!("--- runtime-host up's log ---\n{}", log.text());
            panic!("runtime-host up {why}");
        }
        Self {
            process,
            log,
            registry_port,
            chat_port,
            app_port,
            admin_token,
            data_dir: data_dir.to_owned(),
            _data: None,
        }
    }

    /// `http://127.0.0.1:<app port><path>`: the one origin of every service.
    pub fn app(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.app_port)
    }

    pub fn registry(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.registry_port)
    }

    pub fn chat(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.chat_port)
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The port the registry assigned to `up`'s model `name` (registered as
    /// `runtime-host/<name>`).
    pub async fn model_port(&self, name: &str) -> u16 {
        let listing: edge_api::registry::RegistryListing = crate::Client::new()
            .get(&self.registry("/registry"))
            .await
            .json();
        listing
            .registrations
            .iter()
            .find(|r| r.app_name == format!("runtime-host/{name}"))
            .unwrap_or_else(|| panic!("{name} is not registered: {listing:?}"))
            .port
    }

    /// Sends `method` to the admin API at `/admin/deployments<path>` with `up`'s admin token.
    pub async fn admin(
        &self,
        method: hyper::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> crate::Reply {
        let token = std::fs::read_to_string(self.data_dir.join("admin_token"))
            .expect("up writes its admin token into its data directory");
        let auth = format!("Bearer {}", token.trim());
        let headers = [
            ("content-type", "application/json"),
            ("authorization", auth.as_str()),
        ];
        let url = self.app(&format!("/admin/deployments{path}"));
        let body = body.map(|b| b.to_string().into_bytes());
        crate::Client::new()
            .send(method, &url, body, &headers)
            .await
    }

    /// The deployment `name` as the admin API lists it (`None` if it is not listed).
    pub async fn deployment(&self, name: &str) -> Option<serde_json::Value> {
        let list = self.admin(hyper::Method::GET, "", None).await;
        assert_eq!(list.status, 200, "{}", list.text());
        let all = list.value()["deployments"].as_array().cloned()?;
        all.into_iter().find(|d| d["name"] == name)
    }

    /// What `up` has logged so far (its standard error).
    pub fn log(&self) -> String {
        self.log.text()
    }

    /// The data directory `up` was given.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// Ctrl-C, then the exit status (killed after `timeout`). The data directory stays until
    /// the stack is dropped.
    pub fn stop(&mut self, timeout: Duration) -> std::process::ExitStatus {
        if let Err(e) = self.process.signal(Signal::Interrupt) {
            panic!("could not send SIGINT to runtime-host up: {e}");
        }
        self.process.wait(timeout).unwrap_or_else(|| {
            self.process.kill();
            panic!("runtime-host up did not stop within {timeout:?} of Ctrl-C")
        })
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- runtime-host up's log ---\n{}", self.log.text());
        }
    }
}
