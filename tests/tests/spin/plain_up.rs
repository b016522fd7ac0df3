//! Plain `spin up` (docs/spin.md's first command) in the app's directory, as the README's
//! examples expect it to work after `cargo xtask install-models` (issue 62, item 3): no
//! `--state-dir`, so Spin keeps its state in `.spin/` beside spin.toml (which .gitignore
//! leaves out). The sample dialogs are there (`?id=welcome`), stored by the chat component on
//! the store's first request; minilm answers from the embedding model's files, which Spin
//! reads from `.spin/ai-models/`, linked by install-models to `.data/ai-models/`. A sample
//! dialog deleted stays deleted when Spin starts again on the same state.
//!
//! The app's directory is a copy: spin.toml, and links to the repository's `target/` and
//! `models/`, so the test leaves the checkout as it was.

use e2e_tests::spin::{SpinApp, spin_or_skip};
use e2e_tests::{Client, component, workspace_root};
use serde_json::json;
use std::os::unix::fs::symlink;

const TOKEN: &str = "plain-t0ken";

#[tokio::test(flavor = "multi_thread")]
async fn plain_spin_up_has_the_sample_dialogs_and_minilm() {
    let Some(spin) = spin_or_skip("plain spin up") else {
        return;
    };
    let root = workspace_root();
    let app = e2e_tests::temp_dir();
    let dir = app.path();
    std::fs::copy(root.join("spin.toml"), dir.join("spin.toml")).unwrap();
    let target = component("molprop");
    let target = target
        .ancestors()
        .nth(3)
        .expect("target/wasm32-wasip2/release/x");
    symlink(target, dir.join("target")).unwrap();
    symlink(root.join("models"), dir.join("models")).unwrap();
    // What `cargo xtask install-models` leaves: the files in .data/ai-models, and
    // .spin/ai-models linked to them (crates/xtask/src/spin_app.rs).
    std::fs::create_dir_all(dir.join(".data")).unwrap();
    symlink(e2e_tests::ai_models_dir(), dir.join(".data/ai-models")).unwrap();
    std::fs::create_dir_all(dir.join(".spin")).unwrap();
    symlink("../.data/ai-models", dir.join(".spin/ai-models")).unwrap();

    let variable = format!("chat_admin_token={TOKEN}");
    let args = ["--variable", variable.as_str()];
    let c = Client::new();
    {
        let spin_app = SpinApp::up_plain(&spin, dir, &args);
        let welcome = c.get(&spin_app.url("/api/dialog?id=welcome")).await;
        assert_eq!(welcome.status, 200, "{}", welcome.text());
        assert_eq!(welcome.value()["id"], "welcome");
        let listed = c.get(&spin_app.url("/api/chats")).await.value();
        assert_eq!(listed.as_array().map(Vec::len), Some(3), "{listed}");

        let body = json!({"input_type": "text", "data": {"text": "a plain spin up"}});
        let embedded = c
            .post_json(&spin_app.url("/models/minilm/predict"), &body, None)
            .await;
        assert_eq!(embedded.status, 200, "{}", embedded.text());
        assert_eq!(embedded.value()["success"], true, "{}", embedded.text());

        let auth = format!("Bearer {TOKEN}");
        let deleted = c
            .send(
                hyper::Method::DELETE,
                &spin_app.url("/api/dialog?id=welcome"),
                None,
                &[("authorization", auth.as_str())],
            )
            .await;
        assert_eq!(deleted.status, 200, "{}", deleted.text());
    }
    // Spin's state went to .spin/ in the app's directory, which git ignores.
    assert!(dir.join(".spin").read_dir().unwrap().count() > 1);
    let ignored = std::fs::read_to_string(root.join(".gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l.trim() == ".spin/"), "{ignored}");

    // Again on the same state: the deleted sample stays deleted, the others are there.
    let spin_app = SpinApp::up_plain(&spin, dir, &args);
    let gone = c.get(&spin_app.url("/api/dialog?id=welcome")).await;
    assert_eq!(gone.status, 404, "{}", gone.text());
    let other = c.get(&spin_app.url("/api/dialog?id=logp-question")).await;
    assert_eq!(other.status, 200, "{}", other.text());
}
