//! `runtime-host model`: the v1.2 deployment lifecycle against a real (or a fake) registry,
//! with real processes and real HTTP.

use e2e_tests::{Client, Host, HostBuilder, component, temp_dir};
use edge_api::registry::RegistryListing;
use std::net::TcpListener as StdListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A registry on its own small range of ports, so tests never compete for 5100.
fn registry(dir: &std::path::Path, extra: &[&str]) -> (Host, u16) {
    let first = e2e_tests::port_block(5);
    let mut b = HostBuilder::registry(dir)
        .arg("--ports")
        .arg(format!("{first}-{}", first + 4));
    for a in extra {
        b = b.arg(*a);
    }
    (b.start(), first)
}

fn model(dir: &std::path::Path, registry_url: &str, extra: &[&str]) -> HostBuilder {
    let mut b = HostBuilder::model(component("molprop"), dir, registry_url);
    for a in extra {
        b = b.arg(*a);
    }
    b
}

async fn listing(c: &Client, reg: &Host) -> RegistryListing {
    c.get(&reg.url("/registry")).await.json()
}

async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
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

/// A fake registry on a free port: `answer(path, body)` makes each reply (run on the
/// server's task, so it may await). Returns its URL.
async fn fake_registry<F, Fut>(answer: F) -> String
where
    F: Fn(String, serde_json::Value) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = serde_json::Value> + Send,
{
    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    // Port 0: the kernel picks an unused ephemeral port, outside the blocks `port_block`
    // hands out, so no other test (or test process) can take it between check and bind.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let answer = answer.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let answer = answer.clone();
                        async move {
                            let path = req.uri().path().to_owned();
                            let body = req.into_body().collect().await.unwrap().to_bytes();
                            let body = serde_json::from_slice(&body).unwrap_or_default();
                            let reply = answer(path, body).await;
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                                Bytes::from(reply.to_string()),
                            )))
                        }
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

/// A registration answer assigning `port`.
fn assigned(port: u16) -> serde_json::Value {
    serde_json::json!({"success": true, "assigned_port": port,
    "registration_id": "00000000-0000-4000-8000-000000000001",
    "message": "assigned", "expires_at": "2030-01-01T00:00:00.000"})
}

/// A registry that, before it answers, checks that the assigned port is not yet accepting
/// connections: proof that the model registers before it binds.
#[tokio::test(flavor = "multi_thread")]
async fn registration_happens_before_the_port_is_bound() {
    let port = e2e_tests::free_port();
    let probe: Arc<Mutex<Option<(bool, serde_json::Value)>>> = Arc::new(Mutex::new(None));
    let seen = probe.clone();
    let url = fake_registry(move |path, body| {
        let seen = seen.clone();
        async move {
            if path != "/register" {
                return serde_json::json!({"success": true});
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            let open = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok();
            *seen.lock().unwrap() = Some((open, body));
            assigned(port)
        }
    })
    .await;
    let mdir = temp_dir();
    let m = model(mdir.path(), &url, &[]).start();
    assert_eq!(m.addr.port(), port);
    let (was_open, body) = probe.lock().unwrap().clone().expect("the model registered");
    assert!(
        !was_open,
        "the port must not accept connections before registration completes"
    );
    assert_eq!(body["process_id"], m.pid());
    assert_eq!(body["app_version"], "1.2.0");
    assert!(body.get("preferred_port").is_some(), "sent, as null");
}

/// A registry that ignores the reservation of a busy port and assigns it again and again:
/// the model gives up with a clear error instead of going round for ever.
#[test]
fn a_registry_that_keeps_assigning_a_busy_port_is_not_followed_for_ever() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Port 0: no race with other tests between choosing the port and holding it.
    let busy = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = busy.local_addr().unwrap().port();
    let url = runtime.block_on(fake_registry(move |path, _| async move {
        if path == "/register" {
            assigned(port)
        } else {
            serde_json::json!({"success": true, "message": "ok", "freed_port": port})
        }
    }));
    let mdir = temp_dir();
    let (component, data) = (component("molprop"), mdir.path().display().to_string());
    let err = e2e_tests::host_refuses(
        &[
            "model",
            &component.display().to_string(),
            "--registry",
            &url,
            "--data-dir",
            &data,
        ],
        // Generous: on a loaded CI machine the component may first have to be compiled.
        Duration::from_secs(120),
    );
    assert!(
        err.contains(&format!("assigned port {port} again")),
        "names the port: {err}"
    );
    drop(busy);
}

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_renew_and_a_forgotten_registration_is_renewed_on_the_same_port() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let c = Client::new();
    {
        let (reg, _) = registry(rdir.path(), &["--ttl", "5"]);
        let m = model(
            mdir.path(),
            &reg.base_url(),
            &["--heartbeat-interval", "300ms"],
        )
        .start();
        let first = listing(&c, &reg).await.registrations[0]
            .last_heartbeat
            .clone();
        eventually("last_heartbeat moves", Duration::from_secs(5), || {
            let (c, reg, first) = (c.clone(), &reg, first.clone());
            async move {
                listing(&c, reg)
                    .await
                    .registrations
                    .first()
                    .is_some_and(|r| r.last_heartbeat > first)
            }
        })
        .await;
        drop(m);
    }
    // The registry forgets the model (it is replaced by one with empty data on the same
    // address): the model's next heartbeat is refused, and it registers again on its port.
    let (rdir2, rdir3, mdir2) = (temp_dir(), temp_dir(), temp_dir());
    let first_port = e2e_tests::port_block(5);
    let ports = format!("{first_port}-{}", first_port + 4);
    let listen = format!("127.0.0.1:{}", e2e_tests::free_port());
    let forgetful = |dir: &std::path::Path| {
        HostBuilder::registry(dir)
            .listen_on(&listen)
            .arg("--ports")
            .arg(ports.clone())
            .start()
    };
    let reg = forgetful(rdir2.path());
    let m = model(
        mdir2.path(),
        &reg.base_url(),
        &["--heartbeat-interval", "500ms"],
    )
    .start();
    let (port, pid) = (m.addr.port(), m.pid());
    reg.kill9();
    let reg = forgetful(rdir3.path());
    assert_eq!(
        listing(&c, &reg).await.count,
        0,
        "the new registry starts empty"
    );
    eventually("registered again", Duration::from_secs(10), || {
        let (c, reg) = (c.clone(), &reg);
        async move {
            listing(&c, reg)
                .await
                .registrations
                .first()
                .is_some_and(|r| r.port == port && r.process_id == pid)
        }
    })
    .await;
    assert!(m.output().contains("registered again"), "{}", m.output());
}

#[tokio::test(flavor = "multi_thread")]
async fn keeps_serving_when_the_registry_dies_and_still_exits_cleanly() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let c = Client::new();
    let (reg, _) = registry(rdir.path(), &[]);
    let mut m = model(
        mdir.path(),
        &reg.base_url(),
        &["--heartbeat-interval", "200ms"],
    )
    .start();
    reg.kill9();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        c.get(&m.url("/health")).await.status,
        200,
        "serving on without the registry"
    );
    let started = Instant::now();
    m.terminate();
    let status = m.wait(Duration::from_secs(10));
    assert!(status.success(), "{status:?}\n{}", m.output());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "exit within 5 s: {:?}",
        started.elapsed()
    );
    assert!(
        m.output().contains("unregistration skipped"),
        "{}",
        m.output()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn registers_once_a_missing_registry_comes_up() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let c = Client::new();
    let reg_port = e2e_tests::free_port();
    let reg_url = format!("http://127.0.0.1:{reg_port}");
    let preferred = e2e_tests::port_block(3);
    let m = model(
        mdir.path(),
        &reg_url,
        &[
            "--preferred-port",
            &preferred.to_string(),
            "--registry-wait",
            "500ms",
            "--heartbeat-interval",
            "300ms",
        ],
    )
    .start();
    assert_eq!(
        m.addr.port(),
        preferred,
        "serves on the preferred port without a registry"
    );
    assert_eq!(c.get(&m.url("/health")).await.status, 200);
    let reg = HostBuilder::registry(rdir.path())
        .arg("--ports")
        .arg(format!("{preferred}-{}", preferred + 2))
        .listen_on(&format!("127.0.0.1:{reg_port}"))
        .start();
    let pid = m.pid();
    eventually(
        "the model registers with the late registry",
        Duration::from_secs(10),
        || {
            let (c, reg) = (c.clone(), &reg);
            async move {
                listing(&c, reg)
                    .await
                    .registrations
                    .iter()
                    .any(|r| r.port == preferred && r.process_id == pid)
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_registry_and_no_preferred_port_is_a_clear_error() {
    let mdir = temp_dir();
    let out = std::process::Command::new(e2e_tests::host_binary())
        .arg("model")
        .arg(component("molprop"))
        .args([
            "--registry",
            &format!("http://127.0.0.1:{}", e2e_tests::free_port()),
            "--registry-wait",
            "300ms",
            "--data-dir",
        ])
        .arg(mdir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--preferred-port") && err.contains("runtime-host registry"),
        "{err}"
    );
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

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_follow_a_short_lease_so_the_model_never_drops_out() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    // A 3 s lease, and the model left at its default 30 s heartbeat interval: it must
    // heartbeat within the lease the registry granted, not on its own schedule.
    let (reg, first) = registry(rdir.path(), &["--ttl", "3"]);
    let m = model(mdir.path(), &reg.base_url(), &[]).start();
    assert_eq!(m.addr.port(), first);
    let c = Client::new();
    let mut heartbeats = std::collections::BTreeSet::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        let list = listing(&c, &reg).await;
        let entry = list
            .registrations
            .iter()
            .find(|r| r.process_id == m.pid())
            .unwrap_or_else(|| {
                panic!(
                    "the model dropped out of /registry after {:?}",
                    start.elapsed()
                )
            });
        assert_eq!(entry.port, first);
        heartbeats.insert(entry.last_heartbeat.clone());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        heartbeats.len() >= 8,
        "last_heartbeat keeps moving (about one a second): {heartbeats:?}"
    );
    // Quiet logs: the host's own heartbeats are DEBUG, requests from outside stay INFO.
    let log = reg.output();
    assert!(
        log.lines()
            .any(|l| l.contains("INFO") && l.contains("path=\"/registry\"")),
        "outside requests are logged:\n{log}"
    );
    assert!(
        !log.contains("path=\"/heartbeat/"),
        "heartbeats from the model host are not logged at INFO:\n{log}"
    );
}
