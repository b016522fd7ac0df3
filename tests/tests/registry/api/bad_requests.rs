//! Bad requests get the right status and error body; an exhausted range is 503.

use super::{listing, register, registration};
use e2e_tests::{Client, HostBuilder, temp_dir};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_the_right_status_and_error_body() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    let c = Client::new();
    let url = h.url("/register");
    c.post_raw(&url, b"{not json".to_vec(), None)
        .await
        .assert_error(400, "invalid_json");
    c.post_raw(&url, b"".to_vec(), None)
        .await
        .assert_error(400, "invalid_json");
    let mut v = registration("x", None);
    v.as_object_mut().unwrap().remove("process_id");
    let e = c
        .post_json(&url, &v, None)
        .await
        .assert_error(400, "missing_field");
    assert!(e.error.contains("process_id"));
    let mut v = registration("x", None);
    v["process_id"] = json!("1234");
    let e = c
        .post_json(&url, &v, None)
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("process_id"));
    let mut v = registration("x", None);
    v["metadata"] = json!({"blob": "x".repeat(100_000)});
    let e = c
        .post_json(&url, &v, None)
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("metadata"));
    let mut v = registration("x", None);
    v["metadata"] = json!({"blob": "x".repeat(2_000_000)});
    c.post_json(&url, &v, None)
        .await
        .assert_error(413, "payload_too_large");
    c.get(&h.url("/nowhere"))
        .await
        .assert_error(404, "not_found");
    c.get(&url).await.assert_error(405, "method_not_allowed");
    c.post_raw(&h.url("/heartbeat/70000"), vec![], None)
        .await
        .assert_error(400, "invalid_field");
    c.post_raw(&h.url("/heartbeat"), vec![], None)
        .await
        .assert_error(400, "missing_field");
    // One spelling per port: no sign, no leading zero.
    for odd in ["+5100", "05100", "5100%20"] {
        c.post_raw(&h.url(&format!("/heartbeat/{odd}")), vec![], None)
            .await
            .assert_error(400, "invalid_field");
    }
    // Request bodies follow the rules of every service: one object, known fields only, no
    // key twice, at most 128 levels deep.
    let good = registration("strict", None);
    let as_array = json!([
        good["app_name"],
        good["app_version"],
        good["model_name"],
        good["process_id"],
        good["preferred_port"],
        good["reason"],
        good["metadata"]
    ]);
    c.post_json(&h.url("/register"), &as_array, None)
        .await
        .assert_error(400, "invalid_field");
    let mut extra = good.clone();
    extra["colour"] = json!("blue");
    let e = c
        .post_json(&h.url("/register"), &extra, None)
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("colour"), "{}", e.error);
    let twice = good
        .to_string()
        .replacen('{', r#"{"model_name": "shadow", "#, 1);
    c.post_raw(&h.url("/register"), twice.into_bytes(), None)
        .await
        .assert_error(400, "invalid_field");
    let deep = format!(
        r#"{{"registration_id": {}1{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    c.post_raw(&h.url("/heartbeat/5100"), deep.clone().into_bytes(), None)
        .await
        .assert_error(400, "invalid_json");
    let deep_objects = format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200));
    c.post_raw(&h.url("/heartbeat/5100"), deep_objects.into_bytes(), None)
        .await
        .assert_error(400, "invalid_json");
    // HEAD is GET without the body.
    let head = c
        .send(hyper::Method::HEAD, &h.url("/registry"), None, &[])
        .await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    // The maintenance route is not for outside callers.
    c.post_json(
        &h.url("/registry/maintenance/processes"),
        &json!({"dead": []}),
        Some("guess"),
    )
    .await
    .assert_error(403, "forbidden");
    assert_eq!(listing(&c, &h).await.count, 0, "nothing was registered");
}

#[tokio::test(flavor = "multi_thread")]
async fn exhausted_range_is_503_no_ports_available() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path())
        .arg("--ports")
        .arg("6000-6001")
        .start();
    let c = Client::new();
    assert_eq!(
        register(&c, &h, &registration("a", None))
            .await
            .assigned_port,
        6000
    );
    assert_eq!(
        register(&c, &h, &registration("b", None))
            .await
            .assigned_port,
        6001
    );
    c.post_json(&h.url("/register"), &registration("c", None), None)
        .await
        .assert_error(503, "no_ports_available");
}
