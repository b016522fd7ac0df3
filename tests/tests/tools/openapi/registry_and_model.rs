//! The registry's answers against registry.json, and a molprop deployment's against
//! model.json, with the registration between them.

use super::recorder::Recorder;
use e2e_tests::{HostBuilder, component, temp_dir};
use hyper::Method;
use serde_json::{Value, json};

/// Every GET of interface B.
pub const MODEL_GETS: [&str; 8] = [
    "/health",
    "/capabilities",
    "/acceptable_ranges",
    "/info",
    "/citation",
    "/test_examples",
    "/metrics",
    "/openapi.json",
];

#[tokio::test(flavor = "multi_thread")]
async fn registry_and_model_answers_validate_against_their_documents() {
    let (rdir, mdir, sdir) = (temp_dir(), temp_dir(), temp_dir());
    let first = e2e_tests::port_block(3);
    let reg = HostBuilder::new(component("registry"), rdir.path())
        .variable("registry_ports", &format!("{first}-{}", first + 2))
        .variable("registry_maintenance_token", "maint")
        .start();
    let mut r = Recorder::new("registry", reg.base_url());

    // A model deployment registers with it and is checked against model.json.
    let mut model = HostBuilder::model(component("molprop"), mdir.path(), &reg.base_url())
        .arg("--allow-shutdown")
        .start();
    let mut m = Recorder::new("model", model.base_url());
    for path in MODEL_GETS {
        assert_eq!(m.get(path).await.status, 200, "{path}");
    }
    let predict = |text: &str, property: &str| json!({"input_type": "text", "data": {"text": text, "property": property}});
    assert_eq!(
        m.json(
            Method::POST,
            "/predict",
            predict("CC(=O)Oc1ccccc1C(=O)O", "all"),
            None
        )
        .await
        .status,
        200
    );
    let failed = m
        .json(Method::POST, "/predict", predict("C1CC", "logp"), None)
        .await;
    assert_eq!(
        (failed.status, failed.value()["success"].clone()),
        (200, json!(false))
    );
    assert_eq!(
        m.json(Method::POST, "/predict", predict("CCO", "colour"), None)
            .await
            .status,
        400
    );
    assert_eq!(
        m.json(Method::POST, "/predict", json!({"data": {}}), None)
            .await
            .status,
        400
    );
    assert_eq!(
        m.json(
            Method::POST,
            "/predict",
            json!({"input_type": "audio", "data": {}}),
            None
        )
        .await
        .status,
        400
    );
    assert_eq!(
        m.call(Method::POST, "/predict", Some(b"{".to_vec()), None)
            .await
            .status,
        400
    );
    assert_eq!(
        m.call(Method::GET, "/predict", None, None).await.status,
        405
    );
    assert_eq!(
        m.call(Method::POST, "/predict", Some(vec![b' '; 2 << 20]), None)
            .await
            .status,
        413
    );
    assert_eq!(m.get("/metrics").await.status, 200);

    // A component-served model refuses /shutdown with the error body.
    let served = HostBuilder::new(component("molprop"), sdir.path()).start();
    let mut s = Recorder::new("model", served.base_url());
    assert_eq!(
        s.call(Method::POST, "/shutdown", None, None).await.status,
        403
    );
    // /evidence: a model without any (404), and the ONNX classifier's confusion matrix.
    assert_eq!(s.get("/evidence").await.status, 404);
    let idir = temp_dir();
    let iris = HostBuilder::new(component("onnx-model"), idir.path())
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir("iris"), "/model")
        .start();
    let mut i = Recorder::new("model", iris.base_url());
    assert_eq!(i.get("/evidence").await.status, 200);
    m.absorb(s);
    m.absorb(i);

    // The registry: registrations until the range is full, heartbeats, the listing, the
    // maintenance route, unregistration.
    let request = |model: &str, preferred: Value| {
        json!({"app_name": "openapi", "app_version": "1.2.0", "model_name": model,
        "process_id": std::process::id(), "preferred_port": preferred, "reason": "contract test", "metadata": {}})
    };
    let a = r
        .json(Method::POST, "/register", request("a", Value::Null), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let b = r
        .json(
            Method::POST,
            "/register",
            request("b", json!(first + 2)),
            None,
        )
        .await;
    assert_eq!(b.status, 200, "{}", b.text());
    assert_eq!(
        r.json(Method::POST, "/register", request("c", Value::Null), None)
            .await
            .status,
        503
    );
    assert_eq!(
        r.json(Method::POST, "/register", json!({"app_name": "x"}), None)
            .await
            .status,
        400
    );
    assert_eq!(
        r.call(Method::POST, "/register", Some(b"[".to_vec()), None)
            .await
            .status,
        400
    );
    let (port, id) = (
        a.value()["assigned_port"].clone(),
        a.value()["registration_id"].clone(),
    );
    // Served without a host that knows the caller: renewal needs the id.
    assert_eq!(
        r.call(Method::POST, &format!("/heartbeat/{port}"), None, None)
            .await
            .status,
        403
    );
    let own = json!({"registration_id": id});
    assert_eq!(
        r.json(Method::POST, &format!("/heartbeat/{port}"), own, None)
            .await
            .status,
        200
    );
    // A retry from a caller not known to be the registering process: 409, no id.
    assert_eq!(
        r.json(Method::POST, "/register", request("a", Value::Null), None)
            .await
            .status,
        409
    );
    let wrong = json!({"registration_id": "00000000-0000-4000-8000-000000000000"});
    assert_eq!(
        r.json(Method::POST, &format!("/heartbeat/{port}"), wrong, None)
            .await
            .status,
        403
    );
    assert_eq!(
        r.call(Method::POST, "/heartbeat/1", None, None)
            .await
            .status,
        404
    );
    assert_eq!(
        r.call(Method::POST, "/heartbeat/port", None, None)
            .await
            .status,
        400
    );
    assert_eq!(r.get("/registry").await.status, 200);
    let report = json!({"alive": [{"port": port, "process_id": std::process::id()}], "dead": []});
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            report.clone(),
            Some("maint")
        )
        .await
        .status,
        200
    );
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            report.clone(),
            None
        )
        .await
        .status,
        401,
        "no token: 401, as the document's security scheme says"
    );
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            report,
            Some("guess")
        )
        .await
        .status,
        403
    );
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            json!({"zombies": []}),
            Some("maint")
        )
        .await
        .status,
        400
    );
    assert_eq!(
        r.get("/registry").await.status,
        200,
        "with process_alive set"
    );
    let unregister = |rid: &Value| {
        format!(
            "/unregister/{port}?registration_id={}",
            rid.as_str().unwrap()
        )
    };
    assert_eq!(
        r.call(Method::DELETE, &unregister(&json!("wrong")), None, None)
            .await
            .status,
        403
    );
    assert_eq!(
        r.call(Method::DELETE, &unregister(&id), None, None)
            .await
            .status,
        200
    );
    assert_eq!(
        r.call(Method::DELETE, &unregister(&id), None, None)
            .await
            .status,
        404
    );
    assert_eq!(
        r.call(Method::DELETE, &format!("/unregister/{port}"), None, None)
            .await
            .status,
        400
    );
    assert_eq!(
        r.call(Method::GET, "/register", None, None).await.status,
        405
    );

    // Last: the deployment that allows shutdown answers 200 and stops.
    assert_eq!(
        m.call(Method::POST, "/shutdown", None, None).await.status,
        200
    );
    assert!(model.wait(std::time::Duration::from_secs(10)).success());
    m.finish();
    r.finish();
}
