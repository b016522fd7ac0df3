//! Redis made highly available as docs/deploy.md says (issue 62): a master and a replica
//! from `deploy/fleet/redis.conf`, three Sentinels from `deploy/fleet/sentinel.conf`, and the
//! host reaching the current master through HAProxy from `deploy/fleet/haproxy-redis.cfg`
//! (a TCP check for `role:master`). Under a stream of chat appends through a host, the master
//! is SIGKILLed: the Sentinels promote the replica, HAProxy follows, and appends resume with no
//! restart of the host. The window is measured and printed; every append acknowledged after
//! it is read back. (Appends acknowledged just before the kill may be lost, as Redis's
//! replication is asynchronous: the test counts them and prints the count.)
//!
//! Sentinels run as `redis-server --sentinel` (the same program Debian's `redis-sentinel`
//! starts). Needs root and HAProxy, as the fleet does ([`Tool::Fleet`]).

use e2e_tests::chat;
use e2e_tests::tools::{Tool, require_or_skip};
use e2e_tests::{Client, temp_dir};
use edge_api::chat::Dialog;
use fleet::unit::{deploy_dir, deploy_file_with};
use local_redis::{Durability, Options, RedisServer};
use process_harness::{Output, Process};
use serde_json::json;
use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const PASSWORD: &str = "sentinel-test-password";

/// The longest failover the test accepts: `down-after-milliseconds` (2 s), the Sentinels'
/// election, HAProxy's `rise 2` at `inter 500ms`, and slack for a loaded 2-core machine.
const FAILOVER_WITHIN: Duration = Duration::from_secs(15);

fn free_port() -> u16 {
    process_harness::free_port().expect("a free port")
}

/// A Redis of the file `deploy/fleet/redis.conf`, with the test's password.
fn redis(dir: &Path) -> RedisServer {
    // A copy of its own: Sentinel has each Redis it reconfigures rewrite its file
    // (`CONFIG REWRITE`), which must not be the repository's.
    std::fs::create_dir_all(dir).expect("a directory for Redis");
    let file = dir.join("redis.conf");
    std::fs::copy(deploy_dir().join("redis.conf"), &file).expect("copying redis.conf");
    let server = RedisServer::start(
        dir,
        Options {
            durability: Durability::AsConfigured,
            config_file: Some(file),
            password: Some(PASSWORD.into()),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // The file's `masterauth` placeholder replaced, as a deployment would.
    assert_eq!(
        server.cli(0, &["CONFIG", "SET", "masterauth", PASSWORD]),
        "OK"
    );
    server
}

/// One Sentinel of `deploy/fleet/sentinel.conf`, watching the master on `master_port`.
fn sentinel(dir: &Path, master_port: u16) -> (Process, u16) {
    let port = free_port();
    let text = deploy_file_with(
        "sentinel.conf",
        &[
            ("port 26379", &format!("port {port}")),
            ("10.0.0.10 6379", &format!("127.0.0.1 {master_port}")),
            ("change-me-redis-password", PASSWORD),
        ],
    );
    // Sentinel rewrites its file as it learns the others: one each, writable.
    let file = dir.join(format!("sentinel-{port}.conf"));
    std::fs::write(&file, text).expect("writing sentinel.conf");
    let mut cmd = Command::new("redis-server");
    cmd.arg(&file).arg("--sentinel");
    let process = Process::start("redis sentinel", cmd, Output::Null, Output::Null)
        .expect("starting redis-server --sentinel");
    (process, port)
}

/// What Sentinel on `port` says of the master `fleet`, as `name value` pairs.
fn sentinel_sees(port: u16, field: &str) -> String {
    let out = local_redis::cli(
        &format!("redis://127.0.0.1:{port}"),
        &["SENTINEL", "master", "fleet"],
    );
    let lines: Vec<&str> = out.lines().collect();
    lines
        .iter()
        .position(|l| *l == field)
        .and_then(|at| lines.get(at + 1))
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// HAProxy of `deploy/fleet/haproxy-redis.cfg` in front of the two Redis servers; its port.
fn haproxy(dir: &Path, redis: [u16; 2]) -> (Process, u16) {
    let port = free_port();
    let mut cmd = Command::new("haproxy");
    cmd.arg("-db")
        .arg("-f")
        .arg(deploy_dir().join("haproxy-redis.cfg"))
        .env("REDIS_LISTEN", format!("127.0.0.1:{port}"))
        .env("REDIS_1", format!("127.0.0.1:{}", redis[0]))
        .env("REDIS_2", format!("127.0.0.1:{}", redis[1]))
        .env("REDIS_PASSWORD", PASSWORD)
        .env("HAPROXY_STATS_SOCKET", dir.join("redis-admin.sock"));
    let process = Process::start("haproxy (redis)", cmd, Output::Null, Output::Inherit)
        .expect("starting haproxy");
    (process, port)
}

/// The status HAProxy's admin socket `socket` gives `redis_master/<server>` (`UP`, `DOWN`).
fn haproxy_status(socket: &Path, server: &str) -> String {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(socket) else {
        return String::new();
    };
    let _ = stream.write_all(b"show stat\n");
    let mut csv = String::new();
    let _ = stream.read_to_string(&mut csv);
    let prefix = format!("redis_master,{server},");
    csv.lines()
        .find(|l| l.starts_with(&prefix))
        .and_then(|l| l.split(',').nth(17))
        .unwrap_or_default()
        .to_owned()
}

/// Waits up to `within` for `check`; how long it took.
fn wait(what: &str, within: Duration, mut check: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < within, "{what} within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_resume_after_sentinel_promotes_the_replica() {
    let test = "fleet::sentinel";
    let available = fleet::available().inspect_err(|why| eprintln!("{test}: {why}"));
    if require_or_skip(Tool::Fleet, test, available.ok()).is_none() {
        return;
    }
    let dir = temp_dir();
    let mut master = redis(&dir.path().join("master"));
    let replica = redis(&dir.path().join("replica"));
    let replicaof = ["REPLICAOF", "127.0.0.1", &master.port().to_string()].map(String::from);
    let replicaof: Vec<&str> = replicaof.iter().map(String::as_str).collect();
    assert_eq!(replica.cli(0, &replicaof), "OK");
    wait("the replica in sync", Duration::from_secs(10), || {
        replica
            .cli(0, &["INFO", "replication"])
            .contains("master_link_status:up")
    });
    let sentinels: Vec<(Process, u16)> = (0..3)
        .map(|_| sentinel(dir.path(), master.port()))
        .collect();
    // Each knows the replica and the two other Sentinels (their hello messages, every 2 s).
    let known = wait(
        "the Sentinels know each other",
        Duration::from_secs(20),
        || {
            sentinels.iter().all(|(_, port)| {
                sentinel_sees(*port, "num-other-sentinels") == "2"
                    && sentinel_sees(*port, "num-slaves") == "1"
            })
        },
    );
    println!("three Sentinels agreed on the master and its replica after {known:?}");
    let (_haproxy, redis_port) = haproxy(dir.path(), [master.port(), replica.port()]);
    // HAProxy counts every server up until its checks say otherwise: the replica leaves
    // the backend after `fall 2` checks (docs/deploy.md: start HAProxy before the hosts).
    let socket = dir.path().join("redis-admin.sock");
    let checked = wait("HAProxy finds the replica", Duration::from_secs(10), || {
        haproxy_status(&socket, "redis-1") == "UP" && haproxy_status(&socket, "redis-2") == "DOWN"
    });
    println!("HAProxy sends connections to the master only after {checked:?}");

    // A chat host whose store is the URL HAProxy serves, as docs/deploy.md configures it.
    let config = dir.path().join("runtime-config.toml");
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{redis_port}");
    std::fs::write(
        &config,
        format!("[key_value_store.default]\ntype = \"redis\"\nurl = \"{url}\"\n"),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let host = chat::builder(&dir.path().join("host"))
        .arg("--runtime-config-file")
        .arg(config.display().to_string())
        .start();
    let c = Client::new();
    let d = chat::create(&c, &host, &json!({"chatName": "failover", "messages": []})).await;

    // Appends one after another; the master is killed after a second of them.
    let started = Instant::now();
    let mut killed: Option<Instant> = None;
    let mut acknowledged: Vec<(String, Instant)> = Vec::new();
    let mut failed_after_kill = 0;
    let mut resumed: Option<Duration> = None;
    for i in 0.. {
        if killed.is_none() && started.elapsed() > Duration::from_secs(1) {
            master.kill();
            killed = Some(Instant::now());
        }
        // A second of appends on the new master, then the count.
        if let (Some(at), Some(window)) = (killed, resumed)
            && at.elapsed() > window + Duration::from_secs(1)
        {
            break;
        }
        let content = format!("m-{i}");
        let message = json!({"role": "user", "content": content});
        let r = chat::append(&c, &host, &d.id, &message).await;
        let now = Instant::now();
        match (r.status, killed) {
            (201, Some(at)) => {
                if resumed.is_none() && failed_after_kill > 0 {
                    resumed = Some(now - at);
                }
                acknowledged.push((content, now));
            }
            (201, None) => acknowledged.push((content, now)),
            (503, Some(at)) => {
                assert_eq!(r.value()["error_code"], "store_unavailable", "{}", r.text());
                failed_after_kill += 1;
                assert!(
                    now - at < FAILOVER_WITHIN,
                    "writes did not resume within {FAILOVER_WITHIN:?} of the master's death"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (status, _) => panic!("append {i}: {status} {}", r.text()),
        }
    }
    let killed = killed.expect("the master was killed");
    let window = resumed.expect("writes resumed after the failover");
    println!(
        "master SIGKILLed: writes failed for {window:?} ({failed_after_kill} appends answered \
         503 store_unavailable), then resumed on the promoted replica"
    );
    let promoted = sentinel_sees(sentinels[0].1, "port");
    assert_eq!(
        promoted,
        replica.port().to_string(),
        "the replica is the master now"
    );

    let got: Dialog = c
        .get(&host.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    let kept: HashSet<&str> = got.messages.iter().map(|m| m.content.as_str()).collect();
    let lost: Vec<&str> = acknowledged
        .iter()
        .filter(|(content, _)| !kept.contains(content.as_str()))
        .map(|(content, _)| content.as_str())
        .collect();
    println!(
        "{} appends acknowledged, {} of them lost in the failover (asynchronous replication)",
        acknowledged.len(),
        lost.len()
    );
    for (content, at) in &acknowledged {
        assert!(
            *at < killed || kept.contains(content.as_str()),
            "{content}, acknowledged after the failover, is missing"
        );
    }
    drop(host);
}
