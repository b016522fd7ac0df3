//! Schemathesis (target/test-python) against the protocol's own OpenAPI document, MLServer's
//! dataplane.json (taken from its pinned wheel by `cargo xtask test`, never copied here),
//! on molprop served by `runtime-host up`: on its own port, and through the app port's
//! `/v2/models/molprop/...` (where `/v2` and `/v2/health/*` are the host's). Every check it
//! has; the allowances are in tests/schemathesis/oip.toml, each naming the protocol's rule.

use super::oip_document;
use e2e_tests::{Client, Stack, temp_dir, workspace_root};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The document as schemathesis can read it. Its `TensorData` is `oneOf` an array and
/// `{"type": "bytes"}`, which is no OpenAPI type (schemathesis refuses the inference
/// operations for it); the protocol's tensor data in JSON is an array, flat or nested, so
/// that is what the copy says. Nothing else is changed.
fn readable(document: &Path, dir: &Path) -> PathBuf {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(document).unwrap()).unwrap();
    let tensor = &mut doc["components"]["schemas"]["TensorData"];
    assert_eq!(
        tensor["oneOf"][1],
        json!({"type": "bytes"}),
        "the pinned document changed: look again at what this copy fixes"
    );
    *tensor = json!({"title": "TensorData", "type": "array"});
    let copy = dir.join("dataplane.json");
    std::fs::write(&copy, doc.to_string()).unwrap();
    copy
}

/// Runs schemathesis on `document` against `url` with the model `model` at `version`;
/// panics with its report unless it found nothing.
fn fuzz(st: &Path, document: &Path, url: &str, model: &str, version: &str) {
    let work = temp_dir();
    let out = Command::new(st)
        .current_dir(work.path())
        .arg("--config-file")
        .arg(workspace_root().join("tests/schemathesis/oip.toml"))
        .arg("run")
        .arg(document)
        .args(["--url", url, "--checks", "all"])
        .args(["--max-examples", "25", "--seed", "59", "--no-shrink"])
        .args(["--workers", "1", "--output-truncate", "true"])
        .args(["--request-timeout", "120", "--max-response-time", "120"])
        .env("OIP_MODEL", model)
        .env("OIP_MODEL_VERSION", version)
        .env("NO_COLOR", "1")
        .output()
        .expect("running schemathesis");
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "schemathesis found disagreements between the protocol's document and {url}:\n{report}"
    );
    println!(
        "schemathesis on {url}: {}",
        report.lines().last().unwrap_or("")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_protocols_document_and_a_served_model_agree() {
    let Some(document) = oip_document("schemathesis on the protocol's document") else {
        return;
    };
    let Some(python) = e2e_tests::test_python("schemathesis on the protocol's document") else {
        return;
    };
    let st = python.join("bin/st");
    let work = temp_dir();
    let document = readable(&document, work.path());
    let stack = Stack::up(&[], 12);
    let port = stack.model_port("molprop").await;
    let own = format!("http://127.0.0.1:{port}");
    let metadata = Client::new()
        .get(&format!("{own}/v2/models/molprop"))
        .await
        .value();
    let version = metadata["versions"][0]
        .as_str()
        .expect("a version")
        .to_owned();
    found_once(&own, &version).await;
    found_once(&stack.app(""), &version).await;
    let app = stack.app("");
    for url in [own, app] {
        let (st, document, version) = (st.clone(), document.clone(), version.clone());
        tokio::task::spawn_blocking(move || fuzz(&st, &document, &url, "molprop", &version))
            .await
            .unwrap();
    }
}

/// What schemathesis found once, asked directly at `base`: a version percent-encoded in
/// the path is the same version (`sha256%3A...` was 404), a wrong method's 405 says `Allow`
/// (RFC 9110), and the app route's `/v2/models/<name>` itself answers the metadata (it was
/// 404, the path doubled).
async fn found_once(base: &str, version: &str) {
    let c = Client::new();
    let encoded = version.replace(':', "%3A");
    let ready = c
        .get(&format!(
            "{base}/v2/models/molprop/versions/{encoded}/ready"
        ))
        .await;
    assert_eq!(ready.status, 200, "{base}: {}", ready.text());
    let metadata = c.get(&format!("{base}/v2/models/molprop")).await;
    assert_eq!(metadata.status, 200, "{base}: {}", metadata.text());
    assert_eq!(metadata.value()["name"], "molprop");
    let trace = c
        .send(
            hyper::Method::TRACE,
            &format!("{base}/v2/models/molprop"),
            None,
            &[],
        )
        .await;
    assert_eq!(trace.status, 405, "{base}: {}", trace.text());
    assert_eq!(trace.header("allow"), Some("GET"), "{base}");
    assert!(trace.value()["error"].is_string(), "{}", trace.text());
}
