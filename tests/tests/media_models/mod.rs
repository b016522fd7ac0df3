//! Picture and sound models deployed from a directory with no code (models/digits,
//! models/spoken-digits): their examples answered from base64, the same pictures in other
//! formats and shapes, every kind of bad file refused with its own code, batches with items
//! failing alone, and files fetched by URL within the host's outgoing rules (SSRF into this
//! machine's own services refused).

mod digits;
mod refusals;
mod spin;
mod spoken;
mod urls;

use base64::Engine;
use e2e_tests::{Client, Host, HostBuilder, Reply, component, model_dir};
use serde_json::{Value, json};
use std::path::Path;

/// `runtime-host serve onnx-model` with model directory `model` mounted at /model, allowed
/// to reach `allowed` (Spin's `allowed_outbound_hosts` syntax).
pub fn serve(model: &str, data: &Path, allowed: &[String]) -> Host {
    let mut b = HostBuilder::new(component("onnx-model"), data)
        .shared_compile_cache()
        .mount(&model_dir(model), "/model");
    for a in allowed {
        b = b.arg("--allow-outbound").arg(a.clone());
    }
    b.start()
}

/// `POST /predict` of `data` as `input_type`.
pub async fn predict(c: &Client, host: &Host, input_type: &str, data: Value) -> Reply {
    c.post_json(
        &host.url("/predict"),
        &json!({"input_type": input_type, "data": data}),
        None,
    )
    .await
}

/// A model's test examples: (name, category, the file's bytes), from its model.toml.
pub fn examples(model: &str, field: &str) -> Vec<(String, String, Vec<u8>)> {
    let text = std::fs::read_to_string(model_dir(model).join("model.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    manifest["test_examples"]["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(e[field].as_str().unwrap())
                .unwrap();
            let s = |k: &str| e[k].as_str().unwrap().to_owned();
            (s("name"), s("category"), bytes)
        })
        .collect()
}

pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The prediction of a successful answer.
pub fn prediction(r: &Reply) -> String {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(v["success"], true, "{v}");
    v["results"]["prediction"].as_str().unwrap().to_owned()
}
