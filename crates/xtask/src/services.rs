//! Real services the tests need, from Debian's packages: installed with apt-get when the
//! test command runs as root (as CI does), otherwise reported loudly as skipped.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Test binaries whose scenarios run a second time with every host's store on Redis.
pub const REDIS_PASS: &[&str] = &[
    "chat_api",
    "chat_data",
    "host_services",
    "registry",
    "model_lifecycle",
];

/// Tests that cannot run without `redis-server`.
const NEEDS_REDIS: &str = "tests/tests/redis_store.rs (two registries and two chat hosts on \
     one Redis, Redis killed under load) and the Redis pass of chat_api, chat_data, registry, \
     host_services and model_lifecycle";

/// Whether `program --version` runs.
fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Installs Debian `packages` with apt-get, if this process may.
fn apt_install(packages: &[&str]) -> Result<(), String> {
    if !is_root() || !installed("apt-get") {
        return Err("not root, or no apt-get".into());
    }
    let quiet = |args: &[&str]| {
        eprintln!("xtask: running apt-get {}", args.join(" "));
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .map_err(|e| e.to_string())
            .and_then(|s| {
                s.success()
                    .then_some(())
                    .ok_or(format!("apt-get failed ({s})"))
            })
    };
    quiet(&["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(packages);
    quiet(&install)
}

/// Makes sure `redis-server` is here; `false` (announced loudly) when it cannot be.
pub fn ensure_redis() -> bool {
    if installed("redis-server") && installed("redis-cli") {
        return true;
    }
    match apt_install(&["redis-server", "redis-tools"]) {
        Ok(()) if installed("redis-server") => true,
        outcome => {
            let why = outcome
                .err()
                .unwrap_or_else(|| "installed, yet not found".into());
            eprintln!(
                "\nxtask: ************************************************************\n\
                 xtask: SKIPPING {NEEDS_REDIS}:\n\
                 xtask: redis-server is not installed and could not be ({why}).\n\
                 xtask: Install it (sudo apt-get install redis-server) or run as root.\n\
                 xtask: ************************************************************\n"
            );
            false
        }
    }
}

/// A redis-server for the Redis pass: many databases (one per test data directory), no
/// persistence (the pass checks behaviour, not durability), killed when dropped.
pub struct PassRedis {
    child: Child,
    pub url: String,
}

impl PassRedis {
    pub fn start(dir: &Path) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(dir)
            .args(["--save", "", "--appendonly", "no", "--databases", "10000"])
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting redis-server: {e}"))?;
        let url = format!("redis://127.0.0.1:{port}");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!("redis-server did not listen on {port} within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Self { child, url })
    }
}

impl Drop for PassRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
