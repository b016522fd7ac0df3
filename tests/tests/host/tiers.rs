//! Tiered compilation (issue 48 §1): a component the compilation cache lacks answers at once
//! from Winch's baseline code, Cranelift's optimized code takes over under load without a
//! failed request, a restart serves the optimized code from the cache, a component Winch
//! refuses is served from Cranelift's code (the log says why), and `--optimized-only` waits
//! for Cranelift as before.

use e2e_tests::{Client, HostBuilder, Stack, component, model_dir, temp_dir};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Whether the host's metrics say the deployment's new instances run baseline code.
async fn on_baseline(c: &Client, metrics: &str) -> bool {
    let text = c.get(metrics).await.text();
    let line = text
        .lines()
        .find(|l| l.starts_with("runtime_host_baseline_code{"))
        .unwrap_or_else(|| panic!("no runtime_host_baseline_code in:\n{text}"));
    line.ends_with(" 1")
}

fn solubility_request() -> Value {
    json!({"input_type": "text", "data": {"text": "CCO"}})
}

/// Serves the solubility model (the 8.4 MB ONNX component) from an empty cache, with the
/// host's metrics on a port of their own.
fn solubility(
    cache: &std::path::Path,
    data: &std::path::Path,
    extra: &[&str],
) -> (e2e_tests::Host, String) {
    let metrics = e2e_tests::free_port();
    let mut builder = HostBuilder::new(component("onnx-model"), data)
        .mount(&model_dir("solubility"), "/model")
        .arg("--cache-dir")
        .arg(cache.display().to_string())
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{metrics}"));
    for a in extra {
        builder = builder.arg(*a);
    }
    (
        builder.start(),
        format!("http://127.0.0.1:{metrics}/metrics"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_model_answers_from_baseline_code_then_switches_to_optimized_under_load() {
    let (cache, data) = (temp_dir(), temp_dir());
    let started = Instant::now();
    let (host, metrics) = solubility(cache.path(), data.path(), &[]);
    let c = Client::new();
    let first = c
        .post_json(&host.url("/predict"), &solubility_request(), None)
        .await;
    assert_eq!(first.status, 200, "{}", first.text());
    println!(
        "first /predict from an empty cache after {:.2} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        on_baseline(&c, &metrics).await,
        "the first answers come from baseline code while Cranelift compiles:\n{}",
        host.output()
    );
    let expected = first.value();

    // Four clients predict without pause across the switch; every answer must be right.
    let stop = Arc::new(AtomicBool::new(false));
    let (served, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (c, url, expected) = (c.clone(), host.url("/predict"), expected.clone());
            let (stop, served, failed) = (stop.clone(), served.clone(), failed.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let r = c.post_json(&url, &solubility_request(), None).await;
                    if r.status == 200 && r.value()["result"] == expected["result"] {
                        served.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failed.fetch_add(1, Ordering::Relaxed);
                        eprintln!("failed during the switch: {} {}", r.status, r.text());
                    }
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(240);
    while on_baseline(&c, &metrics).await {
        assert!(
            Instant::now() < deadline,
            "no optimized code after 240 s:\n{}",
            host.output()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!(
        "optimized code in place {:.1} s after the start; {} predictions so far",
        started.elapsed().as_secs_f64(),
        served.load(Ordering::Relaxed)
    );
    // Load goes on for a moment on the optimized code.
    let before = served.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    assert_eq!(failed.load(Ordering::Relaxed), 0, "no request failed");
    assert!(
        served.load(Ordering::Relaxed) > before,
        "predictions went on after the switch"
    );
    assert!(
        host.output().contains("optimized code in place"),
        "{}",
        host.output()
    );
    drop(host);

    // A restart finds the optimized code (the snapshot's) in the cache: no baseline.
    let (host, metrics) = solubility(cache.path(), data.path(), &[]);
    let again = c
        .post_json(&host.url("/predict"), &solubility_request(), None)
        .await;
    assert_eq!(again.value()["result"], expected["result"]);
    assert!(!on_baseline(&c, &metrics).await, "{}", host.output());
}

#[tokio::test(flavor = "multi_thread")]
async fn optimized_only_serves_cranelifts_code_from_the_first_request() {
    let (cache, data) = (temp_dir(), temp_dir());
    let metrics = e2e_tests::free_port();
    let host = HostBuilder::new(component("molprop"), data.path())
        .arg("--cache-dir")
        .arg(cache.path().display().to_string())
        .arg("--optimized-only")
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{metrics}"))
        .start();
    let c = Client::new();
    assert_eq!(c.get(&host.url("/health")).await.status, 200);
    let metrics = format!("http://127.0.0.1:{metrics}/metrics");
    assert!(!on_baseline(&c, &metrics).await, "{}", host.output());
    assert!(
        !host.output().contains("Winch"),
        "no baseline compile: {}",
        host.output()
    );
}

/// The fallback: a component Winch refuses (relaxed SIMD) is served, from its first
/// request, from Cranelift's code, and the log says why it was not served from Winch's.
#[tokio::test(flavor = "multi_thread")]
async fn a_component_winch_refuses_is_served_from_cranelifts_code_and_the_log_says_why() {
    let (cache, data) = (temp_dir(), temp_dir());
    let metrics = e2e_tests::free_port();
    let host = HostBuilder::new(component("winch-refused"), data.path())
        .arg("--cache-dir")
        .arg(cache.path().display().to_string())
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{metrics}"))
        .start();
    let c = Client::new();
    let answer = c.get(&host.url("/?x=20")).await;
    assert_eq!(answer.status, 200, "{}\n{}", answer.text(), host.output());
    assert_eq!(
        answer.value()["madd"].as_f64(),
        Some(41.0),
        "20 * 2 + 1 by relaxed SIMD"
    );
    let metrics = format!("http://127.0.0.1:{metrics}/metrics");
    assert!(!on_baseline(&c, &metrics).await, "{}", host.output());
    let log = host.output();
    let refusal = log
        .lines()
        .find(|l| l.contains("Winch could not compile it"))
        .unwrap_or_else(|| panic!("the log says Winch refused the component:\n{log}"));
    assert!(refusal.contains("relaxed SIMD"), "and why: {refusal}");
    assert!(
        !log.contains("optimized code in place"),
        "no switch: it never ran baseline code\n{log}"
    );
}

/// Moves a copy of `models/<name>` into the watched `models` directory at once (staged in
/// `staging`, as a deployment tool would) and waits for its first answer; the seconds taken.
async fn drop_model(
    stack: &Stack,
    c: &Client,
    models: &std::path::Path,
    staging: &std::path::Path,
    name: &str,
) -> f64 {
    let staged = staging.join(format!("staged-{name}"));
    e2e_tests::copy_model(&model_dir(name), &staged);
    let dropped = Instant::now();
    std::fs::rename(&staged, models.join(name)).unwrap();
    let predict = stack.app(&format!("/models/{name}/predict"));
    let body = model_example(name);
    e2e_tests::until(
        &format!("{name} answering"),
        Duration::from_secs(180),
        || {
            let (c, predict, body) = (c.clone(), predict.clone(), body.clone());
            async move { c.post_json(&predict, &body, None).await.status == 200 }
        },
    )
    .await;
    dropped.elapsed().as_secs_f64()
}

/// `up` watching `models` every 100 ms, compiling into `cache`.
fn up_watching(models: &std::path::Path, cache: &std::path::Path) -> Stack {
    let (dir, cache_dir) = (models.to_str().unwrap(), cache.to_str().unwrap());
    let watching = ["--models", dir, "--watch-interval", "100ms"];
    Stack::up(&[&watching[..], &["--cache-dir", cache_dir]].concat(), 4)
}

/// A request each model answers: a SMILES for solubility, a flower's four measures for iris.
fn model_example(name: &str) -> Value {
    match name {
        "solubility" => solubility_request(),
        _ => json!({"input_type": "tabular", "data": {"features": [5.1, 3.5, 1.4, 0.2]}}),
    }
}

/// `up` from an empty cache: the stack comes up on baseline code, caches the ONNX
/// component's baseline code in the background, and a model directory dropped into
/// `--models` then answers from baseline code, self-tested and registered, before Cranelift
/// has compiled it. The times are printed (the bench is where figures come from).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_dropped_into_up_answers_before_cranelift_has_compiled_it() {
    let (models, cache) = (temp_dir(), temp_dir());
    let started = Instant::now();
    let stack = up_watching(models.path(), cache.path());
    println!(
        "stack ready from an empty cache in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // `up` caches the ONNX component's baseline code in the background, for the first
    // model directory to come.
    e2e_tests::until_said(
        "the ONNX component's baseline code cached",
        Duration::from_secs(120),
        || stack.log(),
        "baseline code cached",
    )
    .await;
    println!(
        "the ONNX component's baseline code cached {:.1} s after the start",
        started.elapsed().as_secs_f64()
    );
    let c = Client::new();
    let staging = temp_dir();
    let first = drop_model(&stack, &c, models.path(), staging.path(), "solubility").await;
    println!("solubility's first /predict {first:.2} s after its directory appeared");
    // Cranelift and the snapshot take tens of seconds on two cores: still on Winch's code.
    let text = c.get(&stack.app("/metrics")).await.text();
    let baseline = text
        .lines()
        .find(|l| l.starts_with("runtime_host_baseline_code{") && l.contains("solubility"))
        .unwrap_or_else(|| panic!("no baseline_code series for solubility:\n{text}"));
    assert!(
        baseline.ends_with(" 1"),
        "it answered before Cranelift's code was ready: {baseline}"
    );
    let registered = c.get(&stack.registry("/registry")).await.text();
    assert!(registered.contains("\"solubility\""), "{registered}");
    // The next ONNX model finds the component's baseline code in the cache.
    let second = drop_model(&stack, &c, models.path(), staging.path(), "iris").await;
    println!("iris's first /predict {second:.2} s after its directory appeared");
}

/// A model removed while it still runs Winch's code: its optimized compile (a child
/// process preparing the snapshot, or a turn still to come) stops instead of finishing for
/// nothing, and no child is left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_removed_before_its_optimized_code_is_ready_stops_its_compile() {
    let (models, cache) = (temp_dir(), temp_dir());
    let stack = up_watching(models.path(), cache.path());
    let c = Client::new();
    let staging = temp_dir();
    drop_model(&stack, &c, models.path(), staging.path(), "solubility").await;
    std::fs::remove_dir_all(models.path().join("solubility")).unwrap();
    e2e_tests::until_said(
        "the removed model's optimized compile stopped",
        Duration::from_secs(60),
        || stack.log(),
        "optimized compile stopped",
    )
    .await;
    // No `runtime-host prepare` child of this cache is left running: it was sent SIGKILL,
    // which takes effect within moments (longer on a loaded machine), not at once.
    let prepare = ["prepare", cache.path().to_str().unwrap()];
    let gone = e2e_tests::until(
        "the prepare child gone after its compile stopped",
        Duration::from_secs(10),
        || std::future::ready(e2e_tests::processes_with(&prepare).is_empty()),
    );
    gone.await;
}
