//! The same picture and sound model directories under the real Spin: the same answers as
//! runtime-host's for every example, a picture fetched by URL from the host its spin.toml
//! allows, and a host it does not allow refused with the same code.

use super::{b64, examples, serve};
use e2e_tests::served::Served;
use e2e_tests::spin::{SpinApp, spin_or_skip};
use e2e_tests::{Client, component, model_dir, temp_dir};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

/// A spin.toml serving `models` under /models/<name>/ from the ONNX model component, each
/// directory (which Spin wants within the app's own, so copied beside the manifest) mounted
/// at /model, each allowed to reach `allowed`.
fn manifest(models: &[&str], allowed: &str) -> String {
    let mut text = "spin_manifest_version = 2\n\n[application]\nname = \"media\"\n\
                    version = \"1.0.0\"\n"
        .to_owned();
    let quoted = |p: &std::path::Path| serde_json::to_string(&p.display().to_string()).unwrap();
    for name in models {
        text.push_str(&format!(
            "\n[[trigger.http]]\nroute = \"/models/{name}/...\"\ncomponent = \"{name}\"\n\n\
             [component.{name}]\nsource = {}\nfiles = [{{ source = \"{name}\", destination = \"/model\" }}]\n\
             key_value_stores = [\"default\"]\nallowed_outbound_hosts = [\"{allowed}\"]\n",
            quoted(&component("onnx-model")),
        ));
    }
    text
}

/// An answer without what differs between two runs.
fn steady(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("computation_time_ms");
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn picture_and_sound_models_answer_under_spin_as_under_runtime_host() {
    let Some(spin) = spin_or_skip("picture and sound models under Spin") else {
        return;
    };
    let pictures = examples("digits", "image");
    let files: HashMap<String, (&'static str, Vec<u8>)> = HashMap::from([(
        "/digit.png".to_owned(),
        ("image/png", pictures[0].2.clone()),
    )]);
    let served = Served::start(files, Duration::ZERO);
    let work = temp_dir();
    let spin_toml = work.path().join("spin.toml");
    let models = ["digits", "spoken-digits"];
    for name in models {
        e2e_tests::copy_model(&model_dir(name), &work.path().join(name));
    }
    std::fs::write(&spin_toml, manifest(&models, &served.origin())).unwrap();
    let app = SpinApp::up_manifest(&spin, &spin_toml, "unused", "/models/digits/health");
    let c = Client::new();
    for (name, field, input_type) in [
        ("digits", "image", "image"),
        ("spoken-digits", "audio", "audio"),
    ] {
        let data = temp_dir();
        let host = serve(name, data.path(), &[served.origin()]);
        for (example, _, bytes) in examples(name, field) {
            let body = json!({"input_type": input_type, "data": {field: b64(&bytes)}});
            let under_spin = c
                .post_json(&app.url(&format!("/models/{name}/predict")), &body, None)
                .await;
            let here = c.post_json(&host.url("/predict"), &body, None).await;
            assert_eq!(
                under_spin.status,
                200,
                "{name} {example}: {}\n{}",
                under_spin.text(),
                app.log()
            );
            assert_eq!(
                steady(under_spin.value()),
                steady(here.value()),
                "{name} {example}"
            );
        }
        for path in ["/capabilities", "/acceptable_ranges", "/test_examples"] {
            let under_spin = c
                .get(&app.url(&format!("/models/{name}{path}")))
                .await
                .value();
            assert_eq!(
                under_spin,
                c.get(&host.url(path)).await.value(),
                "{name}{path}"
            );
        }
    }
    // By URL: the host spin.toml allows, and one it does not.
    let digits = app.url("/models/digits");
    let by_url = json!({"input_type": "image", "data": {"image_url": served.url("/digit.png")}});
    let r = c
        .post_json(&format!("{digits}/predict"), &by_url, None)
        .await;
    assert_eq!(r.status, 200, "{}\n{}", r.text(), app.log());
    assert_eq!(r.value()["results"]["prediction"], pictures[0].1.as_str());
    assert_eq!(served.hits()["/digit.png"], 1);
    let elsewhere = format!("http://127.0.0.1:{}/digit.png", e2e_tests::free_port());
    let refused = json!({"image_url": elsewhere});
    let r = c
        .post_json(
            &format!("{digits}/predict"),
            &json!({"input_type": "image", "data": refused}),
            None,
        )
        .await;
    r.assert_error(400, "url_not_allowed");
}
