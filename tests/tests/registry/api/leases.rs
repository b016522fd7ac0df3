//! Leases and their end: unregistration by id, heartbeats, retries from the same process,
//! a registry restart, and processes that die.

use super::{listing, register, registration};
use e2e_tests::{App, Client, HostBuilder, temp_dir};
use edge_api::registry::RegistrationResponse;
use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn unregister_checks_the_id_and_frees_the_port() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    unregister_scenario(&h).await;
}

/// The same under Spin (`spin up` of the project's app): the lease table on Spin's own
/// SQLite store.
#[tokio::test(flavor = "multi_thread")]
async fn under_spin_unregister_checks_the_id_and_frees_the_port() {
    // The Redis pass moves runtime-host's stores; Spin's is its SQLite file either way.
    e2e_tests::redis::assert_not_in_redis_pass("Spin's own store");
    let Some(app) = e2e_tests::spin::SpinApp::up("the registry's leases under Spin", "t") else {
        return;
    };
    unregister_scenario(&app).await;
}

async fn unregister_scenario(h: &impl App) {
    let c = Client::new();
    let reg = register(&c, h, &registration("u", None)).await;
    let port = reg.assigned_port;
    c.delete(&h.app(&format!("/unregister/{port}")), None)
        .await
        .assert_error(400, "missing_field");
    c.delete(
        &h.app(&format!("/unregister/{port}?registration_id=wrong")),
        None,
    )
    .await
    .assert_error(403, "registration_mismatch");
    assert_eq!(listing(&c, h).await.count, 1, "a wrong id changes nothing");
    c.delete(&h.app("/unregister/5999?registration_id=x"), None)
        .await
        .assert_error(404, "not_registered");
    c.delete(&h.app("/unregister/abc?registration_id=x"), None)
        .await
        .assert_error(400, "invalid_field");
    let r = c
        .delete(
            &h.app(&format!(
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
    assert_eq!(listing(&c, h).await.count, 0);
    c.delete(
        &h.app(&format!(
            "/unregister/{port}?registration_id={}",
            reg.registration_id
        )),
        None,
    )
    .await
    .assert_error(404, "not_registered");
    let again = register(&c, h, &registration("next", None)).await;
    assert_eq!(again.assigned_port, port, "handed out again at once");
}

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_renew_leases_and_expired_ones_vanish() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path())
        .arg("--ttl")
        .arg("2")
        .start();
    // The native host tells the registry which process calls: this one registered.
    heartbeat_scenario(&h, IdLess::Renews).await;
}

/// The same under Spin, whose registry cannot tell who calls: a heartbeat must name the
/// registration there.
#[tokio::test(flavor = "multi_thread")]
async fn under_spin_heartbeats_renew_leases_and_expired_ones_vanish() {
    e2e_tests::redis::assert_not_in_redis_pass("Spin's own store");
    let what = "the registry's heartbeats under Spin";
    let variables = [("registry_ttl_secs", "2")];
    let Some(app) = e2e_tests::spin::SpinApp::up_with(what, "t", None, &variables) else {
        return;
    };
    heartbeat_scenario(&app, IdLess::Refused).await;
}

/// What a heartbeat without `registration_id` from the registering process gets.
#[derive(PartialEq)]
enum IdLess {
    Renews,
    /// 403: the host cannot say which process calls.
    Refused,
}

/// Registrations on a 2 s lease: one renewed every 700 ms outlives the other.
async fn heartbeat_scenario(h: &impl App, id_less: IdLess) {
    let c = Client::new();
    let kept = register(&c, h, &registration("kept", None)).await;
    let lapsed = register(&c, h, &registration("lapsed", None)).await;
    let hb = |port: u16| h.app(&format!("/heartbeat/{port}"));
    let renewal = json!({"registration_id": kept.registration_id});
    if id_less == IdLess::Refused {
        c.post_raw(&hb(kept.assigned_port), vec![], None)
            .await
            .assert_error(403, "forbidden");
    }
    let mut last = kept.expires_at.clone();
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let r = match id_less {
            IdLess::Renews => c.post_raw(&hb(kept.assigned_port), vec![], None).await,
            IdLess::Refused => c.post_json(&hb(kept.assigned_port), &renewal, None).await,
        };
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
    let r = c.post_json(&hb(kept.assigned_port), &renewal, None).await;
    assert_eq!(r.status, 200, "{}", r.text());
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
    let list = listing(&c, h).await;
    assert_eq!(
        list.registrations
            .iter()
            .map(|r| r.model_name.as_str())
            .collect::<Vec<_>>(),
        ["kept"]
    );
    let late = json!({"registration_id": lapsed.registration_id});
    c.post_json(&hb(lapsed.assigned_port), &late, None)
        .await
        .assert_error(404, "not_registered");
    let reuse = register(&c, h, &registration("reuse", Some(lapsed.assigned_port))).await;
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
