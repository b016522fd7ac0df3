//! Issue 47 §2: the registry, the chat write path and the models' health and metrics stay
//! correct on Spin's own stores, whose compare-and-swap cannot be relied on (Spin 4.0.2's
//! SQLite store lets every swap from an absent key win; its Redis store reports every swap as
//! lost, written or not). One scenario runs against four deployments: the real Spin on a
//! fresh SQLite store, two real Spin processes sharing one redis-server, and runtime-host
//! with its stores made to swap as each of Spin's does (`--simulate-spin-swap`).

use e2e_tests::chat::TOKEN;
use e2e_tests::redis::RedisServer;
use e2e_tests::registrations::register_concurrently;
use e2e_tests::spin::SpinApp;
use e2e_tests::{Client, Host, HostBuilder, component, model_dir, temp_dir};
use edge_api::chat::Dialog;
use serde_json::{Value, json};
use std::collections::HashSet;

/// Registrations in the scenario, sent by 32 clients at once.
const REGISTRATIONS: usize = 48;
/// Messages appended to one dialog at once.
const APPENDS: usize = 24;
/// Predictions sent at once.
const PREDICTIONS: usize = 40;

/// Where the scenario sends each interface's requests: base URLs, one per process serving
/// it (requests are spread over them), and whatever keeps those processes running.
struct Deployment {
    what: &'static str,
    registries: Vec<String>,
    chats: Vec<String>,
    models: Vec<String>,
    _running: Vec<Box<dyn std::any::Any>>,
}

fn registration(i: usize) -> Value {
    json!({
        "app_name": "spin-stores", "app_version": "1.0.0", "model_name": format!("m{i}"),
        "process_id": std::process::id(), "preferred_port": null,
        "reason": "test", "metadata": {}
    })
}

/// The scenario: concurrent registrations get distinct ports and are all listed; racing
/// creators of one dialog id get one 201; concurrent appends all land; the model is healthy
/// and counts every prediction.
async fn holds_under_concurrency(d: &Deployment) {
    let what = d.what;
    let c = Client::new();

    let urls: Vec<String> = d
        .registries
        .iter()
        .map(|b| format!("{b}/register"))
        .collect();
    let ports = register_concurrently(&urls, REGISTRATIONS, registration).await;
    let distinct: HashSet<u16> = ports.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        REGISTRATIONS,
        "{what}: a port went twice: {ports:?}"
    );
    for base in &d.registries {
        let listed = c.get(&format!("{base}/registry")).await.value();
        assert_eq!(listed["count"], REGISTRATIONS, "{what}: {listed}");
    }

    // Creators racing for one client-chosen id: one wins, the others are told it exists.
    let id = format!("race-{}", std::process::id());
    let creators: Vec<_> = (0..8)
        .map(|i| {
            let (c, url) = (
                c.clone(),
                format!("{}/api/chats", d.chats[i % d.chats.len()]),
            );
            let body = json!({"id": id, "chatName": format!("creator {i}"),
                "messages": [{"role": "user", "content": format!("from creator {i}")}]});
            tokio::spawn(async move { c.post_json(&url, &body, Some(TOKEN)).await.status })
        })
        .collect();
    let mut statuses = Vec::new();
    for creator in creators {
        statuses.push(creator.await.unwrap());
    }
    statuses.sort();
    assert_eq!(statuses, [201, 409, 409, 409, 409, 409, 409, 409], "{what}");

    let appenders: Vec<_> = (0..APPENDS)
        .map(|i| {
            let base = &d.chats[i % d.chats.len()];
            let (c, url) = (c.clone(), format!("{base}/api/dialog/messages?id={id}"));
            let body = json!({"role": "user", "content": format!("append {i}")});
            tokio::spawn(async move { c.post_json(&url, &body, Some(TOKEN)).await })
        })
        .collect();
    for appender in appenders {
        let r = appender.await.unwrap();
        assert_eq!(r.status, 201, "{what}: {}", r.text());
    }
    let dialog: Dialog = c
        .get(&format!("{}/api/dialog?id={id}", d.chats[0]))
        .await
        .json();
    assert_eq!(dialog.messages.len(), 1 + APPENDS, "{what}: appends lost");

    for base in &d.models {
        let health = c.get(&format!("{base}/health")).await;
        assert_eq!(health.status, 200, "{what}: {}", health.text());
    }
    let served = |v: Value| {
        v["requests_served"]
            .as_u64()
            .unwrap_or_else(|| panic!("{v}"))
    };
    let before = served(c.get(&format!("{}/metrics", d.models[0])).await.value());
    let predictions: Vec<_> = (0..PREDICTIONS)
        .map(|i| {
            let url = format!("{}/predict", d.models[i % d.models.len()]);
            let c = c.clone();
            let body = json!({"input_type": "text", "data": {"text": "CCO"}});
            tokio::spawn(async move { c.post_json(&url, &body, None).await })
        })
        .collect();
    for p in predictions {
        let r = p.await.unwrap();
        assert_eq!(r.status, 200, "{what}: {}", r.text());
    }
    let after = served(c.get(&format!("{}/metrics", d.models[0])).await.value());
    assert_eq!(
        after - before,
        PREDICTIONS as u64,
        "{what}: predictions not counted"
    );
}

/// The app under the real Spin, with `runtime_config` if given, `processes` times.
fn under_spin(
    what: &'static str,
    processes: usize,
    config: Option<&std::path::Path>,
) -> Option<Deployment> {
    let mut apps = Vec::new();
    for _ in 0..processes {
        apps.push(SpinApp::up_with(what, TOKEN, config, &[])?);
    }
    let bases: Vec<String> = apps.iter().map(SpinApp::base_url).collect();
    Some(Deployment {
        what,
        registries: bases.clone(),
        chats: bases.iter().map(|b| b.to_owned()).collect(),
        models: bases
            .iter()
            .map(|b| format!("{b}/models/solubility"))
            .collect(),
        _running: apps
            .into_iter()
            .map(|a| Box::new(a) as Box<dyn std::any::Any>)
            .collect(),
    })
}

/// runtime-host serving the registry and chat, each `processes` times, and solubility once
/// (its counters are kept in memory, per host), every store swapping as Spin's `like` store
/// does, with `configure` adding the store options. Each host has a data directory of its
/// own under `dir`.
fn under_runtime_host(
    what: &'static str,
    like: &str,
    processes: usize,
    dir: &std::path::Path,
    configure: impl Fn(HostBuilder) -> HostBuilder,
) -> Deployment {
    let mut made = 0;
    let mut data = || {
        made += 1;
        dir.join(format!("host-{made}"))
    };
    let start = |builder: HostBuilder| -> Host {
        configure(builder.arg("--simulate-spin-swap").arg(like)).start()
    };
    let (mut registries, mut chats) = (Vec::new(), Vec::new());
    for _ in 0..processes {
        registries.push(start(
            HostBuilder::registry(&data())
                .arg("--max-per-process")
                .arg("0"),
        ));
        chats.push(start(e2e_tests::chat::builder(&data())));
    }
    let model = start(
        HostBuilder::new(component("onnx-model"), &data())
            .shared_compile_cache()
            .mount(&model_dir("solubility"), "/model"),
    );
    let urls = |hosts: &[Host]| hosts.iter().map(|h| h.url("")).collect();
    Deployment {
        what,
        registries: urls(&registries),
        chats: urls(&chats),
        models: vec![model.url("")],
        _running: registries
            .into_iter()
            .chain(chats)
            .chain([model])
            .map(|h| Box::new(h) as Box<dyn std::any::Any>)
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spin_on_a_fresh_sqlite_store() {
    let Some(d) = under_spin("Spin, SQLite", 1, None) else {
        return;
    };
    holds_under_concurrency(&d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_spin_processes_on_one_redis() {
    let Some(redis) = RedisServer::start("two_spin_processes_on_one_redis") else {
        return;
    };
    let dir = temp_dir();
    let config = redis.runtime_config(dir.path(), 0);
    let Some(d) = under_spin("two Spin processes, one Redis", 2, Some(&config)) else {
        return;
    };
    holds_under_concurrency(&d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runtime_host_swapping_as_spins_sqlite_store() {
    let dir = temp_dir();
    let d = under_runtime_host(
        "runtime-host, swaps as Spin's SQLite",
        "sqlite",
        1,
        dir.path(),
        |b| b,
    );
    holds_under_concurrency(&d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_runtime_hosts_on_one_redis_swapping_as_spins_redis_store() {
    let Some(redis) = RedisServer::start("two_runtime_hosts_swapping_as_spins_redis_store") else {
        return;
    };
    let dir = temp_dir();
    let config = redis.runtime_config(dir.path(), 0);
    let d = under_runtime_host(
        "runtime-host, swaps as Spin's Redis",
        "redis",
        2,
        dir.path(),
        |b| {
            b.arg("--runtime-config-file")
                .arg(config.display().to_string())
        },
    );
    holds_under_concurrency(&d).await;
}

/// Appenders through each process of [`spin_and_runtime_host_on_one_redis_lose_no_append`].
const MIXED_APPENDERS: usize = 16;
/// Appends each of them sends, one after another.
const MIXED_ROUNDS: usize = 5;

/// Issue 56 §6: a `spin up` and a `runtime-host` serving chat on one Redis. Spin's requests
/// change a dialog under guest-kit's lock of increments (its store's swaps cannot be
/// trusted) with a plain write; runtime-host's swap. Each used to overwrite the other's
/// appends (160 answered 201, 139-144 stored). Now 2 x 16 appenders at once, and every
/// append answered 201 is in the dialog, once, as both processes read it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spin_and_runtime_host_on_one_redis_lose_no_append() {
    let Some(redis) = RedisServer::start("spin_and_runtime_host_on_one_redis") else {
        return;
    };
    let dir = temp_dir();
    let config = redis.runtime_config(dir.path(), 0);
    let Some(spin) = SpinApp::up_with(
        "Spin and runtime-host, one Redis",
        TOKEN,
        Some(&config),
        &[],
    ) else {
        return;
    };
    let host = e2e_tests::chat::builder(&dir.path().join("host"))
        .arg("--runtime-config-file")
        .arg(config.display().to_string())
        .start();
    let bases = [spin.base_url(), host.url("")];
    let c = Client::new();
    let id = format!("mixed-{}", std::process::id());
    let created = c
        .post_json(
            &format!("{}/api/chats", bases[0]),
            &json!({"id": id, "chatName": "mixed", "messages": [{"role": "user", "content": "first"}]}),
            Some(TOKEN),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text());

    let appenders: Vec<_> = (0..2 * MIXED_APPENDERS)
        .map(|k| {
            let base = bases[k % 2].clone();
            let (c, url) = (c.clone(), format!("{base}/api/dialog/messages?id={id}"));
            tokio::spawn(async move {
                let (mut kept, mut unanswered) = (Vec::new(), Vec::new());
                for round in 0..MIXED_ROUNDS {
                    let content = format!("append {k}-{round} via {base}");
                    let body = json!({"role": "user", "content": content});
                    let r = c.post_json(&url, &body, Some(TOKEN)).await;
                    match r.status {
                        201 => kept.push(content),
                        // A store too contended, or too slow, to finish in time says so. A
                        // lock never taken kept nothing; a write whose answer timed out may
                        // have landed (never twice).
                        503 => {
                            assert!(r.text().contains("store_"), "{}", r.text());
                            unanswered.push(content);
                        }
                        _ => panic!("append {k}-{round} via {base}: {} {}", r.status, r.text()),
                    }
                }
                (kept, unanswered)
            })
        })
        .collect();
    let (mut acknowledged, mut unanswered) = (Vec::new(), Vec::new());
    for appender in appenders {
        let (kept, refused) = appender.await.unwrap();
        acknowledged.extend(kept);
        unanswered.extend(refused);
    }
    let total = 2 * MIXED_APPENDERS * MIXED_ROUNDS;
    assert!(
        acknowledged.len() * 10 >= total * 9,
        "only {} of {total} appends answered 201",
        acknowledged.len()
    );
    for base in &bases {
        let dialog: Dialog = c.get(&format!("{base}/api/dialog?id={id}")).await.json();
        let stored: Vec<String> = dialog.messages.iter().map(|m| m.content.clone()).collect();
        let lost: Vec<&String> = acknowledged
            .iter()
            .filter(|a| stored.iter().filter(|s| s == a).count() != 1)
            .collect();
        assert!(
            lost.is_empty(),
            "read through {base}: {} of {} acknowledged appends are not stored once, e.g. {:?}",
            lost.len(),
            acknowledged.len(),
            lost.first()
        );
        // Nothing else, and nothing twice: the first message, the acknowledged ones, and
        // perhaps some whose answer was a 503.
        let mut unique = stored.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            unique.len(),
            stored.len(),
            "a message stored twice via {base}"
        );
        let extra = stored.len().saturating_sub(1 + acknowledged.len());
        assert!(
            extra <= unanswered.len()
                && stored
                    .iter()
                    .all(|m| m == "first" || acknowledged.contains(m) || unanswered.contains(m)),
            "read through {base}: {stored:?}"
        );
    }
}
