//! `runtime-host check`: passes on our model, registry and chat; fails, naming the right
//! rules, on deliberately broken deployments.

use e2e_tests::chat::{self, TOKEN};
use e2e_tests::{HostBuilder, component, host_binary, temp_dir};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

fn check(url: &str) -> Checked {
    check_with(url, &[])
}

/// Exit ok, rule -> status, rule -> problems.
type Checked = (bool, HashMap<String, String>, HashMap<String, Vec<String>>);

/// Runs `runtime-host check --json` and reads its report.
fn check_with(url: &str, extra: &[&str]) -> Checked {
    let out = std::process::Command::new(host_binary())
        .args(["check", url, "--json"])
        .args(extra)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let results = report["results"].as_array().unwrap();
    let rule = |r: &Value| r["rule"].as_str().unwrap().to_owned();
    let statuses = results
        .iter()
        .map(|r| (rule(r), r["status"].as_str().unwrap().to_owned()))
        .collect();
    let problems = results
        .iter()
        .map(|r| {
            let texts = r["problems"].as_array().into_iter().flatten();
            (
                rule(r),
                texts.map(|p| p.as_str().unwrap().to_owned()).collect(),
            )
        })
        .collect();
    (out.status.success(), statuses, problems)
}

#[tokio::test(flavor = "multi_thread")]
async fn passes_on_molprop_registry_and_chat_served_by_the_host() {
    let (mdir, rdir, cdir) = (temp_dir(), temp_dir(), temp_dir());
    let m = HostBuilder::new(component("molprop"), mdir.path()).start();
    let r = HostBuilder::registry(rdir.path()).start();
    let c = chat::host(cdir.path());
    let client = e2e_tests::Client::new();
    let dialog =
        json!({"chatName": "conformance", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(
        client
            .post_json(&c.url("/api/chats"), &dialog, Some(TOKEN))
            .await
            .status,
        201
    );
    let (mu, ru, cu) = (m.base_url(), r.base_url(), c.base_url());
    let (ok, statuses, _) =
        tokio::task::spawn_blocking(move || check_with(&mu, &["--registry", &ru, "--chat", &cu]))
            .await
            .unwrap();
    assert!(ok, "{statuses:?}");
    assert!(statuses.len() >= 26, "{statuses:?}");
    assert!(statuses.values().all(|s| s == "PASS"), "{statuses:?}");
    assert!(
        statuses.contains_key("B.openapi"),
        "molprop's own document was checked"
    );
    assert!(
        statuses.contains_key("B.predict.batch"),
        "molprop documents batches, so they were checked"
    );
    let left: edge_api::registry::RegistryListing = client.get(&r.url("/registry")).await.json();
    assert_eq!(
        left.count, 0,
        "the checker removes every registration it made"
    );
}

/// `runtime-host model --allow-shutdown` honours `/shutdown`: the checker's last rule
/// passes with the 200 answer and the deployment stops.
#[tokio::test(flavor = "multi_thread")]
async fn shutdown_is_probed_last_and_a_deployment_that_honours_it_stops() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let first = e2e_tests::port_block(2);
    let reg = HostBuilder::registry(rdir.path())
        .arg("--ports")
        .arg(format!("{first}-{}", first + 1))
        .start();
    let mut m = HostBuilder::model(component("molprop"), mdir.path(), &reg.base_url())
        .arg("--allow-shutdown")
        .start();
    let mu = m.base_url();
    let (ok, statuses, _) = tokio::task::spawn_blocking(move || check(&mu))
        .await
        .unwrap();
    assert!(ok, "{statuses:?}");
    assert_eq!(statuses["B.shutdown"], "PASS");
    assert!(m.wait(Duration::from_secs(10)).success(), "it stopped");
    // --keep-running leaves the rule out.
    let mdir2 = temp_dir();
    let m2 = HostBuilder::model(component("molprop"), mdir2.path(), &reg.base_url())
        .arg("--allow-shutdown")
        .start();
    let mu = m2.base_url();
    let (ok, statuses, _) =
        tokio::task::spawn_blocking(move || check_with(&mu, &["--keep-running"]))
            .await
            .unwrap();
    assert!(ok && !statuses.contains_key("B.shutdown"), "{statuses:?}");
    let health = e2e_tests::Client::new().get(&m2.url("/health")).await;
    assert_eq!(health.status, 200, "still serving");
}

/// A deployment that gets several things wrong.
async fn broken_deployment() -> String {
    // Its own document says it takes images only, which its examples contradict.
    let mut own_doc = e2e_tests::contract::load("model").doc;
    own_doc["components"]["schemas"]["PredictionRequest"]["properties"]["input_type"]["enum"] =
        json!(["image"]);
    let own_doc = std::sync::Arc::new(own_doc);
    e2e_tests::fake::serve(move |path, _| {
        let own_doc = own_doc.clone();
        async move {
            match path.as_str() {
                "/openapi.json" => (200, (*own_doc).clone()),
                "/health" => {
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    (
                        200,
                        json!({"status": "ok", "model": "broken", "version": 1.2}),
                    )
                }
                "/capabilities" => (
                    200,
                    json!({"model": "broken", "capabilities": [{"name": "c", "input_types": ["text"], "output_schema": {"prediction": "float"}, "description": "d"}]}),
                ),
                "/acceptable_ranges" => (
                    200,
                    json!({"model": "b", "version": "1.2.0", "description": "d", "property_ranges": {}, "chemical_scope": {"supported_features": [], "limitations": []}, "usage_recommendations": []}),
                ),
                "/info" => (
                    200,
                    // A field the specification does not list: allowed.
                    json!({"name": "b", "description": "d", "license": "MIT", "citation": "c", "maintainer": "m", "homepage": "https://example.org"}),
                ),
                "/citation" => (
                    200,
                    json!({"paper_citation": "p", "software_bibtex": "@misc{b}"}),
                ),
                "/test_examples" => (
                    200,
                    json!({"examples": [{"name": "e", "text": "x", "description": "d", "category": "c"}],
                        "usage_instructions": {"endpoint": "/predict", "method": "POST", "body_format": {"input_type": "text", "data": {"text": "<input>"}}},
                        "expected_output": {}, "notes": []}),
                ),
                // Accepts anything, malformed JSON included.
                "/predict" => (
                    200,
                    json!({"success": true, "model_name": "b", "results": {"prediction": 1.0}, "computation_time_ms": 0.1, "error_message": null}),
                ),
                // /metrics is missing altogether. The error code is its
                // own (the specification lists none): allowed.
                _ => (
                    404,
                    json!({"success": false, "error": "not found", "error_code": "E_NO_ROUTE"}),
                ),
            }
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn fails_a_broken_deployment_naming_the_rules() {
    let url = broken_deployment().await;
    let (ok, statuses, problems) = tokio::task::spawn_blocking(move || check(&url))
        .await
        .unwrap();
    assert!(!ok, "exit status must be non-zero");
    for rule in [
        "B.health",
        "B.health.latency",
        "B.metrics",
        "B.predict.malformed_json",
        "B.predict.missing_data",
        "B.shutdown",
    ] {
        assert_eq!(
            statuses.get(rule).map(String::as_str),
            Some("FAIL"),
            "{rule}: {statuses:?}"
        );
    }
    // Warned, not failed: the specification does not ask for /openapi.json.
    assert_eq!(
        statuses.get("B.openapi").map(String::as_str),
        Some("WARN"),
        "{statuses:?}"
    );
    // The failure names the field and what it expected.
    let health = problems["B.health"].join("; ");
    assert!(
        health.contains("/version") && health.contains("string"),
        "{health}"
    );
    for rule in [
        "B.unknown_route",
        "B.capabilities",
        "B.info",
        "B.citation",
        "B.test_examples",
        "B.predict.examples",
    ] {
        assert_eq!(
            statuses.get(rule).map(String::as_str),
            Some("PASS"),
            "{rule}: {statuses:?}"
        );
    }
}

/// A registry that hands out ports but lists registration ids: C.registry must fail.
#[tokio::test(flavor = "multi_thread")]
async fn fails_a_registry_that_leaks_registration_ids() {
    let (mdir, rdir) = (temp_dir(), temp_dir());
    let m = HostBuilder::new(component("molprop"), mdir.path()).start();
    let _real = HostBuilder::registry(rdir.path()).start();
    let url = e2e_tests::fake::serve(|path, _| async move {
        let id = "11111111-2222-4333-8444-555555555555";
        let body = match path.as_str() {
            "/register" => {
                json!({"success": true, "assigned_port": 5100, "registration_id": id, "message": "ok", "expires_at": "2030-01-01T00:00:00"})
            }
            "/registry" => {
                json!({"success": true, "count": 1, "registrations": [{"port": 5100, "registration_id": id}]})
            }
            _ => json!({"success": true, "message": "ok", "freed_port": 5100}),
        };
        (200, body)
    })
    .await;
    let mu = m.base_url();
    let (ok, statuses, _) =
        tokio::task::spawn_blocking(move || check_with(&mu, &["--registry", &url]))
            .await
            .unwrap();
    assert!(!ok);
    assert_eq!(
        statuses.get("C.registry").map(String::as_str),
        Some("FAIL"),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.get("C.unregister.wrong_id").map(String::as_str),
        Some("FAIL"),
        "{statuses:?}"
    );
}
