//! What an operator runs `up` with (issue 62, item 4): `--log-format json` (every line of the
//! log one JSON object; a request's with its id, route, model, status, duration and bytes),
//! request ids (a client's sane one kept, a hostile one replaced, one made otherwise, answered
//! in `x-request-id` on every answer, the host's own 401, 404 and 413 included), the API key
//! (`--api-key-file`: every model route needs it on the app port and on the model's own port,
//! the probes do not; it never shows in the log, `/metrics` or an answer) and failed
//! predictions counted in `/metrics` by model and error code (a refusal for want of the key
//! is none). `model`'s own key and text log, and the key kept from components: [`model_key`].

use e2e_tests::{Client, Reply, Stack, component, temp_dir};
use hyper::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

mod model_key;

const KEY: &str = "op-test-key-5f0c9b7e2d";

/// `up` serving molprop alone, logging JSON, its model routes behind [`KEY`] (in a key file
/// left readable by others: the host makes it private, as it does its token files).
fn stack_with_key() -> (Stack, tempfile::TempDir) {
    let dir = temp_dir();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    std::fs::copy(component("molprop"), models.join("molprop.wasm")).unwrap();
    let key_file = dir.path().join("api-key");
    std::fs::write(&key_file, format!("{KEY}\n")).unwrap();
    let args = [
        "--log-format",
        "json",
        "--api-key-file",
        key_file.to_str().unwrap(),
        "--models",
        models.to_str().unwrap(),
    ];
    let stack = Stack::up(&args, 4);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the key file was made private: {mode:o}");
    (stack, dir)
}

/// The request lines of the log, parsed, once one names `id` (the log lags the answers).
fn request_line(stack: &Stack, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let found = stack
            .log()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["target"] == "request" && v["request_id"] == id);
        if let Some(line) = found {
            return line;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no request line for {id}:\n{}",
            stack.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every answer a test saw, to check that none repeats the key.
#[derive(Default)]
struct Seen(Vec<Reply>);

impl Seen {
    fn keep(&mut self, reply: Reply) -> &Reply {
        self.0.push(reply);
        self.0.last().unwrap()
    }

    fn assert_never_shows(&self, secret: &str) {
        for reply in &self.0 {
            assert!(!reply.text().contains(secret), "{}", reply.text());
            for (name, value) in &reply.headers {
                let value = value.to_str().unwrap_or_default();
                assert!(!value.contains(secret), "{name}: {value}");
            }
        }
    }
}

async fn send(
    c: &Client,
    method: Method,
    url: &str,
    body: Option<Vec<u8>>,
    headers: &[(&str, &str)],
) -> Reply {
    c.send(method, url, body, headers).await
}

#[tokio::test(flavor = "multi_thread")]
async fn json_logs_request_ids_and_the_api_key_on_every_model_route() {
    let (stack, _dir) = stack_with_key();
    let c = Client::new();
    let mut seen = Seen::default();
    let bearer = format!("Bearer {KEY}");
    let with_key = [("authorization", bearer.as_str())];
    let own = format!("http://127.0.0.1:{}", stack.model_port("molprop").await);
    let predict = json!({"input_type": "text", "data": {"text": "CCO"}}).to_string();

    // The probes are open, on the app port and on the model's own port.
    for url in [
        stack.app("/models/molprop/health"),
        stack.app("/v2/models/molprop/ready"),
        stack.app("/health"),
        stack.app("/v2/health/ready"),
        format!("{own}/health"),
        format!("{own}/v2/health/ready"),
        format!("{own}/v2/models/molprop/ready"),
    ] {
        let r = seen.keep(c.get(&url).await);
        assert_eq!(r.status, 200, "{url}: {}", r.text());
        assert!(r.header("x-request-id").is_some(), "{url}");
    }
    // Every other model route needs the key: missing or wrong is 401 with the JSON error.
    let routes = [
        (Method::POST, "/models/molprop/predict", true),
        (Method::GET, "/models/molprop/info", false),
        (Method::GET, "/models/molprop/capabilities", false),
        (Method::GET, "/models/molprop/metrics", false),
        (Method::GET, "/models/molprop/test_examples", false),
        (Method::GET, "/v2/models/molprop", false),
        (Method::POST, "/v2/models/molprop/infer", true),
    ];
    let wrong = "Bearer op-test-key-5f0c9b7e2e".to_owned();
    for (method, path, posts) in &routes {
        let own_path = path.strip_prefix("/models/molprop").unwrap_or(path);
        for url in [stack.app(path), format!("{own}{own_path}")] {
            let body = posts.then(|| predict.clone().into_bytes());
            let headers: [&[(&str, &str)]; 3] = [
                &[],
                &[("authorization", wrong.as_str())],
                &[("x-api-key", "not-the-key")],
            ];
            for refused in headers {
                let r = seen.keep(send(&c, method.clone(), &url, body.clone(), refused).await);
                r.assert_error(401, "unauthorized");
                assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{url}");
                assert!(r.header("x-request-id").is_some(), "{url}");
            }
            let r = seen.keep(send(&c, method.clone(), &url, body.clone(), &with_key).await);
            assert!(
                r.status < 400 || r.status == 400 && *posts,
                "{url}: {}",
                r.text()
            );
            assert_ne!(r.status, 401, "{url}");
        }
    }
    let r = seen.keep(
        send(
            &c,
            Method::POST,
            &stack.app("/models/molprop/predict"),
            Some(predict.clone().into_bytes()),
            &[("x-api-key", KEY), ("x-request-id", "client-id-7")],
        )
        .await,
    );
    assert_eq!(r.status, 200, "x-api-key is taken too: {}", r.text());
    assert_eq!(
        r.header("x-request-id"),
        Some("client-id-7"),
        "a sane id is kept"
    );
    let line = request_line(&stack, "client-id-7");
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["method"], "POST");
    assert_eq!(line["route"], "/predict");
    assert_eq!(line["path"], "/models/molprop/predict");
    assert_eq!(line["model"], "molprop");
    assert_eq!(line["status"], 200);
    assert_eq!(line["bytes_in"], predict.len());
    assert_eq!(line["bytes_out"], r.body.len());
    assert_eq!(line["port"], stack.app_port);
    assert!(
        line["duration_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{line}"
    );
    let at = line["timestamp"].as_str().unwrap();
    assert!(
        at.ends_with('Z') && chrono_like(at),
        "RFC 3339 in UTC: {at}"
    );

    // Hostile ids are replaced by one the host makes, answered and logged alike.
    let long = "x".repeat(129);
    let quoted = "quote\"and=equals\\";
    let mut sent = Vec::new();
    for hostile in ["two words", long.as_str(), quoted, "tab\there"] {
        let Ok(r) = c
            .try_send(
                Method::GET,
                &stack.app("/models/molprop/health"),
                None,
                &[("x-request-id", hostile)],
            )
            .await
        else {
            continue; // a value the client library itself refuses to send
        };
        sent.push(hostile);
        let id = r.header("x-request-id").unwrap().to_owned();
        if hostile.contains('"') {
            assert_eq!(id, hostile, "visible ASCII is kept, however odd");
        } else {
            assert_ne!(id, hostile);
            assert!(
                id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic()),
                "{id}"
            );
        }
        assert_eq!(request_line(&stack, &id)["route"], "/health");
    }
    assert!(
        sent.contains(&quoted),
        "the quote and backslash went: {sent:?}"
    );
    assert!(sent.len() >= 3, "most cases went: {sent:?}");

    // The host's own answers carry an id: a 404 on the model's port, a 413 of the app.
    let r = seen.keep(c.get(&format!("{own}/no/such/route")).await);
    assert_eq!(r.status, 401, "unknown model paths need the key too");
    let r = seen.keep(
        send(
            &c,
            Method::GET,
            &format!("{own}/no/such/route"),
            None,
            &with_key,
        )
        .await,
    );
    r.assert_error(404, "not_found");
    let line = request_line(&stack, r.header("x-request-id").unwrap());
    assert_eq!(
        (line["status"].clone(), line["route"].clone()),
        (json!(404), Value::Null)
    );
    assert_eq!(line["model"], "molprop");
    let big = vec![b' '; 8 << 20];
    let r = seen.keep(
        send(
            &c,
            Method::POST,
            &stack.app("/models/molprop/predict"),
            Some(big),
            &with_key,
        )
        .await,
    );
    r.assert_error(413, "payload_too_large");
    let line = request_line(&stack, r.header("x-request-id").unwrap());
    assert_eq!(line["status"], 413);
    assert_eq!(line["bytes_in"], 8 << 20);
    let r = seen.keep(c.get(&stack.app("/definitely/not/here")).await);
    let id = r
        .header("x-request-id")
        .expect("the console's 404 carries one too");
    assert_eq!(request_line(&stack, id)["status"], r.status);

    // Failed predictions by model and code: a 200 with success false, and a 400.
    let url = stack.app("/models/molprop/predict");
    let unclosed = json!({"input_type": "text", "data": {"text": "C1CC"}}).to_string();
    let r = seen.keep(
        send(
            &c,
            Method::POST,
            &url,
            Some(unclosed.into_bytes()),
            &with_key,
        )
        .await,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.value()["success"], false, "{}", r.text());
    assert_eq!(r.header("x-error-code"), Some("prediction_failed"));
    for _ in 0..2 {
        let r = send(&c, Method::POST, &url, Some(b"{".to_vec()), &with_key).await;
        seen.keep(r).assert_error(400, "invalid_json");
    }
    let metrics = seen.keep(c.get(&stack.app("/metrics")).await).text();
    let count = |code: &str| {
        let series =
            format!(r#"runtime_host_failed_predictions_total{{model="molprop",code="{code}"}} "#);
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(series.as_str()))
            .map(|n| n.trim().parse::<f64>().unwrap())
    };
    assert_eq!(count("prediction_failed"), Some(1.0), "{metrics}");
    assert_eq!(count("invalid_json"), Some(2.0), "{metrics}");
    // The refusals above (the 401s of /predict: 3 on each port) were not: the model never
    // saw them, and a client without the key must not raise the count.
    assert_eq!(count("unauthorized"), None, "{metrics}");

    // Every line of the log is JSON (start-up, warnings, requests alike); the key shows
    // nowhere: not in the log, not in /metrics, not in any answer.
    let log = stack.log();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let parsed: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            parsed["timestamp"].is_string() && parsed["level"].is_string(),
            "{line}"
        );
    }
    assert!(
        log.contains(r#""target":"startup""#),
        "the table's rows are log lines too"
    );
    assert!(!log.contains(KEY), "the key is never logged");
    seen.assert_never_shows(KEY);
}

/// `2026-11-29T02:24:52.105762Z`'s shape.
fn chrono_like(at: &str) -> bool {
    let b = at.as_bytes();
    b.len() >= 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':'
}

/// A key that everybody knows, or none at all, stops `up` before it serves anything.
#[tokio::test(flavor = "multi_thread")]
async fn placeholder_and_empty_keys_are_refused_at_start() {
    let dir = temp_dir();
    let empty = dir.path().join("empty-key");
    std::fs::write(&empty, "\n").unwrap();
    let placeholder = dir.path().join("placeholder-key");
    std::fs::write(&placeholder, "change-me-api-key\n").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--api-key-file", empty.to_str().unwrap()], "is empty"),
        (
            &["--api-key-file", placeholder.to_str().unwrap()],
            "placeholder",
        ),
        (&["--api-key", "change-me"], "placeholder"),
        (
            &["--api-key-file", "/nonexistent/key"],
            "reading /nonexistent/key",
        ),
    ];
    for (args, says) in cases {
        let out = std::process::Command::new(e2e_tests::host_binary())
            .arg("up")
            .args(args)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--app-port", "0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("stack ready"));
    }
}
