//! The documents and the servers agree, as a fuzzer outside this project judges it
//! (issue 45): schemathesis (pinned in tests/schemathesis/requirements.txt, installed by
//! `cargo xtask test` into target/schemathesis) runs every check it has (`--checks all`:
//! valid requests accepted, invalid ones refused, answers as documented) against the
//! registry's, chat's and the model interface's documents and molprop's own
//! `/openapi.json`, each against the real service in the real host. Seeded, so every run
//! sends the same requests. The few allowances (tests/schemathesis/*.toml) are the rules the
//! documents state in prose.

use e2e_tests::chat::{self, TOKEN};
use e2e_tests::{HostBuilder, component, temp_dir, workspace_root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned schemathesis, or `None` (announced loudly) where the test command could not
/// install it; with `E2E_REQUIRE_SCHEMATHESIS=1` (set by `cargo xtask test` once it has it)
/// its absence fails instead.
fn schemathesis() -> Option<PathBuf> {
    let st = workspace_root().join("target/schemathesis/bin/st");
    if st.exists() {
        return Some(st);
    }
    if std::env::var("E2E_REQUIRE_SCHEMATHESIS").is_ok_and(|v| v == "1") {
        panic!(
            "{} is missing, but E2E_REQUIRE_SCHEMATHESIS=1",
            st.display()
        );
    }
    eprintln!(
        "SKIPPED the schemathesis runs: {} is not installed (`cargo xtask test` installs it)",
        st.display()
    );
    None
}

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
        .args(["--output-truncate", "true"])
        .env("NO_COLOR", "1");
    for h in headers {
        cmd.args(["--header", h]);
    }
    let out = cmd.output().expect("running schemathesis");
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "schemathesis found disagreements between {document} and the server:\n{report}"
    );
}

#[test]
fn the_four_documents_and_their_servers_agree() {
    let Some(st) = schemathesis() else {
        return;
    };
    let docs = workspace_root().join("docs/openapi");
    let doc = |name: &str| docs.join(format!("{name}.json")).display().to_string();

    let chat_dir = temp_dir();
    let chat = chat::host(chat_dir.path());
    let auth = format!("Authorization: Bearer {TOKEN}");
    fuzz(&st, &doc("chat"), &chat.base_url(), "chat.toml", &[&auth]);

    let registry_dir = temp_dir();
    let first = e2e_tests::port_block(50);
    let registry = HostBuilder::registry(registry_dir.path())
        .arg("--ports")
        .arg(format!("{first}-{}", first + 49))
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
        .start();
    fuzz(&st, &doc("model"), &molprop.base_url(), "model.toml", &[]);
    let own = molprop.url("/openapi.json");
    fuzz(&st, &own, &molprop.base_url(), "common.toml", &[]);
}
