//! The project's `spin.toml` under the real Spin 4 (`spin up`; issue 47 §1 and §4): every
//! route of the manifest answers from its component, every model passes `runtime-host check`
//! (the same conformance run the native host's models pass), a trained model's evidence and
//! the console's drawings are what runtime-host serves, and the chat API reads and writes with
//! the admin token given as a Spin variable. The same scenario runs on the app as pushed to a
//! local OCI registry and run from its reference in an empty directory, the way Spin apps
//! ship (Fermyon Cloud and SpinKube pull such a reference). Both run with Spin's LLM calls
//! sent to `runtime-host up` (`[llm_compute] type = "remote_http"`, as docs/spin.md tells a
//! deployment to): Spin's own engine has no SmolLM2, and `textgen` is one of the app's models.

use e2e_tests::llm::LlmStack;
use e2e_tests::oci::OciRegistry;
use e2e_tests::spin::{SpinApp, spin_or_skip};
use e2e_tests::{Client, HostBuilder, component, workspace_root};
use serde_json::json;

const TOKEN: &str = "spin-t0ken";

/// The tests of this file take turns: each runs a whole app under Spin and the conformance
/// check, whose `/health` must answer within the spec's 100 ms; three apps starting and
/// checked at once beside the other test binaries took a 2-core machine past that (127 ms).
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What each route of `spin.toml` is probed with: a path under it and the status its
/// component answers (a route a component does not serve would be Spin's own 404).
fn probe(route: &str) -> (String, u16) {
    let base = route.trim_end_matches("/...");
    match route {
        "/..." => ("/".into(), 200),
        "/api/..." => ("/api/chats".into(), 200),
        "/heartbeat/..." | "/unregister/..." => (format!("{base}/5100"), 405),
        "/registry/..." => ("/registry/maintenance/processes".into(), 405),
        "/register" => (route.into(), 405),
        _ if route.starts_with("/models/") => (format!("{base}/health"), 200),
        // The Open Inference Protocol's route by name: the model's metadata.
        _ if route.starts_with("/v2/models/") => (base.into(), 200),
        _ => (route.into(), 200),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_under_spin_serves_every_route_passes_check_and_keeps_chats() {
    let _turn = TURN.lock().await;
    let test = "the app under Spin";
    if spin_or_skip(test).is_none() {
        return;
    }
    let (llm, work) = (LlmStack::up(), e2e_tests::temp_dir());
    let config = llm.spin_config(work.path(), "default");
    let app = SpinApp::up_with(test, TOKEN, Some(&config), &[]).expect("spin was found above");
    serves_every_route_passes_check_and_keeps_chats(&app).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_pushed_to_an_oci_registry_runs_from_its_reference() {
    let _turn = TURN.lock().await;
    let test = "the app from an OCI registry";
    let (Some(spin), Some(registry)) = (spin_or_skip(test), OciRegistry::start(test)) else {
        return;
    };
    let tag = format!("t{}", std::process::id());
    let reference = registry.push_app(&spin, "app", &tag);
    let tags = Client::new()
        .get(&registry.url("/v2/edge/app/tags/list"))
        .await;
    assert!(
        tags.value()["tags"]
            .as_array()
            .unwrap()
            .contains(&json!(tag)),
        "{}",
        tags.text()
    );
    let (llm, work) = (LlmStack::up(), e2e_tests::temp_dir());
    let config = llm.spin_config(work.path(), "default");
    let app = SpinApp::up_from_reference(&spin, &reference, TOKEN, Some(&config));
    serves_every_route_passes_check_and_keeps_chats(&app).await;
}

/// The scenario of this file, on `app` however it was started.
async fn serves_every_route_passes_check_and_keeps_chats(app: &SpinApp) {
    let c = Client::new();
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(workspace_root().join("spin.toml")).unwrap())
            .unwrap();
    let triggers = manifest["trigger"]["http"]
        .as_array()
        .expect("[[trigger.http]]");
    let mut models = Vec::new();
    for trigger in triggers {
        let route = trigger["route"].as_str().unwrap();
        let (path, status) = probe(route);
        let r = c.get(&app.url(&path)).await;
        assert_eq!(
            r.status,
            status,
            "{route} ({path}): {}\n{}",
            r.text(),
            app.log()
        );
        if let Some(name) = route.strip_prefix("/models/") {
            models.push(name.trim_end_matches("/...").to_owned());
        }
    }
    assert!(models.len() >= 4, "{models:?}");

    // Every model conforms, as `runtime-host check` judges a deployment anywhere.
    for name in &models {
        e2e_tests::assert_check_passes(app.url(&format!("/models/{name}"))).await;
    }

    // The same answers as runtime-host's: a trained model's evidence (its test set judged
    // point by point) and the console's drawings.
    let data = e2e_tests::temp_dir();
    let solubility = HostBuilder::new(component("onnx-model"), data.path())
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir("solubility"), "/model")
        .start();
    let here = c.get(&solubility.url("/evidence")).await.value();
    let spin = c.get(&app.url("/models/solubility/evidence")).await.value();
    assert!(
        here["parity"]["points"]
            .as_array()
            .is_some_and(|p| p.len() > 100),
        "{here}"
    );
    assert_eq!(spin["parity"], here["parity"], "the evidence under Spin");
    let console = HostBuilder::new(component("console"), data.path()).start();
    for smiles in ["CC(=O)Oc1ccccc1C(=O)O", "c1ccc2ccccc2c1"] {
        let path = format!(
            "/depict.svg?smiles={}",
            smiles.replace('(', "%28").replace(')', "%29")
        );
        let drawn = c.get(&app.url(&path)).await;
        assert_eq!(drawn.status, 200, "{}", drawn.text());
        assert_eq!(
            drawn.text(),
            c.get(&console.url(&path)).await.text(),
            "{smiles}"
        );
    }

    // Chat: written with the token Spin was given, read back; refused without it.
    let dialog = json!({"chatName": "under spin", "messages": [
        {"role": "user", "content": "Hello from Spin"},
        {"role": "assistant", "content": "Stored in Spin's key-value store"}]});
    let none = c.post_json(&app.url("/api/chats"), &dialog, None).await;
    none.assert_error(401, "unauthorized");
    let made = c
        .post_json(&app.url("/api/chats"), &dialog, Some(TOKEN))
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let id = made.value()["id"].as_str().unwrap().to_owned();
    let read = c
        .get(&app.url(&format!("/api/dialog?id={id}")))
        .await
        .value();
    assert_eq!(
        read["messages"][1]["content"],
        "Stored in Spin's key-value store"
    );
    let listed = c.get(&app.url("/api/chats")).await.value();
    assert!(
        listed.as_array().unwrap().iter().any(|d| d["id"] == id),
        "{listed}"
    );
}

/// The README's faster start for a trained model: `runtime-host snapshot` of the ONNX
/// component with solubility's directory, served by Spin as a component's `source` with no
/// `files`, answers every test example, its evidence and `runtime-host check` exactly as
/// runtime-host serving the same model does.
#[tokio::test(flavor = "multi_thread")]
async fn a_trained_model_from_its_snapshot_answers_under_spin_as_under_runtime_host() {
    let _turn = TURN.lock().await;
    let Some(spin) = spin_or_skip("a snapshot under Spin") else {
        return;
    };
    let work = e2e_tests::temp_dir();
    let snapshot = work.path().join("solubility.wasm");
    let (made, said) = e2e_tests::snapshot(
        &component("onnx-model"),
        Some(&e2e_tests::model_dir("solubility")),
        &snapshot,
        &e2e_tests::shared_cache_dir(),
    );
    assert!(made, "{said}");
    let manifest = work.path().join("spin.toml");
    std::fs::write(
        &manifest,
        format!(
            "spin_manifest_version = 2\n\n[application]\nname = \"solubility\"\n\
             version = \"1.0.0\"\n\n[[trigger.http]]\nroute = \"/...\"\ncomponent = \"model\"\n\n\
             [component.model]\nsource = {}\nkey_value_stores = [\"default\"]\n",
            serde_json::to_string(&snapshot.display().to_string()).unwrap()
        ),
    )
    .unwrap();
    let app = SpinApp::up_manifest(&spin, &manifest, TOKEN, "/health");
    let data = e2e_tests::temp_dir();
    let host = HostBuilder::new(component("onnx-model"), data.path())
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir("solubility"), "/model")
        .start();
    let c = Client::new();
    let examples = c.get(&host.url("/test_examples")).await.value();
    let examples = examples["examples"].as_array().unwrap();
    assert!(!examples.is_empty());
    for example in examples {
        // An example is its input's fields beside its name, description and category.
        let mut data = example.as_object().unwrap().clone();
        for described in ["name", "description", "category"] {
            data.remove(described);
        }
        let body = json!({"input_type": "text", "data": data});
        let mut answers = Vec::new();
        for url in [app.url("/predict"), host.url("/predict")] {
            let mut v = c.post_json(&url, &body, None).await.value();
            v.as_object_mut().unwrap().remove("computation_time_ms");
            answers.push(v);
        }
        assert_eq!(answers[0], answers[1], "{}", example["name"]);
        assert_eq!(answers[0]["success"], true, "{}", answers[0]);
    }
    for path in ["/info", "/capabilities", "/acceptable_ranges", "/evidence"] {
        let spin = c.get(&app.url(path)).await.value();
        assert_eq!(spin, c.get(&host.url(path)).await.value(), "{path}");
    }
    e2e_tests::assert_check_passes(app.url("")).await;
}

/// Plain `spin up` has no SmolLM2 (Spin's own engine finds no model directory for it): the
/// generation model says so at `/health` and `/predict`, 503 `not_ready`, with what to put in
/// Spin's runtime configuration to send its LLM calls to runtime-host, so an operator who
/// forgot it learns the fix from the model itself.
#[tokio::test(flavor = "multi_thread")]
async fn textgen_under_plain_spin_says_how_to_give_spin_the_model() {
    let _turn = TURN.lock().await;
    let Some(spin) = spin_or_skip("textgen under plain Spin") else {
        return;
    };
    let work = e2e_tests::temp_dir();
    let manifest = work.path().join("spin.toml");
    std::fs::write(
        &manifest,
        format!(
            "spin_manifest_version = 2\n\n[application]\nname = \"textgen\"\n\
             version = \"1.0.0\"\n\n[[trigger.http]]\nroute = \"/...\"\ncomponent = \"model\"\n\n\
             [component.model]\nsource = {}\nkey_value_stores = [\"default\"]\n\
             ai_models = [{:?}]\n",
            serde_json::to_string(&component("textgen").display().to_string()).unwrap(),
            e2e_tests::llm::LM,
        ),
    )
    .unwrap();
    let app = SpinApp::up_manifest(&spin, &manifest, TOKEN, "/info");
    let c = Client::new();
    let health = c.get(&app.url("/health")).await;
    let predict = c
        .post_json(
            &app.url("/predict"),
            &json!({"input_type": "text", "data": {"text": "Hi", "max_tokens": 4}}),
            None,
        )
        .await;
    for r in [health, predict] {
        let e = r.assert_error(503, "not_ready");
        for said in [
            "no model directory",
            "[llm_compute]",
            "type = \"remote_http\"",
        ] {
            assert!(e.error.contains(said), "{said}: {}\n{}", e.error, app.log());
        }
    }
}
