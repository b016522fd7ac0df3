//! A real `redis-server` for the tests, and the Redis pass of the shared scenarios.
//!
//! - [`RedisServer::start`] runs a private server on a free loopback port, in a temporary
//!   directory, with the append-only file fsynced on every write (so a write Redis
//!   acknowledged survives `kill -9`). Tests that need one and cannot have one (no
//!   `redis-server` installed) print a loud SKIPPED line, unless `cargo xtask test` has
//!   Redis, where they fail instead ([`crate::tools::require_or_skip`]).
//! - With `E2E_REDIS_URL` set (by `cargo xtask test`'s Redis pass), every host the
//!   [`crate::host::HostBuilder`] starts keeps its store on that server, in a database of
//!   its own per data directory, so the chat, registry and model scenarios run unchanged on
//!   Redis.

use std::path::Path;

pub use local_redis::cli;

/// Databases the pass's server offers: one per data directory of the tests.
pub const PASS_DATABASES: u32 = 10_000;

/// A private server in a temporary directory, every write fsynced before Redis answers.
pub struct RedisServer {
    server: local_redis::RedisServer,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// A fresh server, or `None` (announced loudly) where `redis-server` is not installed.
    pub fn start(test: &str) -> Option<Self> {
        let installed = local_redis::installed().then_some(());
        crate::tools::require_or_skip(crate::tools::Tool::Redis, test, installed)?;
        let dir = crate::temp_dir();
        let server = local_redis::RedisServer::start(dir.path(), Default::default())
            .unwrap_or_else(|e| panic!("{test}: {e}"));
        Some(Self { server, _dir: dir })
    }

    /// `redis://127.0.0.1:PORT` (database 0).
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Kills the server with SIGKILL, as a crash would; [`RedisServer::restart`] brings
    /// it back with its data.
    pub fn kill(&mut self) {
        self.server.kill();
    }

    /// Starts the server again on the same port and directory (after [`RedisServer::kill`]).
    pub fn restart(&mut self) {
        self.server.restart().expect("restarting redis-server");
    }

    /// Runs `redis-cli` against database `db` and returns what it printed.
    pub fn cli(&self, db: u32, args: &[&str]) -> String {
        self.server.cli(db, args)
    }

    /// A runtime-config file naming this server as `default` (database `db`).
    pub fn runtime_config(&self, dir: &Path, db: u32) -> std::path::PathBuf {
        write_runtime_config(dir, &format!("{}/{db}", self.url()))
    }
}

/// Writes `runtime-config.redis.toml` in `dir` with `default` on `url`.
pub fn write_runtime_config(dir: &Path, url: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).expect("creating the config directory");
    let file = dir.join("runtime-config.redis.toml");
    std::fs::write(
        &file,
        format!("[key_value_store.default]\ntype = \"redis\"\nurl = \"{url}\"\n"),
    )
    .expect("writing the runtime config");
    // Private, as the host requires of a config that may hold a password.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
        .expect("making the runtime config private");
    file
}

/// In the Redis pass (`E2E_REDIS_URL`), the runtime config for a host with this data
/// directory: a database of its own, the same one each time the directory is used again (a
/// restarted host sees its data).
pub fn pass_runtime_config(data_dir: &Path) -> Option<std::path::PathBuf> {
    let url = std::env::var("E2E_REDIS_URL").ok()?;
    let marker = data_dir.join("e2e-redis-db");
    let db = match std::fs::read_to_string(&marker) {
        Ok(db) => db.trim().to_owned(),
        Err(_) => {
            // Database 0 holds the counter; tests in other processes draw from it too.
            let db = cli(&format!("{url}/0"), &["INCR", "e2e/next-db"]);
            let n: u32 = db
                .parse()
                .unwrap_or_else(|_| panic!("INCR answered `{db}`"));
            assert!(n < PASS_DATABASES, "the Redis pass ran out of databases");
            std::fs::create_dir_all(data_dir).expect("creating the data directory");
            std::fs::write(&marker, &db).expect("writing the database marker");
            db
        }
    };
    Some(write_runtime_config(data_dir, &format!("{url}/{db}")))
}

/// For a scenario that works on the SQLite file itself: it cannot run in the Redis pass
/// (which leaves it out by name, see xtask's `SQLITE_ONLY`), so running it there is a
/// mistake, reported as a failure rather than a pass that checked nothing.
pub fn assert_not_in_redis_pass(what_it_does: &str) {
    assert!(
        !redis_pass(),
        "this scenario {what_it_does}: it has no meaning on Redis; the Redis pass must skip it \
         by name (xtask's SQLITE_ONLY)"
    );
}

/// Whether this run keeps the hosts' stores on Redis (the Redis pass).
pub fn redis_pass() -> bool {
    std::env::var("E2E_REDIS_URL").is_ok()
}
