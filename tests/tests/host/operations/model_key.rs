//! `runtime-host model --api-key`: the key on the model's own routes, its text log (a hostile
//! request id stays one line there), and the key never passed on to a component.

use super::{KEY, Seen, send};
use e2e_tests::{Client, HostBuilder, component, temp_dir};
use hyper::Method;
use serde_json::json;
use std::time::Duration;

/// `runtime-host model --api-key`: the key on the model's own routes (`POST /shutdown` too),
/// the probe open; the text log's request lines name each request's id, never the key.
#[tokio::test(flavor = "multi_thread")]
async fn model_takes_the_key_and_its_text_log_names_request_ids() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let registry = HostBuilder::registry(rdir.path()).start();
    let mut model = HostBuilder::model(component("molprop"), mdir.path(), &registry.base_url())
        .arg("--allow-shutdown")
        .arg("--api-key")
        .arg(KEY)
        .start();
    let c = Client::new();
    let mut seen = Seen::default();
    assert_eq!(seen.keep(c.get(&model.url("/health")).await).status, 200);
    let body = json!({"input_type": "text", "data": {"text": "CCO"}}).to_string();
    let url = model.url("/predict");
    let r = seen.keep(send(&c, Method::POST, &url, Some(body.clone().into_bytes()), &[]).await);
    r.assert_error(401, "unauthorized");
    let bearer = format!("bearer {KEY}");
    let headers = [
        ("authorization", bearer.as_str()),
        ("x-request-id", "text-log-id-1"),
    ];
    let r = seen.keep(send(&c, Method::POST, &url, Some(body.into_bytes()), &headers).await);
    assert_eq!(r.status, 200, "the scheme in any case: {}", r.text());
    let line = one_line(
        &model.output_with("request_id=text-log-id-1"),
        "text-log-id-1",
    );
    assert!(line.contains(r#"path="/predict" status=200"#), "{line}");

    // An id of visible ASCII with a quote, a backslash and `=` is kept, and quoted in the
    // text line so that it forges no field and the line stays one line.
    let odd = r#"odd"id=2\x"#;
    let r = send(
        &c,
        Method::GET,
        &model.url("/health"),
        None,
        &[("x-request-id", odd)],
    )
    .await;
    assert_eq!(r.header("x-request-id"), Some(odd));
    let logged = r#"request_id="odd\"id=2\\x""#;
    let line = one_line(&model.output_with(logged), logged);
    let fields = fields(line.split_once(" request: ").unwrap().1);
    let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "method",
            "path",
            "status",
            "latency_ms",
            "peer",
            "request_id"
        ],
        "{line}"
    );
    assert_eq!(fields[5].1, odd, "{line}");
    assert_eq!(fields[2].1, "200", "{line}");

    // Shutdown is a model route like any other: refused without the key.
    let r = seen.keep(send(&c, Method::POST, &model.url("/shutdown"), None, &[]).await);
    r.assert_error(401, "unauthorized");
    let shutdown = model.url("/shutdown");
    let r = seen.keep(send(&c, Method::POST, &shutdown, None, &headers[..1]).await);
    assert_eq!(r.status, 200, "{}", r.text());
    let status = model.wait(Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    assert!(!model.output().contains(KEY), "the key is never logged");
    seen.assert_never_shows(KEY);
}

/// A component (the test model `echo-model`'s `GET /headers`) admitted with the key gets
/// neither `Authorization` nor `x-api-key`: the key guards it, and is not its to know.
#[tokio::test(flavor = "multi_thread")]
async fn the_key_never_reaches_the_component() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let registry = HostBuilder::registry(rdir.path()).start();
    let model = HostBuilder::model(component("echo-model"), mdir.path(), &registry.base_url())
        .arg("--api-key")
        .arg(KEY)
        .start();
    let c = Client::new();
    let url = model.url("/headers");
    send(&c, Method::GET, &url, None, &[])
        .await
        .assert_error(401, "unauthorized");
    let bearer = format!("Bearer {KEY}");
    for given in [("authorization", bearer.as_str()), ("x-api-key", KEY)] {
        let extra = ("x-other", "passed-on");
        let r = send(&c, Method::GET, &url, None, &[given, extra]).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let names: Vec<String> = serde_json::from_value(r.value()["headers"].clone()).unwrap();
        assert!(names.iter().any(|n| n == "x-other"), "{names:?}");
        assert!(names.iter().any(|n| n == "x-request-id"), "{names:?}");
        for key_header in ["authorization", "x-api-key"] {
            assert!(
                !names.iter().any(|n| n == key_header),
                "{key_header}: {names:?}"
            );
        }
        assert!(!r.text().contains(KEY));
    }
}

/// The one line of `log` that holds `text`.
fn one_line(log: &str, text: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(text)).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    lines[0].to_owned()
}

/// A text request line's `key=value` fields, a quoted value unescaped (`\"`, `\\`); panics
/// on anything else, so a forged or broken line fails.
fn fields(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once('=')
            .unwrap_or_else(|| panic!("no field: {text}"));
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => {
                let (mut value, mut chars) = (String::new(), quoted.char_indices());
                let end = loop {
                    match chars.next() {
                        Some((_, '\\')) => value.push(chars.next().unwrap().1),
                        Some((i, '"')) => break i + 1,
                        Some((_, c)) => value.push(c),
                        None => panic!("unclosed quote: {text}"),
                    }
                };
                (value, &quoted[end..])
            }
            None => {
                let end = after.find(' ').unwrap_or(after.len());
                (after[..end].to_owned(), &after[end..])
            }
        };
        assert!(!key.contains([' ', '"']), "a bad key {key:?}: {text}");
        out.push((key.to_owned(), value));
        rest = after.strip_prefix(' ').unwrap_or(after);
        assert!(after.is_empty() || after.starts_with(' '), "{text}");
    }
    out
}
