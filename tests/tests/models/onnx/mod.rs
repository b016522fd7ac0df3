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

/// The scikit-learn corpus models `names` (every one when empty), made in `into` by the
/// pinned tests/python/sklearn_corpus.py with `python`: what it printed (a model per line).
pub fn make_corpus(python: &Path, into: &Path, names: &[&str]) -> String {
    let out = std::process::Command::new(python.join("bin/python"))
        .arg(e2e_tests::workspace_root().join("tests/python/sklearn_corpus.py"))
        .arg(into)
        .args(names)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && !said.contains("NOT EXPORTED"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// `runtime-host model init` of a corpus model's directory, from its graph, training rows
/// and held-out rows; why it failed, if it did.
pub fn init_corpus_model(dir: &Path) -> Result<(), String> {
    let init = std::process::Command::new(e2e_tests::host_binary())
        .args(["model", "init"])
        .arg(dir)
        .arg("--onnx")
        .arg(dir.join("model.onnx"))
        .arg("--training")
        .arg(dir.join("train.csv"))
        .arg("--held-out")
        .arg(dir.join("heldout.csv"))
        .output()
        .unwrap();
    match init.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&init.stderr).trim().to_owned()),
    }
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
