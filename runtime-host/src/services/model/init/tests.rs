//! `model init` on small graphs and CSV files: the manifest it writes parses as a deploy
//! parses it, and holds the data's values exactly. Expected statistics are pandas' (`min`,
//! `max`, `mean` of `pd.read_csv` of the same text), not this code's.

use super::onnx_graph::encode::{MAPS, encode, encode_unlabelled};
use super::onnx_graph::{FLOAT, INT64, STRING};
use super::*;
use model_manifest::{Input, Output};

const REGRESSION_CSV: &str = "a,b,c,y\n0.00020612,1.5,-3,10\n0.00084,,2.25,11.5\n\
                              1e-7,2.5,7,12.25\n0.3,3.5,0.1,13\n";

fn regression_graph(width: i64) -> Vec<u8> {
    encode(
        &[("X", FLOAT, &[0, width])],
        &[("variable", FLOAT, &[0, 1])],
        None,
    )
}

/// A directory holding `model.onnx` (`graph`) and `train.csv` (`csv`).
fn workspace(graph: &[u8], csv: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("train.csv"), csv).unwrap();
    std::fs::create_dir(dir.path().join("m")).unwrap();
    std::fs::write(dir.path().join("m/model.onnx"), graph).unwrap();
    dir
}

fn run(w: &Path, target: Option<&str>, force: bool) -> Result<Manifest> {
    init(&InitRequest {
        dir: &w.join("m"),
        onnx: None,
        training: &w.join("train.csv"),
        target,
        held_out: None,
        force,
    })?;
    let text = std::fs::read_to_string(w.join("m/model.toml")).unwrap();
    Ok(Manifest::parse(&text).unwrap())
}

#[test]
fn a_regression_gets_exact_ranges_the_target_range_and_three_examples() {
    let w = workspace(&regression_graph(3), REGRESSION_CSV);
    let m = run(w.path(), None, false).unwrap();
    assert_eq!(m.info.name, "m");
    let Input::Tabular { features, .. } = &m.input else {
        panic!("tabular")
    };
    assert_eq!(features, &["a", "b", "c"]);
    let Output::Regression { property, .. } = &m.output else {
        panic!("a regression")
    };
    assert_eq!(property, "y");
    let ranges = &m.applicability_domain.feature_ranges;
    // pandas: a min 1e-07, max 0.3, mean 0.075261555; b (one cell missing) 1.5, 3.5, 2.5.
    assert_eq!((ranges["a"].min, ranges["a"].max), (1e-7, 0.3));
    assert!((ranges["a"].mean.unwrap() - 0.075261555).abs() < 1e-16);
    assert_eq!(
        (ranges["b"].min, ranges["b"].max, ranges["b"].mean),
        (1.5, 3.5, Some(2.5))
    );
    let y = &m.acceptable_ranges.property_ranges["y"];
    // pandas: y min 10.0, max 13.0, mean 11.6875, 4 values.
    assert_eq!(
        (
            y.training_range.min,
            y.training_range.max,
            y.training_range.mean
        ),
        (10.0, 13.0, 11.6875)
    );
    assert_eq!((y.reliable_range.min, y.reliable_range.max), (10.0, 13.0));
    assert_eq!(y.training_samples, 4);
    assert_eq!(y.validation_metrics.r2, "not measured");
    // First, middle and last complete rows (line 3 lacks b); values as written.
    let examples = &m.test_examples.examples;
    let names: Vec<&str> = examples.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["training row 2", "training row 4", "training row 5"]
    );
    let first = &examples[0].input["features"];
    assert_eq!(first["a"].as_f64(), Some(0.00020612));
    assert_eq!(first["c"].as_f64(), Some(-3.0));
    let text = std::fs::read_to_string(w.path().join("m/model.toml")).unwrap();
    assert!(text.contains("edit me"), "{text}");
}

#[test]
fn a_classifier_of_a_dataframe_export_gets_its_labels_and_categories() {
    // Two inputs named as columns (the graph's order, not the CSV's), one of them strings.
    let graph = encode(
        &[("colour", STRING, &[0, 1]), ("size", FLOAT, &[0, 1])],
        &[
            ("output_label", INT64, &[0]),
            ("output_probability", MAPS, &[]),
        ],
        Some(&["no", "yes"]),
    );
    let csv = "size,unused,colour,answer\n1.5,x,red,yes\n2,y,blue,no\n3.25,z,red,no\n";
    let w = workspace(&graph, csv);
    let m = run(w.path(), None, false).unwrap();
    let Input::Tabular {
        features,
        categories,
    } = &m.input
    else {
        panic!("tabular")
    };
    assert_eq!(features, &["colour", "size"]);
    assert_eq!(categories["colour"], ["blue", "red"]);
    let Output::Classification {
        property, labels, ..
    } = &m.output
    else {
        panic!("a classifier")
    };
    assert_eq!(
        (property.as_str(), labels.as_slice()),
        ("answer", &["no".to_owned(), "yes".to_owned()][..])
    );
    assert!(m.acceptable_ranges.property_ranges.is_empty());
    assert!(!m.applicability_domain.feature_ranges.contains_key("colour"));
    let e = &m.test_examples.examples[0];
    assert_eq!(e.category, "yes");
    assert_eq!(e.input["features"]["colour"], "red");
    assert_eq!(e.input["features"]["size"].as_f64(), Some(1.5));
}

#[test]
fn mismatches_between_graph_and_data_are_refused_saying_which() {
    let w = workspace(&regression_graph(4), REGRESSION_CSV);
    let e = format!("{:#}", run(w.path(), None, false).unwrap_err());
    assert!(
        e.contains("input `X` takes 4 values per row") && e.contains("has 3 columns"),
        "{e}"
    );

    let w = workspace(&regression_graph(3), REGRESSION_CSV);
    let e = format!("{:#}", run(w.path(), Some("z"), false).unwrap_err());
    assert!(e.contains("no column `z`"), "{e}");

    let text = REGRESSION_CSV.replace("2.25", "lots");
    let w = workspace(&regression_graph(3), &text);
    let e = format!("{:#}", run(w.path(), None, false).unwrap_err());
    assert!(
        e.contains("column `c` holds text (\"lots\" on line 3)"),
        "{e}"
    );

    let graph = encode(
        &[("colour", STRING, &[0, 1]), ("size", FLOAT, &[0, 1])],
        &[("variable", FLOAT, &[0, 1])],
        None,
    );
    let w = workspace(&graph, "size,y\n1,2\n");
    let e = format!("{:#}", run(w.path(), None, false).unwrap_err());
    assert!(e.contains("no column colour"), "{e}");
}

#[test]
fn an_existing_manifest_is_kept_unless_forced() {
    let w = workspace(&regression_graph(3), REGRESSION_CSV);
    std::fs::write(w.path().join("m/model.toml"), "mine").unwrap();
    let e = format!("{:#}", run(w.path(), None, false).unwrap_err());
    assert!(e.contains("--force"), "{e}");
    assert_eq!(
        std::fs::read_to_string(w.path().join("m/model.toml")).unwrap(),
        "mine"
    );
    run(w.path(), None, true).unwrap();
}

#[test]
fn a_graph_outside_the_directory_is_copied_in() {
    let w = workspace(&regression_graph(3), REGRESSION_CSV);
    let elsewhere = w.path().join("exported.onnx");
    std::fs::rename(w.path().join("m/model.onnx"), &elsewhere).unwrap();
    init(&InitRequest {
        dir: &w.path().join("m"),
        onnx: Some(&elsewhere),
        training: &w.path().join("train.csv"),
        target: Some("y"),
        held_out: None,
        force: false,
    })
    .unwrap();
    assert_eq!(
        std::fs::read(w.path().join("m/model.onnx")).unwrap(),
        regression_graph(3)
    );
}

mod hardening;
