//! `runtime-host check`: passes on our model; fails, naming the right rules, on a deliberately
//! broken deployment.

use e2e_tests::{HostBuilder, component, host_binary, temp_dir};
use http_body_util::Full;
use hyper::body::Bytes;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

fn check(url: &str) -> (bool, HashMap<String, String>) {
    let out = std::process::Command::new(host_binary())
        .args(["check", url, "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let statuses = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["rule"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (out.status.success(), statuses)
}

#[tokio::test(flavor = "multi_thread")]
async fn passes_on_molprop_served_by_the_host() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("molprop"), dir.path()).start();
    let (ok, statuses) = check(&h.base_url());
    assert!(ok, "{statuses:?}");
    assert!(statuses.len() >= 15);
    assert!(statuses.values().all(|s| s == "PASS"), "{statuses:?}");
}

/// A deployment that gets several things wrong.
async fn broken_deployment() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    |req: hyper::Request<hyper::body::Incoming>| async move {
                        let (status, body) = match req.uri().path() {
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
                                json!({"name": "b", "description": "d", "license": "MIT", "citation": "c", "maintainer": "m"}),
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
                            // /metrics is missing altogether.
                            _ => (
                                404,
                                json!({"success": false, "error": "not found", "error_code": "not_found"}),
                            ),
                        };
                        let resp = hyper::Response::builder()
                            .status(status)
                            .body(Full::new(Bytes::from(body.to_string())))
                            .unwrap();
                        Ok::<_, std::convert::Infallible>(resp)
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread")]
async fn fails_a_broken_deployment_naming_the_rules() {
    let url = broken_deployment().await;
    let (ok, statuses) = tokio::task::spawn_blocking(move || check(&url))
        .await
        .unwrap();
    assert!(!ok, "exit status must be non-zero");
    for rule in [
        "B.health",
        "B.health.latency",
        "B.metrics",
        "B.predict.malformed_json",
        "B.predict.missing_data",
    ] {
        assert_eq!(
            statuses.get(rule).map(String::as_str),
            Some("FAIL"),
            "{rule}: {statuses:?}"
        );
    }
    for rule in [
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
