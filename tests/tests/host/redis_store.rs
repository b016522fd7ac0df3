//! The store on a real Redis, shared by several hosts: two registries as one, appenders
//! through two chat hosts, Redis killed and restarted under load, and start-up without it.
//! (The chat, registry and model scenarios also run whole on Redis: `cargo xtask test`'s
//! Redis pass, see `e2e_tests::redis`.)

use e2e_tests::chat::{self, TOKEN, create};
use e2e_tests::redis::RedisServer;
use e2e_tests::registrations::register_concurrently;
use e2e_tests::{Client, Host, HostBuilder, Stack, component, host_binary, temp_dir};
use edge_api::chat::Dialog;
use edge_api::registry::RegistryListing;
use serde_json::json;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A host of `builder`'s kind with its store on `redis` (database `db`).
fn on_redis(builder: HostBuilder, redis: &RedisServer, dir: &Path, db: u32) -> Host {
    builder
        .arg("--runtime-config-file")
        .arg(redis.runtime_config(dir, db).display().to_string())
        .start()
}

fn chat_on(redis: &RedisServer, dir: &Path) -> Host {
    on_redis(chat::builder(dir), redis, dir, 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_registries_on_one_redis_are_one_registry() {
    let Some(redis) = RedisServer::start("two_registries_on_one_redis_are_one_registry") else {
        return;
    };
    let dirs = [temp_dir(), temp_dir()];
    let hosts: Vec<Host> = dirs
        .iter()
        .map(|d| {
            let b = HostBuilder::registry(d.path())
                .arg("--ports")
                .arg("5100-7999")
                .arg("--registry-scope")
                .arg("e2e")
                // One test process (and user) holds all 2000.
                .arg("--max-per-process")
                .arg("0")
                .arg("--max-per-user")
                .arg("0");
            on_redis(b, &redis, d.path(), 1)
        })
        .collect();
    const TOTAL: usize = 2000;
    let started = Instant::now();
    let urls: Vec<String> = hosts.iter().map(|h| h.url("/register")).collect();
    let ports = register_concurrently(&urls, TOTAL, |i| {
        json!({
            "app_name": format!("e2e-{i}"), "app_version": "1.2.0",
            "model_name": "m", "process_id": std::process::id(),
            "preferred_port": null, "reason": "test", "metadata": {}
        })
    })
    .await;
    let elapsed = started.elapsed();
    println!(
        "{TOTAL} registrations through two registries on one Redis: {:.0} regs/s",
        TOTAL as f64 / elapsed.as_secs_f64()
    );
    let c = Client::new();
    let distinct: HashSet<u16> = ports.iter().copied().collect();
    assert_eq!(ports.len(), TOTAL);
    assert_eq!(distinct.len(), TOTAL, "no port was handed out twice");
    for h in &hosts {
        let list: RegistryListing = c.get(&h.url("/registry")).await.json();
        assert_eq!(list.count, TOTAL, "each registry lists every registration");
        let listed: HashSet<u16> = list.registrations.iter().map(|r| r.port).collect();
        assert_eq!(listed, distinct);
    }
    // Another scope on the same Redis is another registry: it sees none of them.
    let other_dir = temp_dir();
    let other = on_redis(
        HostBuilder::registry(other_dir.path())
            .arg("--registry-scope")
            .arg("elsewhere"),
        &redis,
        other_dir.path(),
        1,
    );
    let list: RegistryListing = c.get(&other.url("/registry")).await.json();
    assert_eq!(list.count, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn appenders_through_two_chat_hosts_lose_and_duplicate_nothing() {
    let Some(redis) = RedisServer::start("appenders_through_two_chat_hosts") else {
        return;
    };
    let dirs = [temp_dir(), temp_dir()];
    let hosts: Vec<Host> = dirs.iter().map(|d| chat_on(&redis, d.path())).collect();
    let c = Client::new();
    let d = create(&c, &hosts[0], &json!({"chatName": "shared"})).await;
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let c = c.clone();
            let url = hosts[i % 2].url(&format!("/api/dialog/messages?id={}", d.id));
            tokio::spawn(async move {
                let body = json!({"role": "user", "content": format!("msg-{i}")});
                let r = c.post_json(&url, &body, Some(TOKEN)).await;
                assert_eq!(r.status, 201, "{}", r.text());
            })
        })
        .collect();
    for t in futures::future::join_all(tasks).await {
        t.unwrap();
    }
    for h in &hosts {
        let got: Dialog = c
            .get(&h.url(&format!("/api/dialog?id={}", d.id)))
            .await
            .json();
        let contents: HashSet<_> = got.messages.iter().map(|m| m.content.clone()).collect();
        assert_eq!(got.messages.len(), 32, "none duplicated");
        assert_eq!(contents, (0..32).map(|i| format!("msg-{i}")).collect());
        let ids: HashSet<_> = got.messages.iter().map(|m| m.id.clone()).collect();
        assert_eq!(ids.len(), 32, "message ids are unique");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_killed_under_load_gives_503_then_recovers_losing_nothing_acknowledged() {
    let Some(mut redis) = RedisServer::start("redis_killed_under_load") else {
        return;
    };
    let dir = temp_dir();
    let h = chat_on(&redis, dir.path());
    let c = Client::new();
    let d = create(&c, &h, &json!({"chatName": "load"})).await;
    let url = h.url(&format!("/api/dialog/messages?id={}", d.id));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // 8 writers append until told to stop, recording what was acknowledged and how every
    // refusal looked.
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (c, url, stop) = (c.clone(), url.clone(), stop.clone());
            tokio::spawn(async move {
                let (mut acked, mut refused, mut slowest) = (Vec::new(), 0usize, Duration::ZERO);
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let content = format!("w{w}-{n}");
                    n += 1;
                    let sent = Instant::now();
                    let body = json!({"role": "user", "content": content});
                    let r = c.post_json(&url, &body, Some(TOKEN)).await;
                    slowest = slowest.max(sent.elapsed());
                    match r.status {
                        201 => acked.push(content),
                        503 => {
                            let e = r.assert_error(503, "store_unavailable");
                            assert!(
                                e.error.contains("Redis at redis://127.0.0.1:"),
                                "{}",
                                e.error
                            );
                            assert_eq!(r.header("retry-after"), Some("1"));
                            refused += 1;
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        other => panic!("answer {other} while Redis comes and goes: {}", r.text()),
                    }
                }
                (acked, refused, slowest)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    redis.kill();
    // While Redis is down, reads answer 503 too, quickly.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let sent = Instant::now();
    let r = c.get(&h.url("/api/chats")).await;
    r.assert_error(503, "store_unavailable");
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    redis.restart();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut acked, mut refused, mut slowest) = (Vec::new(), 0, Duration::ZERO);
    for w in writers {
        let (a, r, s) = w.await.unwrap();
        acked.extend(a);
        refused += r;
        slowest = slowest.max(s);
    }
    println!(
        "Redis killed and restarted under 8 writers: {} appends acknowledged, {refused} refused \
         with 503, slowest answer {slowest:?}",
        acked.len()
    );
    assert!(refused > 0, "requests while Redis was down were refused");
    assert!(
        slowest < Duration::from_secs(5),
        "no request hung: {slowest:?}"
    );
    // Served again after the restart, and every acknowledged message is there (the
    // append-only file is fsynced on every write).
    let r = c
        .post_json(
            &url,
            &json!({"role": "user", "content": "after"}),
            Some(TOKEN),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    let stored: HashSet<_> = got.messages.iter().map(|m| m.content.clone()).collect();
    for a in &acked {
        assert!(stored.contains(a), "acknowledged append `{a}` was lost");
    }
    assert_eq!(stored.len(), got.messages.len(), "no append stored twice");
}

#[test]
fn redis_down_at_start_up_is_a_clear_error_naming_the_url() {
    let dir = temp_dir();
    // A port nothing listens on.
    let port = e2e_tests::free_port();
    let url = format!("redis://:hunter2@127.0.0.1:{port}/0");
    let config = e2e_tests::redis::write_runtime_config(dir.path(), &url);
    let serve_chat = || {
        std::process::Command::new(host_binary())
            .args(["serve", &component("chat").display().to_string()])
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .arg("--runtime-config-file")
            .arg(&config)
            .output()
            .unwrap()
    };
    let started = Instant::now();
    let out = serve_chat();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        err.contains(&format!("redis://:***@127.0.0.1:{port}/0")),
        "names the URL: {err}"
    );
    assert!(!err.contains("hunter2"), "never the password: {err}");
    assert!(err.contains("[key_value_store.default]"), "{err}");
    // A malformed file is refused with the section and the fix.
    std::fs::write(&config, "[key_value_store.default]\ntype = \"mongo\"\n").unwrap();
    let out = serve_chat();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("mongo") && err.contains("\"redis\""), "{err}");
}

/// `up` with the runtime config: chat dialogs shared (unscoped), the registry under this
/// machine's scope, models' counters off Redis, and Ctrl-C still leaves the registry empty.
#[tokio::test(flavor = "multi_thread")]
async fn up_on_redis_keeps_machine_keys_under_its_scope() {
    let Some(redis) = RedisServer::start("up_on_redis_keeps_machine_keys_under_its_scope") else {
        return;
    };
    let dir = temp_dir();
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::copy(component("molprop"), models.join("molprop.wasm")).unwrap();
    let config = redis.runtime_config(dir.path(), 0);
    let (models, config) = (models.to_string_lossy(), config.to_string_lossy());
    let mut stack = Stack::up(
        &[
            "--registry-scope",
            "lab-1",
            "--models",
            &models,
            "--runtime-config-file",
            &config,
        ],
        4,
    );
    let port = stack.model_port("molprop").await;
    let c = Client::new();
    let r = c
        .post_json(
            &format!("http://127.0.0.1:{port}/predict"),
            &json!({"input_type": "text", "data": {"smiles": "CCO"}}),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let keys = redis.cli(0, &["KEYS", "*"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert!(
        keys.contains(&"chat/dialog/welcome"),
        "chats are shared: {keys:?}"
    );
    assert!(keys.contains(&"hosts/lab-1/registry/leases"), "{keys:?}");
    // A model's counters live as long as its deployment: in the host's `deployment` store
    // (memory), never on the shared Redis, and still counted.
    assert!(
        !keys.iter().any(|k| k.contains("models/molprop")),
        "no model counters on Redis: {keys:?}"
    );
    let metrics = c
        .get(&format!("http://127.0.0.1:{port}/metrics"))
        .await
        .value();
    assert_eq!(metrics["requests_served"], json!(1), "{metrics}");
    assert!(
        keys.iter()
            .all(|k| k.starts_with("chat/") || k.starts_with("hosts/lab-1/")),
        "nothing else: {keys:?}"
    );
    // Ctrl-C: each model unregisters from the registry on Redis, then everything stops.
    let status = stack.stop(Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let table = redis.cli(0, &["STRLEN", "hosts/lab-1/registry/leases"]);
    assert_eq!(table, "8", "the lease table is empty: its header only");
}
