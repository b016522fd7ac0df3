//! The scikit-learn corpus (issue 57): 50-odd estimators and pipelines people train, exported
//! with skl2onnx's default options (LightGBM and XGBoost with onnxmltools'), made by the pinned
//! tests/python/sklearn_corpus.py with onnxruntime's answers for their held-out rows. Each gets
//! its manifest from `runtime-host model init`, unedited, is deployed from its directory on
//! the real host, and answers every held-out row over HTTP as onnxruntime does: labels
//! identical, numbers within 1e-5 relative (probabilities, which live in [0, 1], also within
//! four float32 steps of 1 there: 2.4e-7). The table printed says how close each came.

use super::{init_corpus_model, make_corpus, predict, serve};
use e2e_tests::{Client, temp_dir};
use serde_json::{Map, Value, json};
use std::path::Path;

/// How close one model came: rows answered and the worst relative difference.
struct Line {
    name: String,
    deployed: Result<(), String>,
    rows: usize,
    worst: f64,
    worst_absolute: f64,
    mismatches: Vec<String>,
}

/// A held-out CSV as request rows: numbers, `null` for an empty cell, text as strings.
fn rows_of(csv: &str) -> Vec<Map<String, Value>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let features = &header[..header.len() - 1];
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            features
                .iter()
                .zip(&cells)
                .map(|(name, cell)| {
                    let value = match cell.parse::<f64>() {
                        _ if cell.is_empty() => Value::Null,
                        Ok(x) => json!(x),
                        Err(_) => json!(cell),
                    };
                    ((*name).to_owned(), value)
                })
                .collect()
        })
        .collect()
}

/// A probability's slack beside the relative bound: four float32 steps just below 1
/// (2^-24 each). A small probability is often `1 - p` for a `p` near 1, where two correct
/// float32 computations (tract's exact sigmoid, onnxruntime's approximation) can differ by a
/// step or two of `p`, which is a large fraction of `1 - p`.
const PROBABILITY_SLACK: f64 = 4.0 / (1u32 << 24) as f64;

/// Whether `got` is onnxruntime's `want`: within 1e-5 relative, or for a probability also
/// within [`PROBABILITY_SLACK`].
fn close(got: f64, want: f64, probability: bool) -> bool {
    let diff = (got - want).abs();
    diff <= 1e-5 * want.abs().max(got.abs()) || (probability && diff <= PROBABILITY_SLACK)
}

fn relative(got: f64, want: f64) -> f64 {
    let diff = (got - want).abs();
    if diff == 0.0 {
        0.0
    } else {
        diff / want.abs().max(got.abs())
    }
}

/// `model init` for `dir`, then the model served from it and every held-out row compared.
async fn try_model(c: &Client, dir: &Path, data: &Path) -> Line {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let mut line = Line {
        name: name.clone(),
        deployed: Ok(()),
        rows: 0,
        worst: 0.0,
        worst_absolute: 0.0,
        mismatches: Vec::new(),
    };
    if let Err(why) = init_corpus_model(dir) {
        line.deployed = Err(format!("model init: {why}"));
        return line;
    }
    let host = serve(dir, data);
    let health = c.get(&host.url("/health")).await;
    if health.status != 200 {
        line.deployed = Err(format!("/health {}: {}", health.status, health.text()));
        return line;
    }
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let rows = rows_of(&std::fs::read_to_string(dir.join("heldout.csv")).unwrap());
    let reply = predict(c, &host, "tabular", json!({"rows": rows})).await;
    let v = reply.value();
    let items = v["results"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if items.len() != rows.len() {
        line.deployed = Err(format!("a batch of {} rows answered {v}", rows.len()));
        return line;
    }
    for (i, (item, want)) in items
        .iter()
        .zip(expected["rows"].as_array().unwrap())
        .enumerate()
    {
        let got = &item["results"];
        if item["success"] != true {
            line.mismatches.push(format!("row {i}: {item}"));
            continue;
        }
        line.rows += 1;
        // (what, served, onnxruntime's, whether a probability)
        let mut numbers = Vec::new();
        match want.get("value") {
            Some(w) => numbers.push(("value".to_owned(), got["prediction"].as_f64(), w, false)),
            None => {
                if got["prediction"] != want["label"] {
                    line.mismatches.push(format!(
                        "row {i}: label {} where onnxruntime says {}",
                        got["prediction"], want["label"]
                    ));
                }
                // A classifier answering decision scores (an SVC without probabilities, a
                // RidgeClassifier: no predict_proba in scikit-learn) says so, and only it.
                let (field, probability) = match expected["decision_scores"] == true {
                    true => ("decision_scores", false),
                    false => ("probabilities", true),
                };
                if got.get(field).is_none() {
                    line.mismatches
                        .push(format!("row {i}: no `{field}` in {got}"));
                }
                for (label, w) in want["probabilities"].as_object().unwrap() {
                    let g = got[field][label].as_f64();
                    numbers.push((format!("{field}[{label}]"), g, w, probability));
                }
            }
        }
        for (what, g, w, probability) in numbers {
            let w = w.as_f64().unwrap();
            match g {
                Some(g) => {
                    line.worst = line.worst.max(relative(g, w));
                    line.worst_absolute = line.worst_absolute.max((g - w).abs());
                    if !close(g, w, probability) {
                        line.mismatches
                            .push(format!("row {i} {what}: {g} where onnxruntime says {w}"));
                    }
                }
                None => line
                    .mismatches
                    .push(format!("row {i} {what}: no number in {got}")),
            }
        }
    }
    line
}

#[tokio::test(flavor = "multi_thread")]
async fn every_default_scikit_learn_export_answers_as_onnxruntime_does() {
    let Some(python) = e2e_tests::test_python("the scikit-learn corpus") else {
        return;
    };
    let work = temp_dir();
    let corpus = work.path().join("corpus");
    make_corpus(&python, &corpus, &[]);
    let mut dirs: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 40, "{} models in the corpus", dirs.len());

    let c = Client::new();
    let mut lines = Vec::new();
    for dir in &dirs {
        let data = temp_dir();
        lines.push(try_model(&c, dir, data.path()).await);
    }

    // The worst relative difference of any number, and the worst absolute one: a large
    // relative figure with an absolute one of 1e-7 is a probability near 0 computed as 1 - p.
    println!(
        "\n{:<36} {:<9} {:>5} {:>13} {:>13} {:>10}",
        "estimator", "deployed", "rows", "worst (rel.)", "worst (abs.)", "labels"
    );
    for l in &lines {
        let deployed = if l.deployed.is_ok() { "yes" } else { "NO" };
        let wrong = l.mismatches.iter().filter(|m| m.contains("label")).count();
        println!(
            "{:<36} {:<9} {:>5} {:>13.2e} {:>13.2e} {:>10}",
            l.name,
            deployed,
            l.rows,
            l.worst,
            l.worst_absolute,
            if wrong == 0 {
                "identical".to_owned()
            } else {
                format!("{wrong} differ")
            }
        );
    }
    let failed: Vec<String> = lines
        .iter()
        .filter_map(|l| match &l.deployed {
            Err(why) => Some(format!("{}: {why}", l.name)),
            Ok(()) if !l.mismatches.is_empty() => {
                let shown: Vec<&String> = l.mismatches.iter().take(3).collect();
                Some(format!(
                    "{}: {} mismatches, e.g. {shown:?}",
                    l.name,
                    l.mismatches.len()
                ))
            }
            Ok(()) => None,
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} models:\n{}",
        failed.len(),
        lines.len(),
        failed.join("\n")
    );
}
