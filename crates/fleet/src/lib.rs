//! A fleet (issue 49): `runtime-host up` on several "machines" (network namespaces on one
//! bridge, [`network`]), every host's store on one redis-server, HAProxy in front of their
//! app ports. Each host is started as `deploy/fleet/runtime-host.service` says ([`unit`]),
//! from that directory's `host.env` and `runtime-config.toml`; Redis from its `redis.conf`,
//! HAProxy from its `haproxy.cfg` ([`haproxy`]). docs/deploy.md shows those same files.
//!
//! Needs root (namespaces), `haproxy` and `redis-server` ([`available`]).

pub mod haproxy;
pub mod host;
pub mod network;
pub mod unit;

use haproxy::Haproxy;
use host::Host;
use local_redis::RedisServer;
use network::{Machine, Network};
use std::path::{Path, PathBuf};
use std::time::Duration;
use unit::Unit;

/// The ports `up` listens on by default, which the unit keeps: every machine has its own.
pub const APP_PORT: u16 = 3000;
pub const REGISTRY_PORT: u16 = 5000;
pub const CHAT_PORT: u16 = 8050;

/// The chat admin token every host of the fleet shares (`CHAT_ADMIN_TOKEN` in host.env).
pub const CHAT_TOKEN: &str = "fleet-chat-token";

/// What the fleet runs, from the build at hand.
#[derive(Clone, Debug)]
pub struct Build {
    /// The `runtime-host` binary.
    pub host_binary: PathBuf,
    /// Where the AI models' files are (`--ai-models-dir`).
    pub ai_models_dir: PathBuf,
    /// A compilation cache the hosts share (`RUNTIME_HOST_CACHE_DIR`).
    pub cache_dir: PathBuf,
    /// What the package seeds every host's watched models directory with (the unit's
    /// `--models`): its model components and model directories (docs/deploy.md, "The same
    /// models on every host").
    pub models: Vec<PathBuf>,
}

pub struct Fleet {
    // Dropped in this order: the hosts stop before their network goes.
    hosts: Vec<Option<Host>>,
    pub haproxy: Haproxy,
    pub redis: RedisServer,
    _redis_dir: tempfile::TempDir,
    pub network: Network,
    unit: Unit,
    /// Per host: its `/etc/runtime-host` and `/var/lib/runtime-host`.
    dirs: Vec<tempfile::TempDir>,
    /// Every host's `/var/lib/runtime-host/models`: one copy, as if synced to each host.
    models: tempfile::TempDir,
    /// Arguments the test adds to the unit's `ExecStart`.
    extra: Vec<String>,
    build: Build,
}

/// Whether a fleet can run here; why not, if it cannot.
pub fn available() -> Result<(), String> {
    network::available()?;
    if !haproxy::installed() {
        return Err("haproxy is not installed (apt-get install haproxy)".into());
    }
    if !local_redis::installed() {
        return Err("redis-server is not installed (apt-get install redis-server)".into());
    }
    Ok(())
}

impl Fleet {
    /// Redis, HAProxy and `hosts` hosts, each started as the unit says plus `extra`
    /// arguments. Call [`available`] first.
    pub fn start(build: Build, hosts: usize, extra: &[&str]) -> Self {
        assert!((1..=3).contains(&hosts), "haproxy.cfg names three hosts");
        let network = Network::create(hosts);
        let redis_dir = tempfile::tempdir().expect("a temporary directory");
        let redis = RedisServer::start(
            &redis_dir.path().join("redis"),
            local_redis::Options {
                durability: local_redis::Durability::AsConfigured,
                config_file: Some(unit::deploy_dir().join("redis.conf")),
                also_bind: vec![network.gateway.into()],
                // The file's placeholder replaced, as a deployment would.
                password: Some(redis_password()),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let addresses: Vec<String> = network
            .machines
            .iter()
            .map(|m| format!("{}:{APP_PORT}", m.address))
            .collect();
        let haproxy = Haproxy::start(&addresses);
        let mut fleet = Self {
            hosts: (0..hosts).map(|_| None).collect(),
            haproxy,
            redis,
            _redis_dir: redis_dir,
            network,
            unit: Unit::load(),
            dirs: (0..hosts)
                .map(|_| tempfile::tempdir().expect("a temporary directory"))
                .collect(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            models: seeded_models(&build.models),
            build,
        };
        for i in 0..hosts {
            fleet.start_host(i);
        }
        for i in 0..hosts {
            fleet
                .haproxy
                .wait_healthy(&server(i), Duration::from_secs(30));
        }
        fleet
    }

    /// How many hosts the fleet has (running or not).
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    pub fn machine(&self, i: usize) -> &Machine {
        &self.network.machines[i]
    }

    /// Host `i`, if it runs.
    pub fn host(&self, i: usize) -> Option<&Host> {
        self.hosts[i].as_ref()
    }

    /// `http://<machine i>:<port><path>`: host `i` directly, not through HAProxy.
    pub fn url(&self, i: usize, port: u16, path: &str) -> String {
        format!("http://{}:{port}{path}", self.network.machines[i].address)
    }

    /// Redis's password (`requirepass`), which no answer may show.
    pub fn redis_password(&self) -> String {
        redis_password()
    }

    /// `redis://:<password>@<gateway>:<port>`: Redis as the machines reach it.
    pub fn redis_url(&self) -> String {
        let (gateway, port) = (self.network.gateway, self.redis.port());
        format!("redis://:{}@{gateway}:{port}", self.redis_password())
    }

    /// Starts host `i` as the unit says, and waits for its `READY=1` (the unit is
    /// `Type=notify`).
    pub fn start_host(&mut self, i: usize) {
        assert!(self.hosts[i].is_none(), "host {i} runs already");
        assert_eq!(self.unit.service_type, "notify");
        let dir = self.dirs[i].path();
        let (etc, data) = (dir.join("etc"), dir.join("data"));
        std::fs::create_dir_all(&etc).expect("a config directory");
        std::fs::create_dir_all(&data).expect("a data directory");
        let machine = self.network.machines[i].clone();
        let address = format!("HOST_ADDRESS={}", machine.address);
        let scope = format!("REGISTRY_SCOPE={}", server(i));
        let chat = format!("CHAT_ADMIN_TOKEN={CHAT_TOKEN}");
        let env_text = unit::deploy_file_with(
            "host.env",
            &[
                ("HOST_ADDRESS=10.0.0.11", &address),
                ("REGISTRY_SCOPE=host-1", &scope),
                ("CHAT_ADMIN_TOKEN=change-me-chat-token", &chat),
                (
                    "UP_ADMIN_TOKEN=change-me-admin-token",
                    "UP_ADMIN_TOKEN=fleet-admin",
                ),
            ],
        );
        let env_file = self
            .unit
            .environment_file
            .replace("/etc/runtime-host", &etc.display().to_string());
        std::fs::write(&env_file, &env_text).expect("writing host.env");
        let url = self.redis_url();
        let config = unit::deploy_file_with(
            "runtime-config.toml",
            &[("redis://:change-me-redis-password@10.0.0.10:6379", &url)],
        );
        let config_file = etc.join("runtime-config.toml");
        std::fs::write(&config_file, config).expect("writing the config");
        // Mode 600, as the file says: the host refuses a password others can read.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&config_file, std::fs::Permissions::from_mode(0o600))
            .expect("making the config private");
        let env = unit::parse_env(&env_text);
        let build = &self.build;
        let layout = unit::Layout {
            binary: &build.host_binary,
            etc: &etc,
            state: &data,
            models: self.models.path(),
            ai_models: &build.ai_models_dir,
            // The unit's --cache-dir: the tests' shared compilation cache.
            cache: &build.cache_dir,
        };
        let words = self.unit.command_line(&env, &layout.pairs());
        let mut command = machine.command(Path::new(&words[0]));
        command
            .args(&words[1..])
            .args(&self.extra)
            .envs(&env)
            .env("RUNTIME_HOST_CACHE_DIR", &build.cache_dir);
        self.hosts[i] = Some(Host::start(command, &dir.join("notify.sock")));
    }

    /// Stops host `i` as systemd would (the unit's `KillSignal`), waiting for it to exit.
    pub fn stop_host(&mut self, i: usize) -> std::process::ExitStatus {
        let signal = self.unit.kill_signal.trim_start_matches("SIG").to_owned();
        let mut host = self.hosts[i].take().expect("host runs");
        host.signal_and_wait(&signal, Duration::from_secs(90))
    }

    /// SIGKILL to host `i`; its pid.
    pub fn kill_host(&mut self, i: usize) -> u32 {
        let mut host = self.hosts[i].take().expect("host runs");
        let pid = host.pid();
        host.signal_and_wait("KILL", Duration::from_secs(30));
        pid
    }

    /// The last `lines` lines of every running host's log, for a failure's message.
    pub fn logs(&self, lines: usize) -> String {
        let mut out = String::new();
        for (i, host) in self.hosts.iter().enumerate() {
            let Some(host) = host else { continue };
            let log = host.log();
            let all: Vec<&str> = log.lines().collect();
            let tail = all[all.len().saturating_sub(lines)..].join("\n");
            out.push_str(&format!(
                "--- {} (last {lines} lines) ---\n{tail}\n",
                server(i)
            ));
        }
        out
    }
}

/// What the package's installation puts in the watched models directory
/// (deploy/package/postinst), from a cargo build: the model components molprop, minilm and
/// textgen beside `host_binary` (`target/release/runtime-host` has them in
/// `target/wasm32-wasip2/release`), and the repository's model directories.
pub fn package_models(host_binary: &Path) -> Vec<PathBuf> {
    let target = host_binary
        .parent()
        .and_then(Path::parent)
        .expect("the binary in target/<profile>/");
    let components = target.join("wasm32-wasip2/release");
    let mut models: Vec<PathBuf> = ["molprop", "minilm", "textgen"]
        .iter()
        .map(|name| components.join(format!("{name}.wasm")))
        .collect();
    let repo_models = target
        .parent()
        .expect("target/ in the repository")
        .join("models");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&repo_models)
        .unwrap_or_else(|e| panic!("{}: {e}", repo_models.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("model.toml").is_file())
        .collect();
    dirs.sort();
    models.extend(dirs);
    models
}

/// A models directory holding a copy of each of `models` (a component or a model
/// directory), as the package's installation seeds `/var/lib/runtime-host/models`.
fn seeded_models(models: &[PathBuf]) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        if from.is_dir() {
            std::fs::create_dir_all(to).expect("a model directory");
            for entry in std::fs::read_dir(from)
                .expect("a model directory")
                .flatten()
            {
                copy(&entry.path(), &to.join(entry.file_name()));
            }
        } else {
            std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        }
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    for model in models {
        copy(
            model,
            &dir.path().join(model.file_name().expect("a named model")),
        );
    }
    dir
}

/// The password this test process gives its Redis in place of the file's placeholder.
fn redis_password() -> String {
    format!("fleet-{}", std::process::id())
}

/// HAProxy's name of host `i` (0-based): `host-1` ...
pub fn server(i: usize) -> String {
    format!("host-{}", i + 1)
}

#[cfg(test)]
mod tests {
    /// docs/deploy.md shows every file of `deploy/fleet/` as it is, and the package's default
    /// configuration, so the page cannot drift from what the fleet and package tests run.
    #[test]
    fn deploy_md_shows_every_file_as_it_is() {
        let doc_path = super::unit::deploy_dir().join("../../docs/deploy.md");
        let doc = std::fs::read_to_string(&doc_path).expect("docs/deploy.md");
        let mut files = 0;
        let fleet = std::fs::read_dir(super::unit::deploy_dir()).expect("deploy/fleet");
        let package = super::unit::deploy_dir().join("../package/runtime-config.toml");
        let paths = fleet.map(|e| e.expect("an entry").path()).chain([package]);
        for path in paths {
            let text = std::fs::read_to_string(&path).expect("a deploy file");
            assert!(
                doc.contains(text.trim_end()),
                "docs/deploy.md does not show {} as it is",
                path.display()
            );
            files += 1;
        }
        assert!(
            files >= 8,
            "the unit, host.env, both runtime-configs, redis.conf, sentinel.conf, both \
             haproxy files"
        );
    }
}
