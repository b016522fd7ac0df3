//! Interface C over HTTP: port assignment under concurrency, leases, unregistration,
//! persistence, and the native host's process monitoring.

use e2e_tests::{Client, Host, HostBuilder, temp_dir};
use edge_api::registry::{RegistrationResponse, RegistryListing};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;

fn registration(model: &str, preferred: Option<u16>) -> Value {
    json!({
        "app_name": "e2e", "app_version": "1.2.0", "model_name": model,
        "process_id": std::process::id(), "preferred_port": preferred,
        "reason": "test", "metadata": {"model_type": "test", "capabilities": ["none"]}
    })
}

async fn register(c: &Client, h: &Host, body: &Value) -> RegistrationResponse {
    let r = c.post_json(&h.url("/register"), body, None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

async fn listing(c: &Client, h: &Host) -> RegistryListing {
    let r = c.get(&h.url("/registry")).await;
    assert_eq!(r.status, 200);
    assert!(
        !r.text().contains("registration_id"),
        "ids never leak: {}",
        r.text()
    );
    r.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_concurrent_registrations_get_distinct_ports_from_5100() {
    let dir = temp_dir();
    // One test process holds all 500.
    let h = HostBuilder::registry(dir.path())
        .arg("--max-per-process")
        .arg("0")
        .start();
    let c = Client::new();
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (c, url, next) = (c.clone(), h.url("/register"), next.clone());
            tokio::spawn(async move {
                let mut ports = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= 500 {
                        return ports;
                    }
                    let r = c
                        .post_json(&url, &registration(&format!("m{i}"), None), None)
                        .await;
                    assert_eq!(r.status, 200, "{}", r.text());
                    ports.push(r.json::<RegistrationResponse>().assigned_port);
                }
            })
        })
        .collect();
    let mut ports = Vec::new();
    for w in workers {
        ports.extend(w.await.unwrap());
    }
    let distinct: HashSet<u16> = ports.iter().copied().collect();
    assert_eq!(ports.len(), 500);
    assert_eq!(
        distinct,
        (5100..5600).collect(),
        "exactly 5100..=5599, none twice"
    );
    let list = listing(&c, &h).await;
    assert_eq!(list.count, 500, "none lost");
    assert_eq!(list.registrations.len(), 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_for_one_preferred_port_only_one_wins() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    let c = Client::new();
    let racers: Vec<_> = (0..16)
        .map(|i| {
            let (c, url) = (c.clone(), h.url("/register"));
            tokio::spawn(async move {
                c.post_json(&url, &registration(&format!("r{i}"), Some(5500)), None)
                    .await
                    .json::<RegistrationResponse>()
            })
        })
        .collect();
    let mut winners = 0;
    let mut ports = HashSet::new();
    for r in racers {
        let r = r.await.unwrap();
        assert!(ports.insert(r.assigned_port));
        if r.assigned_port == 5500 {
            winners += 1;
        } else {
            assert!(r.message.contains("in use"), "{}", r.message);
        }
    }
    assert_eq!(winners, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn preferred_port_free_taken_out_of_range_and_reserved() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    let c = Client::new();
    let free = register(&c, &h, &registration("a", Some(5123))).await;
    assert_eq!(free.assigned_port, 5123);
    assert_eq!(free.message, "assigned preferred port 5123");
    let taken = register(&c, &h, &registration("b", Some(5123))).await;
    assert_eq!(taken.assigned_port, 5100);
    assert!(
        taken.message.contains("5123 is in use"),
        "{}",
        taken.message
    );
    let outside = register(&c, &h, &registration("c", Some(8080))).await;
    assert_eq!(outside.assigned_port, 5101);
    assert!(
        outside
            .message
            .contains("outside the assignable range 5100-5999"),
        "{}",
        outside.message
    );
    let reserved = register(&c, &h, &registration("d", Some(5000))).await;
    assert_eq!(reserved.assigned_port, 5102);
    assert!(
        reserved.message.contains("reserved"),
        "{}",
        reserved.message
    );
    // The response carries everything the spec lists.
    assert!(uuid_like(&free.registration_id));
    assert!(
        edge_api::time::parse_iso8601_no_zone(&free.expires_at).is_some(),
        "{}",
        free.expires_at
    );
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test(flavor = "multi_thread")]
async fn unregister_checks_the_id_and_frees_the_port() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    let c = Client::new();
    let reg = register(&c, &h, &registration("u", None)).await;
    let port = reg.assigned_port;
    c.delete(&h.url(&format!("/unregister/{port}")), None)
        .await
        .assert_error(400, "missing_field");
    c.delete(
        &h.url(&format!("/unregister/{port}?registration_id=wrong")),
        None,
    )
    .await
    .assert_error(403, "registration_mismatch");
    assert_eq!(listing(&c, &h).await.count, 1, "a wrong id changes nothing");
    c.delete(&h.url("/unregister/5999?registration_id=x"), None)
        .await
        .assert_error(404, "not_registered");
    c.delete(&h.url("/unregister/abc?registration_id=x"), None)
        .await
        .assert_error(400, "invalid_field");
    let r = c
        .delete(
            &h.url(&format!(
                "/unregister/{port}?registration_id={}",
                reg.registration_id
            )),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.value(),
        json!({"success": true, "message": format!("unregistered; port {port} is free"), "freed_port": port})
    );
    assert_eq!(listing(&c, &h).await.count, 0);
    c.delete(
        &h.url(&format!(
            "/unregister/{port}?registration_id={}",
            reg.registration_id
        )),
        None,
    )
    .await
    .assert_error(404, "not_registered");
    let again = register(&c, &h, &registration("next", None)).await;
    assert_eq!(again.assigned_port, port, "handed out again at once");
}

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_renew_leases_and_expired_ones_vanish() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path())
        .arg("--ttl")
        .arg("2")
        .start();
    let c = Client::new();
    let kept = register(&c, &h, &registration("kept", None)).await;
    let lapsed = register(&c, &h, &registration("lapsed", None)).await;
    let hb = |port: u16| h.url(&format!("/heartbeat/{port}"));
    let mut last = kept.expires_at.clone();
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let r = c.post_raw(&hb(kept.assigned_port), vec![], None).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.value();
        assert_eq!(v["port"], kept.assigned_port);
        let expires = v["expires_at"].as_str().unwrap().to_owned();
        assert!(
            expires > last,
            "expires_at moves forward: {expires} <= {last}"
        );
        last = expires;
    }
    // A heartbeat naming the registration must name the right one.
    let r = c
        .post_json(
            &hb(kept.assigned_port),
            &json!({"registration_id": kept.registration_id}),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    c.post_json(
        &hb(kept.assigned_port),
        &json!({"registration_id": "other"}),
        None,
    )
    .await
    .assert_error(403, "registration_mismatch");
    c.post_raw(&hb(kept.assigned_port), b"{oops".to_vec(), None)
        .await
        .assert_error(400, "invalid_json");

    // The unrenewed one is gone: listing, heartbeat and port reuse all agree.
    let list = listing(&c, &h).await;
    assert_eq!(
        list.registrations
            .iter()
            .map(|r| r.model_name.as_str())
            .collect::<Vec<_>>(),
        ["kept"]
    );
    c.post_raw(&hb(lapsed.assigned_port), vec![], None)
        .await
        .assert_error(404, "not_registered");
    let reuse = register(&c, &h, &registration("reuse", Some(lapsed.assigned_port))).await;
    assert_eq!(reuse.assigned_port, lapsed.assigned_port);
}

#[tokio::test(flavor = "multi_thread")]
async fn retried_registration_from_the_same_process_keeps_its_port() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    let c = Client::new();
    let first = register(&c, &h, &registration("same", None)).await;
    let retry = register(&c, &h, &registration("same", Some(5700))).await;
    assert_eq!(retry.assigned_port, first.assigned_port);
    assert_eq!(
        retry.registration_id, first.registration_id,
        "the retry can still unregister"
    );
    assert!(
        retry.message.contains("already registered"),
        "{}",
        retry.message
    );
    assert_eq!(listing(&c, &h).await.count, 1);
    // Concurrent retries of a new registration still end with one port.
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (c, url) = (c.clone(), h.url("/register"));
            tokio::spawn(async move {
                c.post_json(&url, &registration("burst", None), None)
                    .await
                    .json::<RegistrationResponse>()
                    .assigned_port
            })
        })
        .collect();
    let mut ports = HashSet::new();
    for t in tasks {
        ports.insert(t.await.unwrap());
    }
    assert_eq!(ports.len(), 1, "{ports:?}");
    assert_eq!(listing(&c, &h).await.count, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn registrations_survive_a_registry_restart() {
    let dir = temp_dir();
    let c = Client::new();
    let reg = {
        let h = HostBuilder::registry(dir.path()).start();
        let reg = register(&c, &h, &registration("durable", None)).await;
        assert!(h.stop().success());
        reg
    };
    let h = HostBuilder::registry(dir.path()).start();
    let list = listing(&c, &h).await;
    assert_eq!(list.count, 1);
    assert_eq!(list.registrations[0].port, reg.assigned_port);
    let r = c
        .delete(
            &h.url(&format!(
                "/unregister/{}?registration_id={}",
                reg.assigned_port, reg.registration_id
            )),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "the id still works after the restart");
}

#[tokio::test(flavor = "multi_thread")]
async fn dead_processes_are_reaped_and_live_ones_marked() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path())
        .arg("--monitor-interval")
        .arg("500ms")
        .start();
    let c = Client::new();
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let mut doomed = registration("doomed", None);
    doomed["process_id"] = json!(child.id());
    let doomed = register(&c, &h, &doomed).await;
    let alive = register(&c, &h, &registration("alive", None)).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let list = listing(&c, &h).await;
    assert_eq!(list.count, 2, "a running process is kept");
    assert!(
        list.registrations
            .iter()
            .all(|r| r.process_alive == Some(true)),
        "{list:?}"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await; // two intervals
    let list = listing(&c, &h).await;
    assert_eq!(
        list.registrations
            .iter()
            .map(|r| r.port)
            .collect::<Vec<_>>(),
        [alive.assigned_port]
    );
    let again = register(
        &c,
        &h,
        &registration("successor", Some(doomed.assigned_port)),
    )
    .await;
    assert_eq!(
        again.assigned_port, doomed.assigned_port,
        "the dead process's port is free"
    );
}

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
