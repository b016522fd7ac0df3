//! Against a fake registry: the model registers before it binds its port, and does not follow
//! a registry that keeps assigning a busy port for ever.

use super::model;
use e2e_tests::{component, temp_dir};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A fake registry on a free port: `answer(path, body)` makes each reply, always 200 (run
/// on the server's task, so it may await). Returns its URL.
async fn fake_registry<F, Fut>(answer: F) -> String
where
    F: Fn(String, serde_json::Value) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = serde_json::Value> + Send,
{
    e2e_tests::fake::serve(move |path, body| {
        let reply = answer(path, body);
        async move { (200, reply.await) }
    })
    .await
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

/// A registry that refuses the registration itself (a 4xx: a name too long, a bad field):
/// the model does not ask again for `--registry-wait`, it stops at once and says why.
#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_that_will_not_change_is_not_retried() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    let url = e2e_tests::fake::serve(move |_path, _body| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            let refusal = serde_json::json!({"success": false, "error_code": "invalid_field",
                "error": "model_name: must be at most 200 characters"});
            (400, refusal)
        }
    })
    .await;
    let mdir = temp_dir();
    let out = std::process::Command::new(e2e_tests::host_binary())
        .arg("model")
        .arg(component("molprop"))
        .args(["--registry", &url, "--registry-wait", "10s", "--data-dir"])
        .arg(mdir.path())
        .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("refused") && err.contains("200 characters"),
        "{err}"
    );
    // Asked once, not again for the 10 s of --registry-wait.
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "{err}");
}
