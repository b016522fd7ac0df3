//! Models deployed, upgraded and removed while `up` serves (issue 26 §2): clients send
//! predictions without pause while a model is upgraded twice, another is added and removed,
//! and a broken version is dropped into place. No request fails; each client sees the
//! versions in order (never an old answer after a new one); the registration keeps its port
//! and reports the version; a version that cannot deploy never takes traffic.

mod admin_api;
mod kept;
mod returned_memory;
mod untrusted_files;

use e2e_tests::copy_model;
use e2e_tests::{Client, Stack, component, temp_dir};
use edge_api::registry::RegistryListing;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const VERSION: &str = "x-model-version";

/// `component` with a custom section naming `tag` appended: a valid component with the same
/// behaviour and different bytes, i.e. a new version.
pub fn tagged(component: &Path, tag: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(component).unwrap();
    let name = b"edge-test-version";
    let mut body = vec![name.len() as u8];
    body.extend_from_slice(name);
    body.extend_from_slice(tag.as_bytes());
    bytes.push(0); // custom section id
    bytes.push(body.len() as u8);
    bytes.extend(body);
    bytes
}

/// Writes `bytes` to `path` the way a deployment tool should: a new file renamed into place.
pub fn put(path: &Path, bytes: &[u8]) {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes).unwrap();
    std::fs::rename(partial, path).unwrap();
}

/// Polls `check` until it holds (within 180 s: a new version of an ONNX model directory is
/// a new pre-initialized component, compiled anew, which beside the other test binaries on
/// two cores once took over 60 s).
pub async fn until<F: std::future::Future<Output = bool>>(what: &str, check: impl FnMut() -> F) {
    e2e_tests::until(what, Duration::from_secs(180), check).await;
}

pub async fn listing(stack: &Stack) -> RegistryListing {
    Client::new().get(&stack.registry("/registry")).await.json()
}

#[tokio::test(flavor = "multi_thread")]
async fn models_upgrade_and_come_and_go_under_load_without_a_failed_request() {
    let models = temp_dir();
    let molprop = models.path().join("molprop.wasm");
    put(&molprop, &std::fs::read(component("molprop")).unwrap());
    let dir = models.path().to_str().unwrap();
    let stack = Stack::up(&["--models", dir, "--watch-interval", "300ms"], 8);
    let port = stack.model_port("molprop").await;
    let c = Client::new();
    let body = json!({"input_type": "text", "data": {"text": "CCO", "property": "logp"}});
    let first = c
        .post_json(&stack.app("/models/molprop/predict"), &body, None)
        .await;
    let v1 = first.header(VERSION).expect("a version header").to_owned();

    // Four clients without pause: three through the app port, one on the model's own port.
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for i in 0..4 {
        let url = if i == 3 {
            format!("http://127.0.0.1:{port}/predict")
        } else {
            stack.app("/models/molprop/predict")
        };
        let (stop, body) = (stop.clone(), body.clone());
        clients.push(tokio::spawn(async move {
            let c = Client::new();
            let mut seen: Vec<(u16, String)> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let r = c.post_json(&url, &body, None).await;
                let version = r.header(VERSION).unwrap_or_default().to_owned();
                seen.push((r.status, version));
            }
            seen
        }));
    }
    let answered_by = |v: String| {
        let (c, url, body) = (
            c.clone(),
            stack.app("/models/molprop/predict"),
            body.clone(),
        );
        move || {
            let (c, url, body, v) = (c.clone(), url.clone(), body.clone(), v.clone());
            async move { c.post_json(&url, &body, None).await.header(VERSION) == Some(&v) }
        }
    };

    // Two upgrades: each new version takes over.
    let mut versions = vec![v1.clone()];
    for tag in ["2", "3"] {
        let before = versions.last().unwrap().clone();
        put(&molprop, &tagged(&component("molprop"), tag));
        until("the new version answering", || {
            let (c, url, body, before) = (
                c.clone(),
                stack.app("/models/molprop/predict"),
                body.clone(),
                before.clone(),
            );
            async move {
                let r = c.post_json(&url, &body, None).await;
                r.header(VERSION).is_some_and(|v| v != before)
            }
        })
        .await;
        let now = c
            .post_json(&stack.app("/models/molprop/predict"), &body, None)
            .await
            .header(VERSION)
            .unwrap()
            .to_owned();
        versions.push(now);
    }
    let v3 = versions[2].clone();
    assert_eq!(
        versions
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        3,
        "{versions:?}"
    );

    // Same port, and the registration reports the version serving; so do /info and /health.
    let reg = listing(&stack).await;
    let entry = reg
        .registrations
        .iter()
        .find(|r| r.app_name == "runtime-host/molprop")
        .unwrap();
    assert_eq!(entry.port, port);
    let registered = || {
        let (c, url, v3) = (c.clone(), stack.registry("/registry"), v3.clone());
        async move {
            let l: RegistryListing = c.get(&url).await.json();
            l.registrations.iter().any(|r| {
                r.app_name == "runtime-host/molprop"
                    && r.metadata.get("model_version") == Some(&json!(v3))
            })
        }
    };
    until("the registration naming the new version", registered).await;
    for path in ["/info", "/health"] {
        let r = c.get(&format!("http://127.0.0.1:{port}{path}")).await;
        assert_eq!(
            r.value()["model_version"],
            json!(v3),
            "{path}: {}",
            r.text()
        );
    }

    // A model added, then removed, while molprop serves on.
    put(
        &models.path().join("echo.wasm"),
        &std::fs::read(component("echo-model")).unwrap(),
    );
    until("echo deployed", || {
        let (c, url) = (c.clone(), stack.app("/models/echo/health"));
        async move { c.get(&url).await.status == 200 }
    })
    .await;
    assert!(
        listing(&stack)
            .await
            .registrations
            .iter()
            .any(|r| r.app_name == "runtime-host/echo")
    );
    std::fs::remove_file(models.path().join("echo.wasm")).unwrap();
    until("echo removed and unregistered", || {
        let (c, url, reg) = (
            c.clone(),
            stack.app("/models/echo/health"),
            stack.registry("/registry"),
        );
        async move {
            let l: RegistryListing = c.get(&reg).await.json();
            c.get(&url).await.status == 404
                && !l
                    .registrations
                    .iter()
                    .any(|r| r.app_name == "runtime-host/echo")
        }
    })
    .await;

    // A broken version (half a component) never takes traffic: the last good one serves on.
    let good = std::fs::read(component("molprop")).unwrap();
    put(&molprop, &good[..good.len() / 2]);
    until("the broken version refused", || {
        let log = stack.log();
        async move { log.contains("new version refused") }
    })
    .await;
    assert!(
        answered_by(v3.clone())().await,
        "the last good version serves on"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;

    stop.store(true, Ordering::Relaxed);
    let order: Vec<&String> = versions.iter().collect();
    let mut total = 0;
    for (i, client) in clients.into_iter().enumerate() {
        let seen = client.await.unwrap();
        total += seen.len();
        let failed: Vec<_> = seen.iter().filter(|(s, _)| *s != 200).collect();
        assert!(
            failed.is_empty(),
            "client {i}: {} failed: {:?}",
            failed.len(),
            &failed[..failed.len().min(5)]
        );
        // Never an older version after a newer one.
        let ranks: Vec<usize> = seen
            .iter()
            .map(|(_, v)| {
                order
                    .iter()
                    .position(|o| *o == v)
                    .unwrap_or_else(|| panic!("unknown version {v}"))
            })
            .collect();
        assert!(
            ranks.windows(2).all(|w| w[0] <= w[1]),
            "client {i} went back a version: {ranks:?}"
        );
        assert_eq!(
            ranks.last(),
            Some(&2),
            "client {i} ends on the last version"
        );
    }
    assert!(total > 200, "the clients kept sending ({total} requests)");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_directory_that_fails_its_self_test_never_takes_traffic() {
    let models = temp_dir();
    let iris = models.path().join("iris");
    copy_model(&e2e_tests::model_dir("iris"), &iris);
    let dir = models.path().to_str().unwrap();
    let stack = Stack::up(&["--models", dir, "--watch-interval", "300ms"], 4);
    let c = Client::new();
    let info = stack.app("/models/iris/info");
    let v1 = c.get(&info).await.value()["model_version"].clone();
    assert!(
        v1.as_str().is_some_and(|v| v.starts_with("sha256:")),
        "{v1}"
    );

    // A manifest whose model file is missing: the new version cannot pass its self-test.
    let manifest = std::fs::read_to_string(iris.join("model.toml")).unwrap();
    std::fs::remove_file(iris.join("model.onnx")).unwrap();
    until("the broken version refused", || {
        let log = stack.log();
        async move { log.contains("new version refused") && log.contains("model=iris") }
    })
    .await;
    let r = c.get(&info).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.value()["model_version"], v1, "the old version serves on");

    // Repaired, with the manifest naming its own version: that version takes over.
    copy_model(&e2e_tests::model_dir("iris"), &iris);
    let named = manifest.replacen("[info]\n", "[info]\nmodel_version = \"2026.11-b\"\n", 1);
    std::fs::write(iris.join("model.toml"), named).unwrap();
    until("the repaired version serving", || {
        let (c, info) = (c.clone(), info.clone());
        async move { c.get(&info).await.value()["model_version"] == "2026.11-b" }
    })
    .await;
    // Its predictions come from the snapshot of this version's files.
    let body = json!({"input_type": "tabular", "data": {"features": {
        "sepal_length_cm": 5.1, "sepal_width_cm": 3.5, "petal_length_cm": 1.4, "petal_width_cm": 0.2}}});
    let r = c
        .post_json(&stack.app("/models/iris/predict"), &body, None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
}
