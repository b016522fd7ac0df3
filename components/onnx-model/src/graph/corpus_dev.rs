//! A development check, not part of the test command (tests/tests/models/onnx/corpus.rs is
//! the real one, end to end): every model of a corpus made by tests/python/sklearn_corpus.py,
//! run here natively through the graph code and compared with onnxruntime's answers.
//! `ONNX_CORPUS=DIR [ONLY=name] cargo test -p onnx-model --lib corpus_dev -- --ignored
//! --nocapture`

use super::*;
use crate::inputs::Cell;
use std::collections::BTreeMap;

/// The held-out rows of `dir` as cells, and the reader of their columns.
fn rows(dir: &std::path::Path) -> (Reader, Vec<Vec<Cell>>) {
    let text = std::fs::read_to_string(dir.join("heldout.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let names = header[..header.len() - 1].to_vec();
    let raw: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let mut categories = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        if raw
            .iter()
            .any(|r| !r[i].is_empty() && r[i].parse::<f64>().is_err())
        {
            categories.insert(n.clone(), vec!["(any)".to_owned()]);
        }
    }
    let cells = raw
        .iter()
        .map(|r| {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| match (&r[i], categories.contains_key(n)) {
                    (t, true) => Cell::Text(t.clone()),
                    (t, false) if t.is_empty() => Cell::Missing,
                    (t, false) => Cell::Number(t.parse().unwrap()),
                })
                .collect()
        })
        .collect();
    (Reader::Tabular { names, categories }, cells)
}

#[test]
#[ignore]
fn corpus_dev() {
    let dir = std::path::PathBuf::from(std::env::var("ONNX_CORPUS").expect("ONNX_CORPUS"));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let only = std::env::var("ONLY").ok();
    for name in names {
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let d = dir.join(&name);
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("expected.json")).unwrap()).unwrap();
        let (reader, cells) = rows(&d);
        let first = &expected["rows"][0];
        let reading = match first.get("probabilities") {
            Some(p) => Reading::Scores(p.as_object().unwrap().keys().cloned().collect()),
            None => Reading::Value,
        };
        let bytes = std::fs::read(d.join("model.onnx")).unwrap();
        let graph = match Graph::load(&bytes, &reader, "the CSV", reading.clone()) {
            Ok(g) => g,
            Err(e) => {
                println!("{name}: LOAD FAILED: {}", e.join(" | "));
                continue;
            }
        };
        let refs: Vec<&[Cell]> = cells.iter().map(Vec::as_slice).collect();
        let out = match graph.run_rows(&refs) {
            Ok(o) => o,
            Err(e) => {
                println!("{name}: RUN FAILED: {}", e.lines().next().unwrap_or(""));
                continue;
            }
        };
        let (mut worst, mut worst_abs, mut wrong_labels) = (0f64, 0f64, 0);
        for (i, answer) in out.iter().enumerate() {
            let want = &expected["rows"][i];
            let wanted: Vec<f64> = match &reading {
                Reading::Value => vec![want["value"].as_f64().unwrap()],
                Reading::Classes(labels) | Reading::Scores(labels) => labels
                    .iter()
                    .map(|l| want["probabilities"][l].as_f64().unwrap())
                    .collect(),
            };
            if let Some(wanted) = want["label"].as_str() {
                wrong_labels += usize::from(answer.label.as_deref() != Some(wanted));
            }
            for (g, w) in answer.values.iter().zip(&wanted) {
                worst = worst.max((g - w).abs() / w.abs().max(1e-6));
                worst_abs = worst_abs.max((g - w).abs());
            }
        }
        println!(
            "{name}: ran {} rows, worst relative difference {worst:.2e} (absolute {worst_abs:.2e}), \
             labels differing {wrong_labels}",
            out.len()
        );
    }
}
