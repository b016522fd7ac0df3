//! The ONNX model component serving the repository's trained models from mounted directories:
//! the solubility model reproduces its recorded test-set metrics over HTTP and judges its
//! applicability domain; the tabular iris model reads named and ordered features; bad model
//! directories stop `runtime-host model` with the file and field at fault; `check` passes.

use e2e_tests::{Client, Host, HostBuilder, component, model_dir, temp_dir};
use serde_json::{Value, json};
use std::path::Path;

/// `runtime-host serve onnx-model` with `dir` mounted at /model.
fn serve(dir: &Path, data: &Path) -> Host {
    HostBuilder::new(component("onnx-model"), data)
        .shared_compile_cache()
        .mount(dir, "/model")
        .start()
}

async fn predict(c: &Client, host: &Host, input_type: &str, data: Value) -> e2e_tests::Reply {
    c.post_json(
        &host.url("/predict"),
        &json!({"input_type": input_type, "data": data}),
        None,
    )
    .await
}

/// Rows of a committed tab-separated file of a model directory, header skipped.
fn tsv(model: &str, file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(model_dir(model).join(file)).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

/// (name, SMILES, measured logS, onnxruntime's prediction) of the committed test file.
fn solubility_test_set() -> Vec<(String, String, f64, f64)> {
    tsv("solubility", "test_set.tsv")
        .into_iter()
        .map(|f| {
            let num = |i: usize| f[i].parse::<f64>().unwrap();
            (f[0].clone(), f[1].clone(), num(2), num(3))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn solubility_model_reproduces_its_recorded_test_set_metrics() {
    let data = temp_dir();
    let host = serve(&model_dir("solubility"), data.path());
    let c = Client::new();
    let ranges = c.get(&host.url("/acceptable_ranges")).await.value();
    let recorded = &ranges["property_ranges"]["logS"]["validation_metrics"];
    let test_set = solubility_test_set();
    assert_eq!(recorded["test_samples"], json!(test_set.len()));

    let (mut sq, mut abs, mut sum) = (0.0, 0.0, 0.0);
    let mut served = std::collections::BTreeMap::new();
    for (name, smiles, measured, reference) in &test_set {
        let r = predict(&c, &host, "text", json!({"text": smiles})).await;
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let v = r.value();
        assert_eq!(v["success"], true, "{name}: {v}");
        let predicted = v["results"]["prediction"].as_f64().unwrap();
        served.insert(name.clone(), v["results"].clone());
        // Our featurizer, tract and our forest kernel give what onnxruntime gave in training.
        assert!(
            (predicted - reference).abs() < 5e-4,
            "{name}: served {predicted}, onnxruntime {reference}"
        );
        sq += (predicted - measured).powi(2);
        abs += (predicted - measured).abs();
        sum += measured;
    }
    let n = test_set.len() as f64;
    let mean = sum / n;
    let total: f64 = test_set.iter().map(|(_, _, y, _)| (y - mean).powi(2)).sum();
    let (rmse, mae, r2) = ((sq / n).sqrt(), abs / n, 1.0 - sq / total);
    println!("served model on {n} test molecules: RMSE {rmse:.4}, MAE {mae:.4}, R2 {r2:.4}");
    let close = |served: f64, key: &str| {
        let want = recorded[key]
            .as_f64()
            .or_else(|| recorded[key].as_str().and_then(|s| s.parse().ok()))
            .unwrap_or_else(|| panic!("{key} recorded: {recorded}"));
        assert!(
            (served - want).abs() < 2e-3,
            "{key}: served {served:.4}, recorded {want}"
        );
    };
    close(rmse, "RMSE");
    close(mae, "MAE");
    close(r2, "R2");
    // The accuracy bar, and better than the ESOL equation on the same molecules.
    assert!(rmse <= 0.70 && r2 >= 0.88, "RMSE {rmse}, R2 {r2}");
    assert!(rmse < recorded["ESOL_RMSE"].as_f64().unwrap());
    let size = std::fs::metadata(model_dir("solubility").join("model.onnx"))
        .unwrap()
        .len();
    assert!(size < 5 << 20, "model.onnx is {size} bytes");

    // GET /evidence: the same test set judged by the model itself, point by point what
    // /predict answered, with the same figures; residuals against the similarity the domain
    // check uses, split at its threshold as the training report counts (REPORT.md).
    let evidence = c.get(&host.url("/evidence")).await.value();
    let parity = &evidence["parity"];
    let points = parity["points"].as_array().unwrap();
    assert_eq!(points.len(), test_set.len());
    for p in points {
        let answer = &served[p["name"].as_str().unwrap()];
        assert_eq!(p["predicted"], answer["prediction"], "{p}");
    }
    for (key, value) in [("rmse", rmse), ("mae", mae), ("r2", r2)] {
        let shown = parity[key].as_f64().unwrap();
        assert!((shown - value).abs() < 1e-3, "{key}: {shown} vs {value}");
    }
    let residuals = &evidence["residuals"];
    assert_eq!(residuals["threshold"], 0.3);
    let inside = residuals["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            let answer = &served[p["name"].as_str().unwrap()];
            assert_eq!(
                p["similarity"],
                answer["applicability_domain"]["nearest_training_similarity"]
            );
            p["similarity"].as_f64().unwrap() >= 0.3
        })
        .count();
    let report = std::fs::read_to_string(model_dir("solubility").join("REPORT.md")).unwrap();
    assert!(
        report.contains(&format!("{inside} test molecules inside")),
        "{inside} inside the domain, as REPORT.md says"
    );
    assert!(evidence.get("confusion").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn solubility_predictions_carry_their_applicability_domain() {
    let data = temp_dir();
    let host = serve(&model_dir("solubility"), data.path());
    let c = Client::new();

    // A training molecule: its nearest neighbour is itself.
    let r = predict(&c, &host, "text", json!({"smiles": "c1ccc2ccccc2c1"})).await;
    let v = r.value();
    let res = &v["results"];
    assert_eq!(res["in_domain"], true, "{v}");
    assert_eq!(
        res["applicability_domain"]["nearest_training_similarity"],
        1.0
    );
    assert!(res.get("warning").is_none(), "{v}");
    assert_eq!(res["unit"], "log10(mol/L)");
    assert_eq!(res["input"], "c1ccc2ccccc2c1");

    // An inorganic salt: unlike anything in training, descriptors outside their ranges.
    let r = predict(
        &c,
        &host,
        "text",
        json!({"text": "[Fe+3].[Cl-].[Cl-].[Cl-]"}),
    )
    .await;
    let v = r.value();
    let res = &v["results"];
    assert_eq!(res["in_domain"], false, "{v}");
    let warning = res["warning"].as_str().unwrap();
    assert!(
        warning.contains("Tanimoto") && warning.contains("below 0.3"),
        "{warning}"
    );
    let outside = res["applicability_domain"]["descriptors_outside_training_range"]
        .as_array()
        .unwrap();
    assert!(outside.iter().any(|o| o["name"] == "logp"), "{v}");
    // Figures are rounded to 4 decimals, like every other figure of the answer.
    for o in outside {
        for key in ["value", "training_min", "training_max"] {
            let x = o[key].as_f64().unwrap();
            assert!(
                ((x * 1e4).round() / 1e4 - x).abs() < 1e-9,
                "{key} {x} unrounded"
            );
        }
    }

    // /acceptable_ranges states the rule with its threshold.
    let ranges = c.get(&host.url("/acceptable_ranges")).await.value();
    let usage = ranges["usage_recommendations"].to_string();
    assert!(usage.contains("Tanimoto similarity >= 0.3"), "{usage}");

    // Bad requests: 400 naming the field; an unreadable SMILES is a failed prediction.
    predict(&c, &host, "text", json!({"text": 42}))
        .await
        .assert_error(400, "invalid_field");
    predict(&c, &host, "text", json!({"molecule": "CCO"}))
        .await
        .assert_error(400, "invalid_field");
    predict(&c, &host, "tabular", json!({"features": [1]}))
        .await
        .assert_error(400, "unsupported_input_type");
    let r = predict(&c, &host, "text", json!({"text": "C1CC"})).await;
    assert_eq!(r.status, 200);
    let v = r.value();
    assert_eq!(v["success"], false);
    assert!(
        v["error_message"]
            .as_str()
            .unwrap()
            .contains("invalid SMILES")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tabular_model_reads_named_or_ordered_features() {
    let data = temp_dir();
    let host = serve(&model_dir("iris"), data.path());
    let c = Client::new();
    let caps = c.get(&host.url("/capabilities")).await.value();
    assert_eq!(caps["capabilities"][0]["input_types"], json!(["tabular"]));

    let named = json!({"features": {"sepal_length_cm": 6.3, "sepal_width_cm": 3.3,
                                    "petal_length_cm": 6.0, "petal_width_cm": 2.5}});
    let by_name = predict(&c, &host, "tabular", named).await.value();
    let ordered = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [6.3, 3.3, 6.0, 2.5]}),
    )
    .await
    .value();
    let res = &by_name["results"];
    assert_eq!(res["prediction"], "virginica", "{by_name}");
    assert_eq!(ordered["results"]["probabilities"], res["probabilities"]);
    let p: f64 = ["setosa", "versicolor", "virginica"]
        .iter()
        .map(|l| res["probabilities"][l].as_f64().unwrap())
        .sum();
    assert!((p - 1.0).abs() < 1e-3, "probabilities sum to {p}");
    assert_eq!(res["in_domain"], true);
    assert_eq!(res["input"]["sepal_length_cm"], 6.3);
    // A finite number beyond the model's 32-bit floats is named as such.
    let huge = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [1e308, 3.3, 6.0, 2.5]}),
    )
    .await;
    let e = huge.assert_error(400, "invalid_field");
    assert!(e.error.contains("32-bit"), "{}", e.error);

    let setosa = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [5.1, 3.5, 1.4, 0.2]}),
    )
    .await;
    assert_eq!(setosa.value()["results"]["prediction"], "setosa");

    // A flower ten times too large is answered, and flagged.
    let huge = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [51, 3.5, 1.4, 0.2]}),
    )
    .await;
    let v = huge.value();
    assert_eq!(v["results"]["in_domain"], false);
    assert!(
        v["results"]["warning"]
            .as_str()
            .unwrap()
            .contains("sepal_length_cm")
    );

    let missing = json!({"features": {"sepal_length_cm": 6.3, "sepal_width_cm": 3.3,
                                      "petal_length_cm": 6.0}});
    let e = predict(&c, &host, "tabular", missing)
        .await
        .assert_error(400, "missing_field");
    assert!(
        e.error.contains("data.features.petal_width_cm"),
        "{}",
        e.error
    );
    let wrong_type = json!({"features": {"sepal_length_cm": "6.3", "sepal_width_cm": 3.3,
                                         "petal_length_cm": 6.0, "petal_width_cm": 2.5}});
    let e = predict(&c, &host, "tabular", wrong_type)
        .await
        .assert_error(400, "invalid_field");
    assert!(
        e.error.contains("data.features.sepal_length_cm"),
        "{}",
        e.error
    );
    let e = predict(&c, &host, "tabular", json!({"features": [1, 2, 3]}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("has 3 values"), "{}", e.error);
    let e = predict(&c, &host, "tabular", json!({"features": {"colour": 1}}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("data.features.colour"), "{}", e.error);
    predict(&c, &host, "tabular", json!({}))
        .await
        .assert_error(400, "missing_field");
}

#[tokio::test(flavor = "multi_thread")]
async fn classifier_reproduces_onnxruntime_on_the_held_out_flowers() {
    let data = temp_dir();
    let host = serve(&model_dir("iris"), data.path());
    let c = Client::new();
    let labels = ["setosa", "versicolor", "virginica"];
    let rows = tsv("iris", "heldout.tsv");
    let mut correct = 0;
    for row in &rows {
        let features: Vec<f64> = row[..4].iter().map(|v| v.parse().unwrap()).collect();
        let v = predict(&c, &host, "tabular", json!({ "features": features }))
            .await
            .value();
        let res = &v["results"];
        for (i, label) in labels.iter().enumerate() {
            let served = res["probabilities"][label].as_f64().unwrap();
            let reference: f64 = row[5 + i].parse().unwrap();
            assert!(
                (served - reference).abs() < 1e-4,
                "{row:?}: {label} served {served}, onnxruntime {reference}"
            );
        }
        if res["prediction"] == row[4].as_str() {
            correct += 1;
        }
    }
    // The accuracy /acceptable_ranges reports is the one served.
    let ranges = c.get(&host.url("/acceptable_ranges")).await.value();
    let recorded = ranges["property_ranges"]["petal_length_cm"]["validation_metrics"]["accuracy"]
        .as_f64()
        .unwrap();
    let served = f64::from(correct) / rows.len() as f64;
    assert!(
        (served - recorded).abs() < 1e-3,
        "served {served}, recorded {recorded}"
    );
    // GET /evidence: the confusion matrix of the same flowers.
    let evidence = c.get(&host.url("/evidence")).await.value();
    let confusion = &evidence["confusion"];
    assert_eq!(confusion["labels"], json!(labels));
    let counts: Vec<Vec<u64>> = serde_json::from_value(confusion["counts"].clone()).unwrap();
    let total: u64 = counts.iter().flatten().sum();
    let diagonal: u64 = (0..3).map(|i| counts[i][i]).sum();
    assert_eq!(total as usize, rows.len());
    assert_eq!(diagonal, correct as u64);
    for (i, label) in labels.iter().enumerate() {
        let truly: u64 = counts[i].iter().sum();
        let expected = rows.iter().filter(|r| r[4] == *label).count() as u64;
        assert_eq!(
            truly, expected,
            "row {label} counts the flowers that are {label}"
        );
    }
    assert!((confusion["accuracy"].as_f64().unwrap() - served).abs() < 1e-3);
    assert!(evidence.get("parity").is_none());
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
    assert!(said.contains("/model/model.onnx"), "{said}");

    let no_license = broken_iris(|d| edit_manifest(d, "license = \"MIT\"\n", ""));
    let said = refused_model(no_license.path());
    assert!(
        said.contains("/model/model.toml") && said.contains("`license`"),
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
        said.contains("/model/model.onnx") && said.contains("not a model tract can read"),
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
async fn under_serve_a_bad_model_directory_answers_503_with_the_reason() {
    let no_onnx = broken_iris(|d| std::fs::remove_file(d.join("model.onnx")).unwrap());
    let data = temp_dir();
    let host = serve(no_onnx.path(), data.path());
    let c = Client::new();
    let e = c
        .get(&host.url("/health"))
        .await
        .assert_error(503, "not_ready");
    assert!(e.error.contains("/model/model.onnx"), "{}", e.error);
    c.get(&host.url("/info"))
        .await
        .assert_error(503, "not_ready");
    c.get(&host.url("/nowhere"))
        .await
        .assert_error(404, "not_found");
}
