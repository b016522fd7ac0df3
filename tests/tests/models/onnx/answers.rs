//! What an answer carries (issue 57 §2), on default scikit-learn exports made by the corpus
//! script with their manifests written by `model init`: a regression on a small quantity
//! (mol/L) answered at the graph's precision and flagged against its reliable range, in single
//! answers and batch items; a pipeline over numbers and text columns reading categories,
//! missing numbers and refusing a number where a category belongs.

use super::{init_corpus_model, make_corpus, predict, serve};
use e2e_tests::{Client, Host, temp_dir};
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

/// A corpus model made, described by `model init` and served; its directories live as long
/// as it does.
struct Served {
    dir: PathBuf,
    host: Host,
    c: Client,
    _work: tempfile::TempDir,
    _data: tempfile::TempDir,
}

/// The corpus model `name`, served (none when the tests' Python tools are missing).
fn served(name: &str) -> Option<Served> {
    let work = temp_dir();
    let dir = made(work.path(), &[name])?.remove(0);
    let data = temp_dir();
    let host = serve(&dir, data.path());
    Some(Served {
        dir,
        host,
        c: Client::new(),
        _work: work,
        _data: data,
    })
}

/// The first held-out row's features, by name, numbers as numbers.
fn first_row(dir: &Path) -> serde_json::Map<String, Value> {
    nth_row(dir, 0)
}

/// Held-out row `n`'s features, by name, numbers as numbers.
fn nth_row(dir: &Path, n: usize) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir.join("heldout.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cells: Vec<&str> = lines.nth(n).unwrap().split(',').collect();
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
    // Whole: its directories are deleted when it goes.
    let Some(model) = served("micromolar_ridge") else {
        return;
    };
    let (dir, host, c) = (&model.dir, &model.host, &model.c);
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let want = expected["rows"][0]["value"].as_f64().unwrap();
    let row = first_row(dir);
    let one = predict(c, host, "tabular", json!({"features": row}))
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
    let items = predict(c, host, "tabular", batch).await.value()["results"]["items"].clone();
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
    // Whole: its directories are deleted when it goes.
    let Some(model) = served("mixed_logistic") else {
        return;
    };
    let (dir, host, c) = (&model.dir, &model.host, &model.c);
    let row = first_row(dir);
    let known = predict(c, host, "tabular", json!({"features": row}))
        .await
        .value();
    assert_eq!(known["results"]["in_domain"], true, "{known}");
    assert_eq!(known["results"]["input"]["colour"], row["colour"]);

    // A colour never seen in training: answered (the encoder ignores it, as trained), and
    // flagged out of the domain, naming it.
    let mut purple = row.clone();
    purple.insert("colour".into(), json!("purple"));
    let r = predict(c, host, "tabular", json!({"features": purple}))
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
    let r = predict(c, host, "tabular", json!({"features": missing}))
        .await
        .value();
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["results"]["input"][&numeric], Value::Null);

    // A number where a category belongs, and text where a number does: 400 naming the field.
    let mut wrong = row.clone();
    wrong.insert("colour".into(), json!(3));
    let e = predict(c, host, "tabular", json!({"features": wrong}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("data.features.colour"), "{}", e.error);
    let mut wrong = row.clone();
    wrong.insert(numeric.clone(), json!("high"));
    let e = predict(c, host, "tabular", json!({"features": wrong}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains(&numeric), "{}", e.error);
}

#[tokio::test(flavor = "multi_thread")]
async fn scikit_learns_default_encoder_refuses_an_unseen_category_in_its_own_item_only() {
    // Whole: its directories are deleted when it goes.
    let Some(model) = served("mixed_strict_logistic") else {
        return;
    };
    let (dir, host, c) = (&model.dir, &model.host, &model.c);
    let row = first_row(dir);
    let visits = row["visits"].as_f64().unwrap();
    assert_eq!(visits.fract(), 0.0, "an integer column: {row:?}");

    // OneHotEncoder() refuses what it never saw: a failed prediction naming the category
    // and what to do, not a 500; in a batch, that item alone.
    let mut purple = row.clone();
    purple.insert("colour".into(), json!("purple"));
    let r = predict(c, host, "tabular", json!({"features": purple})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(v["success"], false, "{v}");
    let why = v["error_message"].as_str().unwrap();
    assert!(
        why.contains("colour = \"purple\"") && why.contains("handle_unknown"),
        "{why}"
    );
    let other = nth_row(dir, 1);
    let batch = json!({"rows": [row, purple, other]});
    let v = predict(c, host, "tabular", batch).await.value();
    let items = v["results"]["items"].as_array().unwrap();
    let succeeded: Vec<&Value> = items.iter().map(|i| &i["success"]).collect();
    assert_eq!(
        succeeded,
        [&json!(true), &json!(false), &json!(true)],
        "{v}"
    );
    // The good rows' items are their own answers, in order (the batch was rerun row by row).
    for (item, alone) in [(&items[0], &row), (&items[2], &other)] {
        let single = predict(c, host, "tabular", json!({"features": alone}))
            .await
            .value();
        assert_eq!(item["results"], single["results"], "{v}");
    }

    // The graph takes the count as an integer: a fraction or a missing one is a 400 naming it.
    for bad in [json!(1.5), Value::Null] {
        let mut wrong = row.clone();
        wrong.insert("visits".into(), bad);
        let e = predict(c, host, "tabular", json!({"features": wrong}))
            .await
            .assert_error(400, "invalid_field");
        assert!(e.error.contains("data.features.visits"), "{}", e.error);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn decision_scores_made_by_plain_operators_are_named_by_check_and_served_once_written() {
    let work = temp_dir();
    let Some(dirs) = made(work.path(), &["sgd_hinge"]) else {
        return;
    };
    let dir = &dirs[0];
    // `model init` cannot tell these scores from probabilities (the export computes them with
    // MatMul and Add); `model check` runs the self-test and says what to write.
    let checked = std::process::Command::new(e2e_tests::host_binary())
        .args(["model", "check"])
        .arg(dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(!checked.status.success(), "{said}");
    assert!(
        said.contains("values = \\\"decision_scores\\\"")
            || said.contains("values = \"decision_scores\""),
        "{said}"
    );
    let manifest = std::fs::read_to_string(dir.join("model.toml")).unwrap();
    let edited = manifest.replacen(
        "kind = \"classification\"\n",
        "kind = \"classification\"\nvalues = \"decision_scores\"\n",
        1,
    );
    assert_ne!(edited, manifest);
    std::fs::write(dir.join("model.toml"), edited).unwrap();

    let data = temp_dir();
    let host = serve(dir, data.path());
    let c = Client::new();
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let want = &expected["rows"][0];
    let v = predict(&c, &host, "tabular", json!({"features": first_row(dir)}))
        .await
        .value();
    let r = &v["results"];
    assert_eq!(r["prediction"], want["label"], "{v}");
    assert!(r.get("probabilities").is_none(), "{v}");
    for (label, w) in want["probabilities"].as_object().unwrap() {
        let g = r["decision_scores"][label].as_f64().unwrap();
        let w = w.as_f64().unwrap();
        assert!(
            (g - w).abs() <= 1e-5 * w.abs(),
            "{label}: {g} where onnxruntime says {w}"
        );
    }
}
