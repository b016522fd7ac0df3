//! The documents and the servers agree, as a fuzzer outside this project judges it
//! (issue 45): schemathesis (pinned in tests/python/requirements.txt, installed by
//! `cargo xtask test` into target/test-python) runs every check it has (`--checks all`:
//! valid requests accepted, invalid ones refused, answers as documented) against the
//! registry's, chat's and the model interface's documents and molprop's and the digits
//! picture model's own `/openapi.json`, each against the real service in the real host. Seeded, so every run
//! sends the same requests. The few allowances (tests/schemathesis/*.toml) are the rules the
//! documents state in prose.

use e2e_tests::chat::{self, TOKEN};
use e2e_tests::{HostBuilder, component, temp_dir, workspace_root};
use std::path::Path;
use std::process::Command;

/// How long a request may take, in the hosts (`--deadline`) and in schemathesis (which
/// otherwise gives up after 10 s and reports a network error). The test command runs many
/// test binaries at once, and a large body (chat's boundary case, a dialog of 10,000
/// messages, 0.6 s alone) runs on the niced batch threads: on a loaded machine it takes
/// much longer (14 s here beside six busy loops; CI reported it as a network error). This
/// test judges the documents, not speed (the benches measure that), so schemathesis' own
/// time limits (10 s a request, 10 s for its response-time check) are raised past the hosts'.
const DEADLINE_S: u64 = 120;

/// Runs schemathesis on `document` (a file or a URL) against `url`; panics with its report
/// unless it found nothing.
fn fuzz(st: &Path, document: &str, url: &str, config: &str, headers: &[&str]) {
    let work = temp_dir();
    let config = workspace_root().join("tests/schemathesis").join(config);
    let mut cmd = Command::new(st);
    cmd.current_dir(work.path())
        .arg("--config-file")
        .arg(&config)
        .args(["run", document, "--url", url, "--checks", "all"])
        .args([
            "--max-examples",
            "25",
            "--seed",
            "45",
            "--no-shrink",
            "--workers",
            "1",
        ])
        .arg("--request-timeout")
        .arg((DEADLINE_S + 30).to_string())
        .arg("--max-response-time")
        .arg((DEADLINE_S + 30).to_string())
        .args(["--output-truncate", "true"])
        .env("NO_COLOR", "1");
    for h in headers {
        cmd.args(["--header", h]);
    }
    let out = cmd.output().expect("running schemathesis");
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    // The document is named after the report too: a log shows the end of a long message.
    assert!(
        out.status.success(),
        "schemathesis found disagreements between {document} and the server:\n{report}\n\
         (above: schemathesis on {document})"
    );
}

fn deadline() -> String {
    format!("{DEADLINE_S}s")
}

#[test]
fn the_four_documents_and_their_servers_agree() {
    let Some(python) = e2e_tests::test_python("the schemathesis runs") else {
        return;
    };
    let st = python.join("bin/st");
    let docs = workspace_root().join("docs/openapi");
    let doc = |name: &str| docs.join(format!("{name}.json")).display().to_string();

    let chat_dir = temp_dir();
    // With the language model, as `up` serves chat: a reply to a dialog it created is written.
    let chat = chat::with_model(chat_dir.path())
        .arg("--deadline")
        .arg(deadline())
        .start();
    let auth = format!("Authorization: Bearer {TOKEN}");
    fuzz(&st, &doc("chat"), &chat.base_url(), "chat.toml", &[&auth]);

    let registry_dir = temp_dir();
    let first = e2e_tests::port_block(50);
    let registry = HostBuilder::registry(registry_dir.path())
        .arg("--ports")
        .arg(format!("{first}-{}", first + 49))
        .arg("--deadline")
        .arg(deadline())
        .start();
    fuzz(
        &st,
        &doc("registry"),
        &registry.base_url(),
        "common.toml",
        &[],
    );

    let model_dir = temp_dir();
    let molprop = HostBuilder::new(component("molprop"), model_dir.path())
        .shared_compile_cache()
        .arg("--deadline")
        .arg(deadline())
        .start();
    fuzz(&st, &doc("model"), &molprop.base_url(), "model.toml", &[]);
    let own = molprop.url("/openapi.json");
    fuzz(&st, &own, &molprop.base_url(), "common.toml", &[]);

    // A picture model's own document: `image` in base64 or `image_url`, batches of either.
    let digits = HostBuilder::new(component("onnx-model"), model_dir.path())
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir("digits"), "/model")
        .arg("--deadline")
        .arg(deadline())
        .start();
    let own = digits.url("/openapi.json");
    fuzz(&st, &own, &digits.base_url(), "media.toml", &[]);
}
