//! The attacks of issue 22 against a running `up`, as a hostile script on the same machine
//! or a web page in its browser would make them. Loopback only, bounded in count and time.
//! Each asserts what the attack must no longer achieve, and that the stack serves on.

use e2e_tests::raw::{self, post, send_from_another_process};
use e2e_tests::{Client, Stack};
use edge_api::registry::RegistryListing;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// `up` with few slots, so that holding them is an attack a test can afford.
fn stack() -> Stack {
    Stack::up(&["--max-concurrency", "8"], 12)
}

async fn registrations(c: &Client, stack: &Stack) -> RegistryListing {
    c.get(&stack.registry("/registry")).await.json()
}

/// Who holds which port (leases move on with the models' own heartbeats).
fn holders(list: &RegistryListing) -> Vec<(u16, u32, String, String)> {
    let mut h: Vec<_> = list
        .registrations
        .iter()
        .map(|r| {
            (
                r.port,
                r.process_id,
                r.app_name.clone(),
                r.model_name.clone(),
            )
        })
        .collect();
    h.sort();
    h
}

#[tokio::test(flavor = "multi_thread")]
async fn attacks_on_a_running_stack_achieve_nothing() {
    let stack = stack();
    let c = Client::new();
    let before = registrations(&c, &stack).await;
    assert!(before.count >= 1, "{before:?}");
    let registry = stack.registry_port;

    // 1. Take over every registration by copying /registry (another process on the machine).
    for entry in &before.registrations {
        let copied = json!({
            "app_name": entry.app_name, "app_version": entry.app_version,
            "model_name": entry.model_name, "process_id": entry.process_id,
            "preferred_port": null, "reason": "takeover", "metadata": {}
        })
        .to_string();
        let r = send_from_another_process(registry, &post(registry, "/register", &copied, ""));
        assert_eq!(r.status, 403, "{r:?}");
        assert!(!r.body.contains("registration_id"), "{}", r.body);
        // 2. Keep someone else's lease alive (or probe it) with an empty heartbeat.
        let path = format!("/heartbeat/{}", entry.port);
        let r = send_from_another_process(registry, &post(registry, &path, "", ""));
        assert_eq!(r.status, 403, "{r:?}");
    }
    // 3. Fill the port range with init's process id.
    for i in 0..12 {
        let body =
            json!({"app_name": "fill", "app_version": "1.2.0", "model_name": format!("m{i}"),
            "process_id": 1, "preferred_port": null, "reason": "x", "metadata": {}})
            .to_string();
        let r = send_from_another_process(registry, &post(registry, "/register", &body, ""));
        assert_eq!(r.status, 403, "{r:?}");
    }
    // 4. A web page posting cross-site as text/plain (no CORS preflight), on every port
    //    that routes the registry.
    let body = json!({"app_name": "page", "app_version": "1.2.0", "model_name": "m",
        "process_id": std::process::id(), "preferred_port": null, "reason": "x", "metadata": {}})
    .to_string();
    for port in [registry, stack.app_port] {
        let request = post(port, "/register", &body, "Origin: http://evil.example\r\n")
            .replace("application/json", "text/plain");
        let r = raw::send(port, &request).await;
        assert_eq!(r.status, 403, "{r:?}");
        assert_eq!(r.json()["error_code"], "forbidden");
    }
    // 5. DNS rebinding: the page's own name now points at 127.0.0.1.
    let rebound = format!(
        "GET /api/chats HTTP/1.1\r\nHost: evil.example:{}\r\nConnection: close\r\n\r\n",
        stack.chat_port
    );
    assert_eq!(raw::send(stack.chat_port, &rebound).await.status, 403);

    let after = registrations(&c, &stack).await;
    assert_eq!(holders(&after), holders(&before), "nothing taken or added");
}

#[tokio::test(flavor = "multi_thread")]
async fn odd_requests_are_answered_and_cost_no_instance() {
    let stack = stack();
    let c = Client::new();
    let model = stack.model_port("molprop").await;
    // HTTP/1.0 may omit Host: answered. HTTP/1.1 may not: 400, not a 500.
    let old = raw::send(model, "GET /health HTTP/1.0\r\n\r\n").await;
    assert_eq!(old.status, 200, "{old:?}");
    assert_eq!(old.json()["status"], "ok");
    let new = raw::send(model, "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n").await;
    assert_eq!(new.status, 400, "{new:?}");
    // CONNECT names a host, not a path: refused as every target that names one is (issue 56),
    // 400 with what to send instead, not a 500.
    let connect = format!(
        "CONNECT 127.0.0.1:{model} HTTP/1.1\r\nHost: 127.0.0.1:{model}\r\nConnection: close\r\n\r\n"
    );
    let r = raw::send(model, &connect).await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.json()["error"].as_str().unwrap().contains("no proxy"),
        "{r:?}"
    );
    // A model's prefix with a trailing slash on the app port: a 404 that names the path, not
    // "no route for " with nothing after it.
    let r = c.get(&stack.app("/models/molprop/")).await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(
        !r.value()["error"].as_str().unwrap().ends_with("for "),
        "{}",
        r.text()
    );
    // A client's Spin routing header does not pick another route, on a model's own port.
    let r = c
        .send(
            hyper::Method::GET,
            &format!("http://127.0.0.1:{model}/health"),
            None,
            &[("spin-path-info", "/metrics")],
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.value()["status"], "ok", "{}", r.text());
    // Two Host headers, or one that names this machine before somebody else's: 400.
    for host in [
        format!("Host: 127.0.0.1:{model}\r\nHost: evil.example"),
        format!("Host: 127.0.0.1:{model}@evil.example"),
    ] {
        let request = format!("GET /health HTTP/1.1\r\n{host}\r\nConnection: close\r\n\r\n");
        let r = raw::send(model, &request).await;
        assert_eq!(r.status, 400, "{host}: {r:?}");
        assert_eq!(r.json()["error_code"], "invalid_field", "{r:?}");
    }
    // JSON answers, errors above all, are never sniffed as anything else.
    for url in [
        format!("http://127.0.0.1:{model}/health"),
        format!("http://127.0.0.1:{model}/no-such-route"),
        stack.app("/api/dialog?id=none"),
        stack.registry("/unregister/1"),
    ] {
        let r = c.get(&url).await;
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{url}");
    }
    // A model that is not deployed: 404 naming those that are, whatever the method.
    let body = json!({"input_type": "text", "data": {"text": "CCO"}});
    let r = c
        .post_json(&stack.app("/models/nonesuch/predict"), &body, None)
        .await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(r.text().contains("molprop"), "{}", r.text());
    // Nothing above was a fault: the stack logged no failed request.
    assert_eq!(
        c.get(&format!("http://127.0.0.1:{model}/health"))
            .await
            .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_trickling_bodies_do_not_hold_the_slots() {
    let stack = stack();
    let c = Client::new();
    let model = stack.model_port("molprop").await;
    // Twice as many connections as the stack has slots, each promising 1000 bytes and
    // sending one.
    let mut tricklers = Vec::new();
    for _ in 0..16 {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", model))
            .await
            .unwrap();
        let head = format!(
            "POST /predict HTTP/1.1\r\nHost: 127.0.0.1:{model}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        tricklers.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..5 {
        let r = c.get(&format!("http://127.0.0.1:{model}/health")).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // The chat service on the same stack answers too, and rejects deep metadata whole.
    let deep = (0..125).fold(json!(1), |inner, _| json!({ "a": inner }));
    let token = stack.admin_token.clone();
    let created: Value = c
        .post_json(
            &stack.app("/api/chats"),
            &json!({"chatName": "t"}),
            Some(&token),
        )
        .await
        .value();
    let id = created["id"].as_str().unwrap();
    c.post_json(
        &stack.app(&format!("/api/dialog/messages?id={id}")),
        &json!({"role": "user", "content": "x", "metadata": deep}),
        Some(&token),
    )
    .await
    .assert_error(400, "invalid_field");
    assert_eq!(c.get(&stack.app("/api/chats")).await.status, 200);
    drop(tricklers);
}

/// The nice values of the threads of process `pid` named `name` (field 19 of each task's
/// `stat`, after the parenthesised name).
fn niceness_of_threads(pid: u32, name: &str) -> Vec<i64> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if &stat[open + 1..close] == name {
            let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
            found.push(fields[16].parse().unwrap());
        }
    }
    found
}

/// Heavy batches cannot starve the short requests of other deployments (issue 45, section
/// 6): batches run on threads of their own at a lower priority, and another model's
/// `/health` keeps answering while they run. (The figures are a benchmark's:
/// bench/scripts/health_beside_batches.py, docs/BENCHMARKS.md.)
#[tokio::test(flavor = "multi_thread")]
async fn batches_run_apart_and_health_answers_beside_them() {
    let stack = stack();
    let c = Client::new();
    let cages = "C1C2CC3CC1CC(C2)C3".repeat(23);
    let body =
        json!({"input_type": "text", "data": {"texts": vec![cages; 500], "property": "logp"}});
    let batches: Vec<_> = (0..6)
        .map(|_| {
            let (c, url, body) = (
                c.clone(),
                stack.app("/models/molprop/predict"),
                body.clone(),
            );
            tokio::spawn(async move { c.post_json(&url, &body, None).await.status })
        })
        .collect();
    // While they run: /health of another model answers, and the batches are on niced threads.
    let mut answered_during = 0;
    let mut niced = Vec::new();
    while !batches.iter().all(|b| b.is_finished()) {
        let r = c.get(&stack.app("/models/iris/health")).await;
        assert_eq!(r.status, 200, "{}", r.text());
        answered_during += usize::from(!batches.iter().all(|b| b.is_finished()));
        niced = niceness_of_threads(stack.pid(), "batch-lane");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for b in batches {
        assert_eq!(b.await.unwrap(), 200);
    }
    assert!(
        answered_during >= 1,
        "/health never answered while the batches ran"
    );
    assert!(!niced.is_empty(), "no batch threads");
    assert!(
        niced.iter().all(|&n| n == 10),
        "batch threads' nice values: {niced:?}"
    );
}
