//! A registration belongs to whoever made it (issue 22, section 2): no other process gets
//! its id, renews it or fills the port range, under the native host (which knows the
//! calling process) and without it (the rules a Spin deployment keeps).

use e2e_tests::raw::{post, send_from_another_process};
use e2e_tests::{Client, Host, HostBuilder, component, host_binary, temp_dir};
use edge_api::registry::{RegistrationResponse, RegistryListing};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};

fn registration(process_id: u32, model: &str) -> Value {
    json!({
        "app_name": "owner-test", "app_version": "1.2.0", "model_name": model,
        "process_id": process_id, "preferred_port": null, "reason": "test", "metadata": {}
    })
}

/// A process of the test's own: the "victim" deployment whose registration others attack.
struct Sleeper(Child);

impl Sleeper {
    fn start() -> Self {
        let child = Command::new("sleep")
            .arg("120")
            .stdin(Stdio::null())
            .spawn()
            .expect("sleep");
        Self(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn small_registry(dir: &std::path::Path, extra: &[&str]) -> Host {
    let first = e2e_tests::port_block(21);
    let mut b = HostBuilder::registry(dir)
        .arg("--ports")
        .arg(format!("{first}-{}", first + 20));
    for a in extra {
        b = b.arg(*a);
    }
    b.start()
}

async fn listing(c: &Client, h: &Host) -> RegistryListing {
    c.get(&h.url("/registry")).await.json()
}

#[tokio::test(flavor = "multi_thread")]
async fn another_process_can_neither_take_over_nor_renew_a_registration() {
    let dir = temp_dir();
    let h = small_registry(dir.path(), &[]);
    let port = h.addr.port();
    let c = Client::new();
    let victim = Sleeper::start();
    // The test process registers the deployment it started (its child).
    let body = registration(victim.pid(), "victim");
    let r = c.post_json(&h.url("/register"), &body, None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let original: RegistrationResponse = r.json();
    let leased = original.assigned_port;

    // The attack from the issue: the triple copied from /registry, sent by another process.
    let copied = serde_json::to_string(&body).unwrap();
    let attack = send_from_another_process(port, &post(port, "/register", &copied, ""));
    assert_eq!(attack.status, 403, "{attack:?}");
    assert_eq!(attack.json()["error_code"], "forbidden");
    assert!(!attack.body.contains(&original.registration_id));
    // Nor may it register init, which no one ever reaps.
    let init = serde_json::to_string(&registration(1, "init")).unwrap();
    let attack = send_from_another_process(port, &post(port, "/register", &init, ""));
    assert_eq!(attack.status, 403, "{attack:?}");
    // A heartbeat with no body no longer renews anyone's lease.
    let empty =
        send_from_another_process(port, &post(port, &format!("/heartbeat/{leased}"), "", ""));
    assert_eq!(empty.status, 403, "{empty:?}");
    assert!(
        empty.body.contains("registration_id"),
        "says what to send: {}",
        empty.body
    );
    let wrong = r#"{"registration_id": "00000000-0000-4000-8000-000000000000"}"#;
    let wrong = send_from_another_process(
        port,
        &post(port, &format!("/heartbeat/{leased}"), wrong, ""),
    );
    assert_eq!(wrong.status, 403, "{wrong:?}");

    // The registering process itself still gets its id back on a retry, and may renew
    // without the id: it is the victim's parent.
    let again: RegistrationResponse = c.post_json(&h.url("/register"), &body, None).await.json();
    assert_eq!(
        (again.assigned_port, again.registration_id.as_str()),
        (leased, original.registration_id.as_str())
    );
    let r = c
        .post_raw(&h.url(&format!("/heartbeat/{leased}")), Vec::new(), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let list = listing(&c, &h).await;
    assert_eq!(list.count, 1, "nothing registered by the attacks: {list:?}");
    let r = c
        .delete(
            &h.url(&format!(
                "/unregister/{leased}?registration_id={}",
                original.registration_id
            )),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn one_process_cannot_fill_the_port_range() {
    let dir = temp_dir();
    let h = small_registry(dir.path(), &["--max-per-process", "3"]);
    let c = Client::new();
    let me = std::process::id();
    for i in 0..3 {
        let mut body = registration(me, &format!("m{i}"));
        if i == 2 {
            // `165.0` is an integer to JSON Schema, so to the registry too.
            body["process_id"] = json!(f64::from(me));
            assert!(body.to_string().contains(&format!("{me}.0")));
        }
        let r = c.post_json(&h.url("/register"), &body, None).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let e = c
        .post_json(&h.url("/register"), &registration(me, "m3"), None)
        .await
        .assert_error(403, "forbidden");
    assert!(e.error.contains("registry_max_per_process"), "{}", e.error);
    // Another process (the test's child) has its own allowance.
    let child = Sleeper::start();
    let r = c
        .post_json(&h.url("/register"), &registration(child.pid(), "m"), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    // The issue's exhaustion: twelve registrations of init.
    for i in 0..12 {
        c.post_json(
            &h.url("/register"),
            &registration(1, &format!("init{i}")),
            None,
        )
        .await
        .assert_error(403, "forbidden");
    }
    assert_eq!(listing(&c, &h).await.count, 4);
}

/// Issue 56 §8: the cap per process alone let one process and two `sleep` children take all
/// 100 ports of a range. Registrations count against the user owning the registering
/// connection too: several processes of one user stop at `--max-per-user`, with an error
/// naming it, while each process still stops at its own cap; another user is not held back.
#[tokio::test(flavor = "multi_thread")]
async fn one_user_s_processes_cannot_fill_the_port_range() {
    let dir = temp_dir();
    let h = small_registry(
        dir.path(),
        &["--max-per-process", "3", "--max-per-user", "7"],
    );
    let c = Client::new();
    let register = |pid: u32, model: String| {
        let (c, url) = (c.clone(), h.url("/register"));
        async move { c.post_json(&url, &registration(pid, &model), None).await }
    };
    let me = std::process::id();
    let mut mine = Vec::new();
    for i in 0..3 {
        let r = register(me, format!("mine{i}")).await;
        assert_eq!(r.status, 200, "{}", r.text());
        mine.push(r.json::<RegistrationResponse>());
    }
    let e = register(me, "mine3".into())
        .await
        .assert_error(403, "forbidden");
    assert!(e.error.contains("registry_max_per_process"), "{}", e.error);
    // Children of this process, each with an allowance of its own, as in the issue.
    let children: Vec<Sleeper> = (0..3).map(|_| Sleeper::start()).collect();
    for i in 0..3 {
        let r = register(children[0].pid(), format!("first{i}")).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let r = register(children[1].pid(), "second0".into()).await;
    assert_eq!(r.status, 200, "the user's 7th: {}", r.text());
    for (child, model) in [(&children[1], "second1"), (&children[2], "third0")] {
        let e = register(child.pid(), model.into())
            .await
            .assert_error(403, "forbidden");
        for named in ["registry_max_per_user", "--max-per-user", "(7,", "user uid"] {
            assert!(e.error.contains(named), "`{named}` not in: {}", e.error);
        }
    }
    assert_eq!(listing(&c, &h).await.count, 7);
    // Once one is unregistered, the user may register one more, and no more.
    let freed = &mine[0];
    let url = h.url(&format!(
        "/unregister/{}?registration_id={}",
        freed.assigned_port, freed.registration_id
    ));
    assert_eq!(c.delete(&url, None).await.status, 200);
    let r = register(children[2].pid(), "third0".into()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    register(children[2].pid(), "third1".into())
        .await
        .assert_error(403, "forbidden");
    // Another user of the machine (where this test may become one) has an allowance of its own.
    if let Some((status, answer)) = register_as_another_user(&h, 65534) {
        assert_eq!(status, 200, "{answer}");
    }
}

/// The status and body of a registration of a `bash` process running as `uid` (its own
/// process id, sent through its `/dev/tcp`), or `None` where this test may not switch users.
fn register_as_another_user(h: &Host, uid: u32) -> Option<(u16, String)> {
    use std::os::unix::process::CommandExt;
    let me = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").ok()?);
    if me != 0 {
        eprintln!("not root: registering as another user is left out");
        return None;
    }
    let template = registration(0, "other-user")
        .to_string()
        .replace("\"process_id\":0", "\"process_id\":PID");
    let script = r#"B="${TEMPLATE//PID/$$}"; exec 3<>"/dev/tcp/127.0.0.1/$PORT" &&
        printf 'POST /register HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: %s\r\nConnection: close\r\n\r\n%s' "$PORT" "${#B}" "$B" >&3 &&
        timeout 30 cat <&3"#;
    let out = Command::new("bash")
        .args(["-c", script])
        .env("PORT", h.addr.port().to_string())
        .env("TEMPLATE", template)
        .uid(uid)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, text))
}

/// Served by `runtime-host serve`, the registry has no host vouching for callers, as under
/// Spin: every caller is unknown, so ids are never handed out twice and renewal needs the id.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_host_that_knows_the_caller_the_id_is_the_only_key() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("registry"), dir.path()).start();
    let c = Client::new();
    let body = registration(std::process::id(), "spin");
    let first: RegistrationResponse = c.post_json(&h.url("/register"), &body, None).await.json();
    let retry = c.post_json(&h.url("/register"), &body, None).await;
    let e = retry.assert_error(409, "already_exists");
    assert!(
        !retry.text().contains(&first.registration_id),
        "{}",
        e.error
    );
    let port = first.assigned_port;
    let heartbeat = h.url(&format!("/heartbeat/{port}"));
    c.post_raw(&heartbeat, Vec::new(), None)
        .await
        .assert_error(403, "forbidden");
    // A forged caller header changes nothing: the host drops it, and no secret vouches.
    let forged = c
        .send(
            hyper::Method::POST,
            &heartbeat,
            None,
            &[("runtime-host-caller", "guess; pids=1")],
        )
        .await;
    forged.assert_error(403, "forbidden");
    let r = c
        .post_json(
            &heartbeat,
            &json!({"registration_id": first.registration_id}),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    c.post_json(&h.url("/register"), &registration(1, "init"), None)
        .await
        .assert_error(403, "forbidden");
}

#[test]
fn a_port_range_holding_the_registry_s_own_port_is_refused() {
    let dir = temp_dir();
    let listen = e2e_tests::port_block(5) + 2;
    let out = Command::new(host_binary())
        .args(["registry", "--listen", &format!("127.0.0.1:{listen}")])
        .args(["--ports", &format!("{}-{}", listen - 2, listen + 2)])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("includes {listen}")), "{err}");
    assert!(!err.contains("5000"), "names the port actually used: {err}");
}
