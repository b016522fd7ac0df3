//! `runtime-host model`: the v1.2 deployment lifecycle against a real (or a fake) registry,
//! with real processes and real HTTP.

mod fake_registry;
mod leases;
mod registry_outages;

use e2e_tests::{Client, Host, HostBuilder, component, temp_dir};
use edge_api::registry::RegistryListing;
use std::net::TcpListener as StdListener;
use std::time::{Duration, Instant};

/// A registry on its own small range of ports, so tests never compete for 5100.
pub fn registry(dir: &std::path::Path, extra: &[&str]) -> (Host, u16) {
    let first = e2e_tests::port_block(5);
    let mut b = HostBuilder::registry(dir)
        .arg("--ports")
        .arg(format!("{first}-{}", first + 4));
    for a in extra {
        b = b.arg(*a);
    }
    (b.start(), first)
}

pub fn model(dir: &std::path::Path, registry_url: &str, extra: &[&str]) -> HostBuilder {
    let mut b = HostBuilder::model(component("molprop"), dir, registry_url);
    for a in extra {
        b = b.arg(*a);
    }
    b
}

pub async fn listing(c: &Client, reg: &Host) -> RegistryListing {
    c.get(&reg.url("/registry")).await.json()
}

pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < timeout, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn registers_with_its_pid_and_serves_on_the_assigned_port() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let (reg, first) = registry(rdir.path(), &[]);
    let m = model(mdir.path(), &reg.base_url(), &[]).start();
    let c = Client::new();
    assert_eq!(
        m.addr.port(),
        first,
        "serves on the port the registry assigned"
    );
    let list = listing(&c, &reg).await;
    assert_eq!(list.count, 1);
    let entry = &list.registrations[0];
    assert_eq!((entry.port, entry.process_id), (first, m.pid()));
    assert_eq!(entry.model_name, "molprop");
    assert!(
        entry.metadata["capabilities"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    );
    // Its version (a digest of the component) in the registration, /health and every answer.
    let version = entry.metadata["model_version"].as_str().unwrap_or_default();
    assert!(
        version.starts_with("sha256:") && version.len() == 19,
        "{entry:?}"
    );
    let health = c.get(&m.url("/health")).await;
    assert_eq!(health.value()["status"], "ok");
    assert_eq!(health.value()["model_version"], version);
    assert_eq!(health.header("x-model-version"), Some(version));
    assert!(m.output().contains("Lightweight AI Model API Runtime Specification 1.2, (c) 2025 Paramus Transform LLC, MIT License"));
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_shutdown_unregister_and_free_the_port() {
    let c = Client::new();
    let (rdir, m1dir, m2dir) = (temp_dir(), temp_dir(), temp_dir());
    let (reg, _) = registry(rdir.path(), &[]);
    // Default: /shutdown is refused; SIGTERM unregisters.
    let m = model(m1dir.path(), &reg.base_url(), &[]).start();
    c.send(hyper::Method::POST, &m.url("/shutdown"), None, &[])
        .await
        .assert_error(403, "shutdown_disabled");
    let url = m.url("/health");
    assert!(m.stop().success());
    assert_eq!(listing(&c, &reg).await.count, 0, "unregistered on SIGTERM");
    assert!(
        c.try_send(hyper::Method::GET, &url, None, &[])
            .await
            .is_err(),
        "port freed"
    );
    // With --allow-shutdown, POST /shutdown stops it the same way.
    let mut m = model(m2dir.path(), &reg.base_url(), &["--allow-shutdown"]).start();
    let r = c
        .send(hyper::Method::POST, &m.url("/shutdown"), None, &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.value()["success"], true);
    assert!(m.wait(Duration::from_secs(10)).success());
    assert_eq!(listing(&c, &reg).await.count, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn busy_assigned_ports_are_all_reserved_and_the_model_moves_past_them() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let c = Client::new();
    let (reg, first) = registry(rdir.path(), &[]);
    // Processes outside the registry hold four of its five ports (more moves than the
    // host used to allow); the model must find the fifth.
    let squatters: Vec<_> = (first..first + 4)
        .map(|p| StdListener::bind(("127.0.0.1", p)).unwrap())
        .collect();
    let m = model(
        mdir.path(),
        &reg.base_url(),
        &["--heartbeat-interval", "300ms"],
    )
    .start();
    assert_eq!(m.addr.port(), first + 4, "moved to the one free port");
    assert_eq!(c.get(&m.url("/health")).await.status, 200);
    let list = listing(&c, &reg).await;
    let model_entry = list
        .registrations
        .iter()
        .find(|r| r.port == first + 4)
        .expect("registered where it serves");
    assert_eq!(model_entry.process_id, m.pid());
    for busy in first..first + 4 {
        let guard = list
            .registrations
            .iter()
            .find(|r| r.port == busy)
            .unwrap_or_else(|| panic!("busy port {busy} reserved: {list:?}"));
        assert!(guard.app_name.ends_with("busy-port-guard"), "{guard:?}");
    }
    // Nobody else is handed a busy port.
    let body = serde_json::json!({"app_name": "other", "app_version": "1.2.0", "model_name": "x", "process_id": std::process::id(),
        "preferred_port": null, "reason": "test", "metadata": {}});
    c.post_json(&reg.url("/register"), &body, None)
        .await
        .assert_error(503, "no_ports_available");
    // Once the ports are free, their reservations go.
    drop(squatters);
    eventually("reservations released", Duration::from_secs(10), || {
        let (c, reg) = (c.clone(), &reg);
        async move {
            !listing(&c, reg)
                .await
                .registrations
                .iter()
                .any(|r| r.port < first + 4)
        }
    })
    .await;
}
