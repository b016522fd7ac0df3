//! What an answer carries (issue 57 §2), on default scikit-learn exports made by the corpus
//! script with their manifests written by `model init`: a regression on a small quantity
//! (mol/L) answered at the graph's precision and flagged against its reliable range, in single
//! answers and batch items; a pipeline over numbers and text columns reading categories,
//! missing numbers and refusing a number where a category belongs.

use super::{init_corpus_model, make_corpus, predict, serve};
use e2e_tests::{Client, temp_dir};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The corpus models `names`, made in `into`, each with the manifest `model init` writes.
fn made(into: &Path, names: &[&str]) -> Option<Vec<PathBuf>> {
    let python = e2e_tests::test_python("answers of scikit-learn exports")?;
    make_corpus(&python, into, names);
    let dirs: Vec<PathBuf> = names.iter().map(|n| into.join(n)).collect();
    for dir in &dirs {
        init_corpus_model(dir).unwrap_or_else(|why| panic!("model init: {why}"));
    }
    Some(dirs)
}

/// The first held-out row's features, by name, numbers as numbers.
fn first_row(dir: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir.join("heldout.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cells: Vec<&str> = lines.next().unwrap().split(',').collect();
    header[..header.len() - 1]
        .iter()
        .zip(cells)
        .map(|(n, c)| {
            let v = c.parse::<f64>().map_or_else(|_| json!(c), |x| json!(x));
            ((*n).to_owned(), v)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_small_quantity_is_answered_exactly_and_flagged_against_its_reliable_range() {
    let work = temp_dir();
    let Some(dirs) = made(work.path(), &["micromolar_ridge"]) else {
        return;
    };
    let dir = &dirs[0];
    let data = temp_dir();
    let host = serve(dir, data.path());
    let c = Client::new();
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let want = expected["rows"][0]["value"].as_f64().unwrap();
    let row = first_row(dir);
    let one = predict(&c, &host, "tabular", json!({"features": row}))
        .await
        .value();
    let got = one["results"]["prediction"].as_f64().unwrap();
    // A concentration of a few 1e-4 mol/L, to float32's precision (rounding to four
    // decimals once made 0.00020612 read 0.0002).
    assert!(want < 1e-3, "{want}");
    assert!(
        (got - want).abs() <= 1e-6 * want,
        "{got} where onnxruntime says {want}"
    );

    // The reliable range `model init` wrote (the training targets'), and the flag against it:
    // the row, and the row pushed ten times further from the mean in each direction.
    let ranges = c.get(&host.url("/acceptable_ranges")).await.value();
    let property = one["results"]["property_type"].as_str().unwrap().to_owned();
    let reliable = &ranges["property_ranges"][&property]["reliable_range"];
    let (min, max) = (
        reliable["min"].as_f64().unwrap(),
        reliable["max"].as_f64().unwrap(),
    );
    let scaled = |k: f64| -> Value {
        row.iter()
            .map(|(n, v)| (n.clone(), json!(v.as_f64().unwrap() * k)))
            .collect()
    };
    let batch = json!({"rows": [row, scaled(10.0), scaled(-10.0)]});
    let items = predict(&c, &host, "tabular", batch).await.value()["results"]["items"].clone();
    let mut flags = Vec::new();
    for item in items.as_array().unwrap() {
        let r = &item["results"];
        let v = r["prediction"].as_f64().unwrap();
        assert_eq!(r["in_reliable_range"], json!(min <= v && v <= max), "{r}");
        flags.push(r["in_reliable_range"].as_bool().unwrap());
    }
    assert!(flags[0], "a held-out row is inside: {items}");
    assert!(
        flags.contains(&false),
        "a row ten times further is outside: {items}"
    );
    assert_eq!(one["results"]["in_reliable_range"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pipeline_over_numbers_and_text_reads_categories_and_missing_values() {
    let work = temp_dir();
    let Some(dirs) = made(work.path(), &["mixed_logistic"]) else {
        return;
    };
    let dir = &dirs[0];
    let data = temp_dir();
    let host = serve(dir, data.path());
    let c = Client::new();
    let row = first_row(dir);
    let known = predict(&c, &host, "tabular", json!({"features": row}))
        .await
        .value();
    assert_eq!(known["results"]["in_domain"], true, "{known}");
    assert_eq!(known["results"]["input"]["colour"], row["colour"]);

    // A colour never seen in training: answered (the encoder ignores it, as trained), and
    // flagged out of the domain, naming it.
    let mut purple = row.clone();
    purple.insert("colour".into(), json!("purple"));
    let r = predict(&c, &host, "tabular", json!({"features": purple}))
        .await
        .value();
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["results"]["in_domain"], false, "{r}");
    let warning = r["results"]["warning"].as_str().unwrap();
    assert!(
        warning.contains("colour") && warning.contains("purple"),
        "{warning}"
    );

    // A number not measured is `null`: the pipeline's imputer fills it in.
    let mut missing = row.clone();
    let numeric = row.iter().find(|(_, v)| v.is_number()).unwrap().0.clone();
    missing.insert(numeric.clone(), Value::Null);
    let r = predict(&c, &host, "tabular", json!({"features": missing}))
        .await
        .value();
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["results"]["input"][&numeric], Value::Null);

    // A number where a category belongs, and text where a number does: 400 naming the field.
    let mut wrong = row.clone();
    wrong.insert("colour".into(), json!(3));
    let e = predict(&c, &host, "tabular", json!({"features": wrong}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("data.features.colour"), "{}", e.error);
    let mut wrong = row.clone();
    wrong.insert(numeric.clone(), json!("high"));
    let e = predict(&c, &host, "tabular", json!({"features": wrong}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains(&numeric), "{}", e.error);
}
