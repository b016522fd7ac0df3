//! Bad model directories: `runtime-host model` refuses them naming the file and field at
//! fault (a manifest's problems and a missing file found by the host before it compiles
//! anything, named by their host paths; a graph's by the component, by its guest path);
//! under `serve`, a graph that cannot load is answered 503 with the reason.

use super::serve;
use e2e_tests::{Client, component, model_dir, temp_dir};
use std::path::Path;

/// A copy of a model directory with `edit` applied to it.
fn broken(model: &str, edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = temp_dir();
    for entry in std::fs::read_dir(model_dir(model)).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    edit(dir.path());
    dir
}

fn broken_iris(edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    broken("iris", edit)
}

fn edit_manifest(dir: &Path, from: &str, to: &str) {
    let path = dir.join("model.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "the manifest holds `{from}`");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// `runtime-host model` on `dir` must refuse to start; returns what it said.
fn refused_model(dir: &Path) -> String {
    refused_model_with(dir, &[])
}

fn refused_model_with(dir: &Path, extra: &[&str]) -> String {
    let data = temp_dir();
    let out = std::process::Command::new(e2e_tests::host_binary())
        .arg("model")
        .arg(component("onnx-model"))
        .args(["--registry", "http://127.0.0.1:9", "--data-dir"])
        .arg(data.path())
        .arg("--dir")
        .arg(format!("{}:/model", dir.display()))
        .args(extra)
        .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "started on a broken model directory:\n{said}"
    );
    said
}

#[test]
fn bad_model_directories_are_refused_naming_the_file_and_field() {
    let no_onnx = broken_iris(|d| std::fs::remove_file(d.join("model.onnx")).unwrap());
    let said = refused_model(no_onnx.path());
    let onnx = no_onnx.path().join("model.onnx");
    assert!(said.contains(&onnx.display().to_string()), "{said}");

    let no_license = broken_iris(|d| edit_manifest(d, "license = \"MIT\"\n", ""));
    let said = refused_model(no_license.path());
    let toml = no_license.path().join("model.toml");
    assert!(
        said.contains(&toml.display().to_string()) && said.contains("`license`"),
        "{said}"
    );

    let wrong_type =
        broken_iris(|d| edit_manifest(d, "training_samples = 112", "training_samples = \"many\""));
    let said = refused_model(wrong_type.path());
    assert!(
        said.contains("model.toml") && said.contains("invalid type"),
        "{said}"
    );
    assert!(said.contains("training_samples"), "{said}");

    // A field the manifest does not define is refused, not ignored (a misspelt optional
    // field would otherwise silently fall back to its default).
    let extra = broken_iris(|d| edit_manifest(d, "[output]\n", "[output]\ncolour = \"blue\"\n"));
    let said = refused_model(extra.path());
    assert!(said.contains("unknown field `colour`"), "{said}");

    // Not an ONNX graph at all.
    let garbage = broken_iris(|d| std::fs::write(d.join("model.onnx"), b"not a graph").unwrap());
    let said = refused_model(garbage.path());
    assert!(
        said.contains("/model/model.onnx") && said.contains("not an ONNX model"),
        "{said}"
    );

    // A graph using an operator this component does not run: refused at deploy time,
    // naming the operator and the node (the op type renamed in place, same length, so the
    // protobuf stays well formed; the node's name too, which repeats it).
    let unknown_op = broken_iris(|d| {
        let file = d.join("model.onnx");
        let bytes = std::fs::read(&file).unwrap();
        let (from, to) = (
            &b"TreeEnsembleClassifier"[..],
            &b"TreeEnsembleMadeUpName"[..],
        );
        let mut edited = bytes.clone();
        let mut found = 0;
        for at in 0..=bytes.len() - from.len() {
            if &bytes[at..at + from.len()] == from {
                edited[at..at + from.len()].copy_from_slice(to);
                found += 1;
            }
        }
        assert!(found > 0, "the graph names its operator");
        std::fs::write(&file, edited).unwrap();
    });
    let said = refused_model(unknown_op.path());
    assert!(
        said.contains("/model/model.onnx")
            && said.contains("operator `TreeEnsembleMadeUpName`")
            && said.contains("not supported"),
        "{said}"
    );

    // Training fingerprints cut short.
    let short = broken("solubility", |d| {
        let file = d.join("training_fingerprints.bin");
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
    });
    let said = refused_model(short.path());
    assert!(
        said.contains("training_fingerprints.bin") && said.contains("not a whole number"),
        "{said}"
    );

    // A featurizer of 1024 bits for a graph trained on 2048.
    let shape = broken("solubility", |d| {
        edit_manifest(d, "morgan_bits = 2048", "morgan_bits = 1024")
    });
    let said = refused_model(shape.path());
    assert!(
        said.contains("model.onnx") && said.contains("takes 2060 values per row"),
        "{said}"
    );
    assert!(said.contains("gives 1036"), "{said}");
}

#[test]
fn a_model_larger_than_the_memory_cap_is_refused_with_what_to_raise() {
    let said = refused_model_with(&model_dir("solubility"), &["--max-memory-mib", "4"]);
    assert!(said.contains("memory limit"), "{said}");
    assert!(said.contains("raise --max-memory-mib"), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn under_serve_a_graph_that_cannot_load_answers_503_with_the_reason() {
    // What the host's check before start-up cannot see: the graph itself.
    let garbage = broken_iris(|d| std::fs::write(d.join("model.onnx"), b"not a graph").unwrap());
    let data = temp_dir();
    let host = serve(garbage.path(), data.path());
    let c = Client::new();
    let e = c
        .get(&host.url("/health"))
        .await
        .assert_error(503, "not_ready");
    assert!(e.error.contains("/model/model.onnx"), "{}", e.error);
    let body =
        serde_json::json!({"input_type": "tabular", "data": {"features": [5.1, 3.5, 1.4, 0.2]}});
    let e = c
        .post_json(&host.url("/predict"), &body, None)
        .await
        .assert_error(503, "not_ready");
    assert!(e.error.contains("not an ONNX model"), "{}", e.error);
    // The descriptions come from the manifest, which is sound (the graph is loaded only by
    // what runs it, so that Spin's instance per request answers them without loading it).
    assert_eq!(c.get(&host.url("/info")).await.status, 200);
    c.get(&host.url("/nowhere"))
        .await
        .assert_error(404, "not_found");
}
