//! A classifier exported with skl2onnx's default options ends in ZipMap
//! (`tests/data/zipmap-flowers`, made by its make.py): it deploys, and answers scikit-learn's
//! own probabilities labelled as model.toml lists them; labels in another order than the
//! ZipMap's are refused naming both lists.

use super::{predict, serve};
use e2e_tests::{Client, temp_dir, workspace_root};
use serde_json::Value;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    workspace_root().join("tests/data/zipmap-flowers")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_default_classifier_export_answers_scikit_learns_probabilities() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    let data = temp_dir();
    let host = serve(&fixture(), data.path());
    let c = Client::new();
    let features = expected["features"].clone();
    let r = predict(
        &c,
        &host,
        "tabular",
        serde_json::json!({ "features": features }),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let results = &r.value()["results"];
    assert_eq!(results["prediction"], "virginica", "{results}");
    let want = expected["probabilities"].as_object().unwrap();
    let got = results["probabilities"].as_object().expect("probabilities");
    assert_eq!(got.len(), want.len(), "{results}");
    for (label, p) in want {
        let served = got[label].as_f64().unwrap();
        // At the float32 precision the graph computed (scikit-learn's are doubles).
        assert!(
            (served - p.as_f64().unwrap()).abs() <= 1e-6,
            "{label}: {served} vs {p}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn labels_in_another_order_than_the_zipmaps_are_refused() {
    let dir = temp_dir();
    for file in ["model.onnx", "model.toml"] {
        std::fs::copy(fixture().join(file), dir.path().join(file)).unwrap();
    }
    let toml = dir.path().join("model.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let swapped = text.replacen(
        r#"labels = ["setosa", "versicolor", "virginica"]"#,
        r#"labels = ["versicolor", "setosa", "virginica"]"#,
        1,
    );
    assert_ne!(swapped, text, "the fixture lists its labels on one line");
    std::fs::write(&toml, swapped).unwrap();
    let data = temp_dir();
    let host = serve(dir.path(), data.path());
    let e = Client::new()
        .get(&host.url("/health"))
        .await
        .assert_error(503, "not_ready");
    assert!(
        e.error.contains("ZipMap") && e.error.contains("\"versicolor\", \"setosa\""),
        "{}",
        e.error
    );
}
