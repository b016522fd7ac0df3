//! The ONNX model component serving the repository's trained models from mounted directories:
//! the solubility model reproduces its recorded test-set metrics over HTTP and judges its
//! applicability domain; the tabular iris model reads named and ordered features; bad model
//! directories stop `runtime-host model` with the file and field at fault; a default skl2onnx
//! classifier export (ZipMap) answers as scikit-learn does; `check` passes.

mod answers;
mod corpus;
mod refusals;
mod solubility;
mod tabular;
mod zipmap;

use e2e_tests::{Client, Host, HostBuilder, component, model_dir, temp_dir};
use serde_json::{Value, json};
use std::path::Path;

/// `runtime-host serve onnx-model` with `dir` mounted at /model.
pub fn serve(dir: &Path, data: &Path) -> Host {
    HostBuilder::new(component("onnx-model"), data)
        .shared_compile_cache()
        .mount(dir, "/model")
        .start()
}

pub async fn predict(c: &Client, host: &Host, input_type: &str, data: Value) -> e2e_tests::Reply {
    c.post_json(
        &host.url("/predict"),
        &json!({"input_type": input_type, "data": data}),
        None,
    )
    .await
}

/// Rows of a committed tab-separated file of a model directory, header skipped.
pub fn tsv(model: &str, file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(model_dir(model).join(file)).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn check_passes_on_both_onnx_models() {
    for name in ["solubility", "iris"] {
        let data = temp_dir();
        let host = serve(&model_dir(name), data.path());
        let report = e2e_tests::assert_check_passes(host.base_url()).await;
        assert!(report.contains("PASS  B.predict.batch"), "{report}");
    }
}
