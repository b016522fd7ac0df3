//! The Open Inference Protocol on `up`'s app port (each model by name under
//! `/v2/models/<name>`, the server's `/v2` and health answered by the host), and
//! `runtime-host check --oip`: it passes our deployments and fails a server that breaks the
//! protocol, naming the fault.

use e2e_tests::{Client, Stack, component, host_binary, temp_dir};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// `runtime-host check --oip <url> --json [extra]`: exit ok, rule -> (status, problems).
fn check_oip(url: &str, extra: &[&str]) -> (bool, HashMap<String, (String, Vec<String>)>) {
    let out = std::process::Command::new(host_binary())
        .args(["check", "--oip", url, "--json"])
        .args(extra)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let rules = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let problems = r["problems"].as_array().into_iter().flatten();
            let problems = problems.map(|p| p.as_str().unwrap().to_owned()).collect();
            let status = r["status"].as_str().unwrap().to_owned();
            (r["rule"].as_str().unwrap().to_owned(), (status, problems))
        })
        .collect();
    (out.status.success(), rules)
}

/// Every rule passed, and each of `models` was judged down to its binary inference.
fn assert_passes(url: &str, extra: &[&str], models: &[&str]) {
    let (ok, rules) = check_oip(url, extra);
    let not_passed: Vec<_> = rules.iter().filter(|(_, (s, _))| s != "PASS").collect();
    assert!(ok && not_passed.is_empty(), "{url}: {not_passed:#?}");
    for model in models {
        for part in [
            "metadata",
            "ready",
            "bad_request",
            "infer.json",
            "infer.binary",
        ] {
            let rule = format!("OIP.{model}.{part}");
            assert!(rules.contains_key(&rule), "{url}: no {rule} in {rules:#?}");
        }
    }
    assert_eq!(rules["OIP.unknown_model"].0, "PASS");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_port_routes_v2_by_name_and_check_oip_passes_every_model() {
    let stack = Stack::up(&[], 8);
    let c = Client::new();

    // The server's own routes, answered by the host for the whole app.
    let server = c.get(&stack.app("/v2")).await.value();
    assert_eq!(server["name"], "lightweight-model-runtime", "{server}");
    assert_eq!(
        server["extensions"],
        json!(["binary_tensor_data"]),
        "{server}"
    );
    assert!(server["version"].is_string(), "{server}");
    let live = c.get(&stack.app("/v2/health/live")).await;
    assert_eq!((live.status, live.value()), (200, json!({"live": true})));
    let ready = c.get(&stack.app("/v2/health/ready")).await;
    assert_eq!((ready.status, ready.value()), (200, json!({"ready": true})));
    let post = c
        .post_raw(&stack.app("/v2/health/ready"), b"{}".to_vec(), None)
        .await;
    assert_eq!(post.status, 405, "{}", post.text());
    assert!(post.value()["error"].as_str().unwrap().contains("GET"));

    // A model by name reaches the model itself; an unknown one gets the protocol's 404.
    let iris = c.get(&stack.app("/v2/models/iris")).await.value();
    assert_eq!(iris["name"], "iris", "{iris}");
    let unknown = c.get(&stack.app("/v2/models/nothing-here/infer")).await;
    assert_eq!(unknown.status, 404, "{}", unknown.text());
    let error = unknown.value()["error"].as_str().unwrap().to_owned();
    assert!(
        error.contains("nothing-here") && error.contains("iris"),
        "{error}"
    );

    // Every model the app serves, found in its registry, passes; so does one model's own port.
    let every = e2e_tests::stack::SHIPPED_MODELS;
    assert_passes(&stack.app(""), &[], &every);
    let port = stack.model_port("molprop").await;
    assert_passes(&format!("http://127.0.0.1:{port}"), &[], &["molprop"]);
    // Named models only.
    let (ok, rules) = check_oip(&stack.app(""), &["--model", "iris"]);
    assert!(ok, "{rules:#?}");
    assert!(
        rules.contains_key("OIP.iris.infer.binary") && !rules.contains_key("OIP.molprop.ready")
    );
}

/// `/v2/health/ready` is 400 naming a model that does not serve, 200 once it is gone; a
/// model removed from the watched directory is no longer routed by name.
#[tokio::test(flavor = "multi_thread")]
async fn app_readiness_names_a_model_not_serving_and_routes_follow_hot_deploys() {
    let models = temp_dir();
    std::fs::copy(component("echo-model"), models.path().join("echo.wasm")).unwrap();
    std::fs::write(
        models.path().join("broken.wasm"),
        b"\0asm but not a component",
    )
    .unwrap();
    let stack = Stack::up(&["--models", models.path().to_str().unwrap()], 4);
    let c = Client::new();

    let r = c.get(&stack.app("/v2/health/ready")).await;
    assert_eq!(r.status, 400, "{}", r.text());
    let v = r.value();
    assert_eq!(v["ready"], false, "{v}");
    assert!(v["error"].as_str().unwrap().contains("broken"), "{v}");
    let echo = c.get(&stack.app("/v2/models/echo/ready")).await;
    assert_eq!(echo.status, 200, "{}", echo.text());

    std::fs::remove_file(models.path().join("broken.wasm")).unwrap();
    wait_for(&c, &stack.app("/v2/health/ready"), 200).await;
    std::fs::remove_file(models.path().join("echo.wasm")).unwrap();
    wait_for(&c, &stack.app("/v2/models/echo"), 404).await;
    let gone = c.get(&stack.app("/v2/models/echo")).await.value();
    assert!(gone["error"].as_str().unwrap().contains("echo"), "{gone}");
}

async fn wait_for(c: &Client, url: &str, status: u16) {
    let started = Instant::now();
    loop {
        let r = c.get(url).await;
        if r.status == status {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{url}: still {}: {}",
            r.status,
            r.text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A server that declares a datatype the protocol does not have and answers 200 for a model
/// it does not serve: `check --oip` fails, naming both faults, and runs no inference it
/// cannot build.
#[tokio::test(flavor = "multi_thread")]
async fn check_oip_fails_a_server_that_breaks_the_protocol_naming_the_fault() {
    let url = e2e_tests::fake::serve(|path, _| async move {
        match path.as_str() {
            "/v2" => (
                200,
                json!({"name": "fake", "version": "1", "extensions": ["binary_tensor_data"]}),
            ),
            "/v2/health/live" => (200, json!({"live": true})),
            "/v2/health/ready" | "/v2/models/broken/ready" => (200, json!({"ready": true})),
            "/v2/models/broken" => (
                200,
                json!({"name": "broken", "versions": ["1"], "platform": "onnx",
                    "inputs": [{"name": "x", "datatype": "FLOAT32", "shape": [-1, 4]}],
                    "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1]}]}),
            ),
            "/v2/models/broken/infer" => (400, json!({"error": "bad request"})),
            // Every other path: 200, as if any model existed.
            _ => (200, json!({})),
        }
    })
    .await;
    let (ok, rules) = check_oip(&url, &["--model", "broken"]);
    assert!(!ok, "{rules:#?}");
    let (status, problems) = &rules["OIP.broken.metadata"];
    assert_eq!(status, "FAIL");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("inputs[0] (x).datatype") && p.contains("FLOAT32")),
        "{problems:?}"
    );
    assert_eq!(rules["OIP.unknown_model"].0, "FAIL", "{rules:#?}");
    assert!(!rules.contains_key("OIP.broken.infer.json"), "{rules:#?}");
    for passed in [
        "OIP.live",
        "OIP.ready",
        "OIP.server_metadata",
        "OIP.broken.ready",
    ] {
        assert_eq!(rules[passed].0, "PASS", "{passed}: {rules:#?}");
    }
}

/// Under real `spin up`: Spin sends `/v2/models/<name>/...`'s route in
/// `spin-component-route` as the SDK expects, so a model's metadata and an inference reach it
/// by name on the app's URL; and `check --oip` passes every model at its base URL (Spin's app
/// has no server-level `/v2/health`: a client uses the model's base URL).
#[tokio::test(flavor = "multi_thread")]
async fn under_spin_models_answer_by_name_and_check_oip_passes_at_each_base_url() {
    let Some(app) = e2e_tests::spin::SpinApp::up("OIP under Spin", "oip-t0ken") else {
        return;
    };
    let c = Client::new();
    for name in ["molprop", "iris"] {
        let meta = c.get(&app.url(&format!("/v2/models/{name}"))).await;
        assert_eq!(meta.status, 200, "{}\n{}", meta.text(), app.log());
        assert_eq!(meta.value()["name"], name, "{}", meta.text());
    }
    let body = json!({"id": "a", "inputs": [{"name": "features", "shape": [1, 4],
        "datatype": "FP32", "data": [5.1, 3.5, 1.4, 0.2]}]});
    let r = c
        .post_json(&app.url("/v2/models/iris/infer"), &body, None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        (r.value()["model_name"].clone(), r.value()["id"].clone()),
        (json!("iris"), json!("a"))
    );
    for name in e2e_tests::stack::SHIPPED_MODELS {
        assert_passes(&app.url(&format!("/models/{name}")), &[], &[name]);
    }
}

/// A server whose answers disagree with its own metadata (an FP64 output declared FP32) and
/// whose binary answer differs from its JSON one: both inference rules fail, saying so.
#[tokio::test(flavor = "multi_thread")]
async fn check_oip_fails_answers_that_disagree_with_the_metadata_or_with_json() {
    let url = e2e_tests::fake::serve(|path, body| async move {
        match path.as_str() {
            "/v2" => (
                200,
                json!({"name": "fake", "version": "1", "extensions": []}),
            ),
            "/v2/health/live" | "/v2/health/ready" | "/v2/models/m/ready" => {
                (200, json!({"live": true, "ready": true}))
            }
            "/v2/models/m" => (
                200,
                json!({"name": "m", "platform": "x",
                    "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 2]}],
                    "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1]}]}),
            ),
            "/v2/models/m/infer" if body["inputs"].is_string() => {
                (400, json!({"error": "inputs must be a list"}))
            }
            // A JSON request (the body parses) gets FP64; a binary one (it does not) a
            // different value, in JSON.
            "/v2/models/m/infer" => {
                let (datatype, value) = if body.is_null() {
                    ("FP32", 2.0)
                } else {
                    ("FP64", 1.0)
                };
                (
                    200,
                    json!({"model_name": "m", "id": "oip-check-1", "outputs": [
                        {"name": "y", "datatype": datatype, "shape": [1], "data": [value]}]}),
                )
            }
            _ => (404, json!({"error": "unknown"})),
        }
    })
    .await;
    let (ok, rules) = check_oip(&url, &["--model", "m"]);
    assert!(!ok, "{rules:#?}");
    let (status, problems) = &rules["OIP.m.infer.json"];
    assert_eq!(status, "FAIL");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("datatype FP64") && p.contains("FP32")),
        "{problems:?}"
    );
    let (status, problems) = &rules["OIP.m.infer.binary"];
    assert_eq!(status, "FAIL");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("element 0") && p.contains("2.0")),
        "{problems:?}"
    );
    for passed in ["OIP.m.metadata", "OIP.m.bad_request", "OIP.unknown_model"] {
        assert_eq!(rules[passed].0, "PASS", "{passed}: {rules:#?}");
    }
}
