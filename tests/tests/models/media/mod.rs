//! Picture and sound models deployed from a directory with no code (models/digits,
//! models/spoken-digits): their examples answered from base64, the same pictures in other
//! formats and shapes, every kind of bad file refused with its own code, batches with items
//! failing alone, and files fetched by URL within the host's outgoing rules (SSRF into this
//! machine's own services refused).

mod bombs;
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

/// `POST /predict` of `data` as `input_type`: the same component as the tabular models'.
pub use crate::models::onnx::predict;

/// A model's test examples: (name, category, the file's bytes), from its model.toml.
pub use e2e_tests::example_files as examples;

pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Asserts the model at `host` says it takes `kind` (`image` or `audio`), on /capabilities
/// and on /acceptable_ranges; returns the latter, whose `input` says how a file is taken.
pub async fn assert_takes(c: &Client, host: &Host, kind: &str) -> Value {
    let caps = c.get(&host.url("/capabilities")).await.value();
    assert_eq!(caps["capabilities"][0]["input_types"], json!([kind]));
    let ranges = c.get(&host.url("/acceptable_ranges")).await.value();
    assert_eq!(ranges["input"]["type"], kind, "{ranges}");
    ranges
}

/// The prediction of a successful answer.
pub fn prediction(r: &Reply) -> String {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(v["success"], true, "{v}");
    v["results"]["prediction"].as_str().unwrap().to_owned()
}
