//! A private `redis-server` (Debian's package) for whoever needs a real Redis on this
//! machine: the end-to-end tests, the store's contract tests, the bench and `cargo xtask
//! test`'s Redis pass. It listens on a free loopback port with its files in a directory of
//! the caller's, and is killed when dropped. Standard library only, so xtask can use it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How much of what Redis acknowledged survives the server being killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Every write fsynced to the append-only file before Redis answers (the tests that
    /// kill Redis check this).
    EveryWrite,
    /// The append-only file fsynced once a second, Redis's default for durability.
    EverySecond,
    /// Nothing on disk: for runs that check behaviour, not durability.
    None,
    /// Whatever [`Options::config_file`] says.
    AsConfigured,
}

/// How to start the server.
#[derive(Clone, Debug)]
pub struct Options {
    pub durability: Durability,
    /// Databases it offers (`/0` .. `/N-1` in URLs).
    pub databases: u32,
    /// A `redis.conf` read first; the port, addresses and directory are still this
    /// crate's (a deployment's own file, as `tests/tests/fleet/three_hosts/` runs it).
    pub config_file: Option<PathBuf>,
    /// Addresses it listens on beside loopback.
    pub also_bind: Vec<std::net::IpAddr>,
    /// The password clients must give (`requirepass`); in [`RedisServer::url`] too.
    pub password: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            durability: Durability::EveryWrite,
            databases: 16,
            config_file: None,
            also_bind: Vec::new(),
            password: None,
        }
    }
}

pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    options: Options,
}

/// Whether `redis-server` and `redis-cli` can be run here.
pub fn installed() -> bool {
    ["redis-server", "redis-cli"]
        .iter()
        .all(|p| program_runs(p))
}

/// Whether `program --version` runs and succeeds.
pub fn program_runs(program: &str) -> bool {
    program_answers(program, "--version")
}

/// Whether `program FLAG` runs and succeeds (for programs whose version flag is another,
/// such as `haproxy -v` or `ip -V`).
pub fn program_answers(program: &str, flag: &str) -> bool {
    Command::new(program)
        .arg(flag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl RedisServer {
    /// Starts a server keeping its files in `dir` (created if needed) and waits until it
    /// answers PING.
    pub fn start(dir: &Path, options: Options) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut server = Self {
            child: None,
            port: free_port()?,
            dir: dir.to_path_buf(),
            options,
        };
        server.launch()?;
        Ok(server)
    }

    fn launch(&mut self) -> Result<(), String> {
        let child = Command::new("redis-server")
            .args(self.args())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting redis-server: {e}"))?;
        self.child = Some(child);
        let started = Instant::now();
        while self.cli(0, &["PING"]) != "PONG" {
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!(
                    "redis-server on port {} did not answer PING within 10 s",
                    self.port
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Loopback (and the addresses asked for), files in the directory, the durability
    /// asked for; after the configuration file, if there is one, so these win.
    fn args(&self) -> Vec<String> {
        let mut bind = vec!["127.0.0.1".to_owned()];
        bind.extend(self.options.also_bind.iter().map(|a| a.to_string()));
        let mut args: Vec<String> = self
            .options
            .config_file
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        args.extend(
            [
                "--port",
                &self.port.to_string(),
                "--bind",
                &bind.join(" "),
                "--dir",
                &self.dir.display().to_string(),
                "--databases",
                &self.options.databases.to_string(),
                "--maxclients",
                "1000",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        if let Some(password) = &self.options.password {
            args.extend(["--requirepass".to_owned(), password.clone()]);
        }
        let aof: &[&str] = match self.options.durability {
            Durability::EveryWrite => &[
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ],
            Durability::EverySecond => &[
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
            ],
            Durability::None => &["--save", "", "--appendonly", "no"],
            Durability::AsConfigured => &[],
        };
        args.extend(aof.iter().map(|s| s.to_string()));
        args
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://[default:PASSWORD@]127.0.0.1:PORT` (database 0). The user is named:
    /// redis-cli 7.0 sends no AUTH for a URL with a password and no user.
    pub fn url(&self) -> String {
        match &self.options.password {
            Some(password) => format!("redis://default:{password}@127.0.0.1:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    /// Kills the server with SIGKILL, as a crash would; [`RedisServer::restart`] brings it
    /// back with what it had made durable.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port and directory.
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill();
        self.launch()
    }

    /// Runs `redis-cli` against database `db` and returns what it printed, trimmed.
    pub fn cli(&self, db: u32, args: &[&str]) -> String {
        cli(&format!("{}/{db}", self.url()), args)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `redis-cli -u URL ARGS...` and returns what it printed, trimmed (empty if it could
/// not run).
pub fn cli(url: &str, args: &[&str]) -> String {
    Command::new("redis-cli")
        .arg("-u")
        .arg(url)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// A free loopback port (bound, then released).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_sets_the_append_only_file() {
        let server = |durability| RedisServer {
            child: None,
            port: 1,
            dir: PathBuf::from("/x"),
            options: Options {
                durability,
                databases: 3,
                ..Default::default()
            },
        };
        let args = server(Durability::EveryWrite).args().join(" ");
        assert!(
            args.contains("--appendonly yes --appendfsync always"),
            "{args}"
        );
        assert!(args.contains("--databases 3") && args.contains("--bind 127.0.0.1"));
        let args = server(Durability::None).args().join(" ");
        assert!(args.contains("--appendonly no"), "{args}");
    }
}
