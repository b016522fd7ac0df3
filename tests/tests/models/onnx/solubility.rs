//! The solubility model: its recorded test-set metrics over HTTP, its applicability domain,
//! and the same predictions from code Cranelift took from the functions it compiled for
//! another model.

use super::{predict, serve, tsv};
use e2e_tests::{Client, HostBuilder, component, model_dir, temp_dir};
use serde_json::json;
use std::path::Path;

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
        // Flagged against the reliable range of /acceptable_ranges, -7.52 to 0.82.
        assert_eq!(
            v["results"]["in_reliable_range"],
            json!((-7.52..=0.82).contains(&predicted)),
            "{name}: {v}"
        );
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
    // check uses, split at its threshold as the training report counts (models/solubility/REPORT.md).
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
    // Values and bounds at full precision: the bounds exactly the manifest's, the value as
    // computed (a value just outside its range never prints as inside it).
    let manifest: toml::Table = toml::from_str(
        &std::fs::read_to_string(model_dir("solubility").join("model.toml")).unwrap(),
    )
    .unwrap();
    let bounds = &manifest["applicability_domain"]["descriptor_ranges"];
    for o in outside {
        let name = o["name"].as_str().unwrap();
        let (min, max, value) = (
            o["training_min"].as_f64().unwrap(),
            o["training_max"].as_f64().unwrap(),
            o["value"].as_f64().unwrap(),
        );
        assert_eq!(min, bounds[name]["min"].as_float().unwrap(), "{o}");
        assert_eq!(max, bounds[name]["max"].as_float().unwrap(), "{o}");
        assert!(value < min || value > max, "{o}");
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

/// `runtime-host prepare` of the ONNX component with model directory `model`, into `cache`:
/// what it said.
fn run_prepare_command(model: &str, cache: &Path) -> String {
    let data = temp_dir();
    let mut prepare = std::process::Command::new(e2e_tests::host_binary());
    prepare
        .arg("prepare")
        .arg(component("onnx-model"))
        .arg("--cache-dir")
        .arg(cache)
        .arg("--data-dir")
        .arg(data.path())
        .arg("--dir")
        .arg(format!("{}:/model", model_dir(model).display()))
        .env("RUNTIME_HOST_LOG", "info");
    let out = tokio::task::block_in_place(|| prepare.output()).unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    said
}

/// (found, of) in each "N of M functions from the cache of compiled functions" line.
fn functions_reused(said: &str) -> Vec<(u64, u64)> {
    const SAID: &str = " functions from the cache of compiled functions";
    let lines: Vec<&str> = said.lines().filter(|l| l.contains(SAID)).collect();
    lines
        .iter()
        .map(|l| {
            let parsed = (|| {
                let (_, rest) = l.split_once(" INFO ")?;
                let (_, rest) = rest.split_once(": ")?;
                let (found, rest) = rest.split_once(" of ")?;
                let (of, _) = rest.split_once(SAID)?;
                Some((found.trim().parse().ok()?, of.trim().parse().ok()?))
            })();
            parsed.unwrap_or_else(|| panic!("not the line expected: {l}"))
        })
        .collect()
}

/// Every ONNX model's snapshot has the ONNX component's code, so Cranelift takes the second
/// model's functions from those it compiled for the first (host-core's
/// runtime/function_cache.rs); the code so made predicts what onnxruntime predicted.
#[tokio::test(flavor = "multi_thread")]
async fn a_second_models_snapshot_takes_its_functions_from_the_first_and_predicts_alike() {
    let work = temp_dir();
    let cache = work.path().join("cache");
    let first = functions_reused(&run_prepare_command("iris", &cache));
    // The component instrumented for the initialization, into an empty cache (a function the
    // component has several times over is compiled once); then the snapshot, most of whose
    // code is the same (wizer changes the data and globals some functions use).
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(first[0].0 * 2 < first[0].1, "an empty cache: {first:?}");
    assert!(first[1].0 * 2 >= first[1].1, "{first:?}");
    println!("iris: {first:?} (instrumented component, snapshot)");
    let second = functions_reused(&run_prepare_command("solubility", &cache));
    assert_eq!(second.len(), 1, "only the snapshot is compiled: {second:?}");
    let (found, of) = second[0];
    assert!(found * 10 >= of * 9 && of > 1000, "{second:?}");
    println!("solubility's snapshot: {found} of {of} functions from the cache");

    let data = temp_dir();
    let host = HostBuilder::new(component("onnx-model"), data.path())
        .env("RUNTIME_HOST_CACHE_DIR", &cache.display().to_string())
        .mount(&model_dir("solubility"), "/model")
        .start();
    assert!(
        !host.output().contains("Winch"),
        "served from the code prepare cached: {}",
        host.output()
    );
    let c = Client::new();
    for (name, smiles, _, reference) in solubility_test_set() {
        let r = predict(&c, &host, "text", json!({"text": smiles})).await;
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let predicted = r.value()["results"]["prediction"].as_f64().unwrap();
        assert!(
            (predicted - reference).abs() < 5e-4,
            "{name}: served {predicted}, onnxruntime {reference}"
        );
    }
}
