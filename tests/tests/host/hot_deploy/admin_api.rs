//! The admin API (`/admin/deployments` on the app port): deploys, reloads and undeploys a
//! model with its token, and refuses without it.

use super::{put, until};
use e2e_tests::{Client, Stack, component, temp_dir};
use edge_api::registry::RegistryListing;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn the_admin_api_deploys_reloads_and_undeploys_with_its_token() {
    let models = temp_dir();
    put(
        &models.path().join("molprop.wasm"),
        &std::fs::read(component("molprop")).unwrap(),
    );
    let dir = models.path().to_str().unwrap();
    let stack = Stack::up(&["--models", dir, "--watch-interval", "300ms"], 6);
    let token = std::fs::read_to_string(stack.data_dir().join("admin_token")).unwrap();
    let auth = format!("Bearer {}", token.trim());
    let c = Client::new();
    let url = stack.app("/admin/deployments");
    let send = |method: hyper::Method,
                url: String,
                body: Option<serde_json::Value>,
                auth: Option<String>| {
        let c = c.clone();
        async move {
            let mut headers = vec![("content-type", "application/json".to_owned())];
            if let Some(a) = auth {
                headers.push(("authorization", a));
            }
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            c.send(
                method,
                &url,
                body.map(|b| b.to_string().into_bytes()),
                &headers,
            )
            .await
        }
    };
    let admin = |method, url, body| send(method, url, body, Some(auth.clone()));

    // The token is required, and only the right one works.
    let none = send(hyper::Method::GET, url.clone(), None, None).await;
    none.assert_error(401, "unauthorized");
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    send(
        hyper::Method::GET,
        url.clone(),
        None,
        Some("Bearer nope".into()),
    )
    .await
    .assert_error(403, "forbidden");

    // The list: molprop, serving from the watched directory, with its version and URL.
    let list = admin(hyper::Method::GET, url.clone(), None).await;
    assert_eq!(list.status, 200, "{}", list.text());
    let molprop = &list.value()["deployments"][0];
    assert_eq!(molprop["name"], "molprop");
    assert_eq!(molprop["status"], "serving");
    assert_eq!(molprop["origin"], "directory");
    assert!(
        molprop["version"].as_str().unwrap().starts_with("sha256:"),
        "{molprop}"
    );

    // Deploy from a path under a name of our choosing; it serves at once.
    let echo = component("echo-model");
    let deployed = admin(
        hyper::Method::POST,
        url.clone(),
        Some(json!({"path": echo, "name": "echo-1"})),
    )
    .await;
    assert_eq!(deployed.status, 201, "{}", deployed.text());
    assert_eq!(deployed.value()["deployment"]["status"], "serving");
    assert_eq!(c.get(&stack.app("/models/echo-1/health")).await.status, 200);
    // The directory's scans leave it alone (it is not in the directory).
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(c.get(&stack.app("/models/echo-1/health")).await.status, 200);
    // Refusals: a taken name, a relative path, a bad name, not a model, bad JSON, unknown keys.
    for (body, status, code) in [
        (
            json!({"path": echo, "name": "echo-1"}),
            409,
            "already_exists",
        ),
        (json!({"path": "echo.wasm"}), 400, "invalid_field"),
        (json!({"path": echo, "name": "../x"}), 400, "invalid_field"),
        (json!({"path": "/etc"}), 400, "invalid_field"),
        (json!({"path": echo, "extra": 1}), 400, "invalid_field"),
    ] {
        admin(hyper::Method::POST, url.clone(), Some(body.clone()))
            .await
            .assert_error(status, code);
    }
    let raw = c
        .send(
            hyper::Method::POST,
            &url,
            Some(b"{\"path\":".to_vec()),
            &[("authorization", auth.as_str())],
        )
        .await;
    raw.assert_error(400, "invalid_json");

    // Reload under load: no request fails.
    // The load is under way before the first reload and goes on past 20 requests (a fast
    // reload on a busy machine once saw exactly 20), so the reloads happen under it.
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let load = {
        let (stop, sent) = (stop.clone(), sent.clone());
        let url = stack.app("/models/molprop/predict");
        tokio::spawn(async move {
            let c = Client::new();
            let body = json!({"input_type": "text", "data": {"text": "c1ccccc1O"}});
            let mut statuses = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                statuses.push(c.post_json(&url, &body, None).await.status);
                sent.fetch_add(1, Ordering::Relaxed);
            }
            statuses
        })
    };
    let sent_at_least = |n: usize| {
        let sent = sent.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(30);
            while sent.load(Ordering::Relaxed) < n && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    sent_at_least(5).await;
    for _ in 0..2 {
        let r = admin(hyper::Method::POST, format!("{url}/molprop/reload"), None).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.value()["deployment"]["status"], "serving");
    }
    sent_at_least(21).await;
    stop.store(true, Ordering::Relaxed);
    let statuses = load.await.unwrap();
    assert!(
        statuses.len() > 20 && statuses.iter().all(|s| *s == 200),
        "{statuses:?}"
    );

    // Undeploy: no longer routed, unregistered; a second time is 404.
    let r = admin(hyper::Method::DELETE, format!("{url}/echo-1"), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(c.get(&stack.app("/models/echo-1/health")).await.status, 404);
    until("echo-1 unregistered", || {
        let (c, reg) = (c.clone(), stack.registry("/registry"));
        async move {
            let l: RegistryListing = c.get(&reg).await.json();
            !l.registrations
                .iter()
                .any(|r| r.app_name == "runtime-host/echo-1")
        }
    })
    .await;
    admin(hyper::Method::DELETE, format!("{url}/echo-1"), None)
        .await
        .assert_error(404, "not_found");
    admin(hyper::Method::PUT, url.clone(), None)
        .await
        .assert_error(405, "method_not_allowed");
}
