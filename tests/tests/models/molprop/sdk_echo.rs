//! The model SDK with a model other than molprop (the test-only `echo-model`): readiness
//! waits for the model's own self-test, and a fault is a 500 the metrics still count.

use e2e_tests::{Client, HostBuilder, component, temp_dir};
use edge_api::model::Metrics;
use serde_json::json;

/// The SDK with another model (test-only `echo-model`): a model that fails its own test
/// examples is never healthy, and a fault is a 500 that still counts in the metrics.
#[tokio::test(flavor = "multi_thread")]
async fn sdk_health_waits_for_the_self_test_and_faults_are_500() {
    let c = Client::new();
    let broken_dir = temp_dir();
    let broken = HostBuilder::new(component("echo-model"), broken_dir.path())
        .variable("echo_broken", "true")
        .start();
    let e = c
        .get(&broken.url("/health"))
        .await
        .assert_error(503, "not_ready");
    assert!(e.error.contains("example `one`"), "{}", e.error);
    c.get(&broken.url("/health"))
        .await
        .assert_error(503, "not_ready");

    let dir = temp_dir();
    let h = HostBuilder::new(component("echo-model"), dir.path()).start();
    assert_eq!(c.get(&h.url("/health")).await.value()["status"], "ok");
    let url = h.url("/predict");
    let r = c
        .post_json(
            &url,
            &json!({"input_type": "tabular", "data": {"value": 7}}),
            None,
        )
        .await;
    assert_eq!(r.value()["results"]["echo"]["value"], 7);
    c.post_json(&url, &json!({"input_type": "text", "data": {}}), None)
        .await
        .assert_error(400, "unsupported_input_type");
    let r = c
        .post_json(
            &url,
            &json!({"input_type": "tabular", "data": {"outcome": "fail"}}),
            None,
        )
        .await;
    assert_eq!(
        (r.status, r.value()["success"].clone()),
        (200, json!(false))
    );
    c.post_json(
        &url,
        &json!({"input_type": "tabular", "data": {"outcome": "fault"}}),
        None,
    )
    .await
    .assert_error(500, "internal_error");
    let m: Metrics = c.get(&h.url("/metrics")).await.json();
    assert_eq!(
        m.requests_served, 3,
        "the 400 did not reach the model; the rest did"
    );
    assert_eq!(m.last_error.as_deref(), Some("asked to fault"));
}
