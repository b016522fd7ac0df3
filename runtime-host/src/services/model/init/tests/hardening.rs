//! `model init` given what a careless or hostile user may give it: names with newlines,
//! quotes and backslashes, infinite numbers, empty columns, missing targets, integer labels
//! no node names, files too large to read. Each ends in a manifest that says exactly the
//! data's values, or an error naming the column, never "a bug of model init".

use super::*;

/// A CSV line of `fields`, each quoted (a quote doubled), as pandas' `to_csv` quotes them.
fn line(fields: &[&str]) -> String {
    let quoted: Vec<String> = fields
        .iter()
        .map(|f| format!("\"{}\"", f.replace('"', "\"\"")))
        .collect();
    quoted.join(",") + "\n"
}

fn init_in(dir: &Path, training: &Path, held_out: Option<&Path>) -> Result<String> {
    init(&InitRequest {
        dir,
        onnx: None,
        training,
        target: None,
        held_out,
        force: false,
    })
}

/// A file or directory name is the user's text: in a comment it is escaped as a string is,
/// so a name holding a newline cannot add a table (here one naming another graph).
#[test]
fn names_with_newlines_cannot_write_toml() {
    let evil = "x\n[onnx]\nfile = \"other.onnx\"\n#";
    for (dir_name, csv_name) in [(evil, "train.csv"), ("m", &format!("{evil}.csv"))] {
        let w = tempfile::tempdir().unwrap();
        let dir = w.path().join(dir_name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("model.onnx"), regression_graph(3)).unwrap();
        let training = w.path().join(csv_name);
        std::fs::write(&training, REGRESSION_CSV).unwrap();
        init_in(&dir, &training, None).unwrap();
        let text = std::fs::read_to_string(dir.join("model.toml")).unwrap();
        let m = Manifest::parse(&text).unwrap();
        assert_eq!(m.onnx.file, "model.onnx", "{text}");
        assert_eq!(m.info.name, dir_name);
        assert!(m.acceptable_ranges.description.contains(csv_name), "{text}");
        assert!(!text.lines().any(|l| l.starts_with("file =")), "{text}");
    }
}

const ODD: [&str; 4] = ["a \"quoted\"", "back\\slash", "new\nline", "unicode é ☃ 𝛼"];

/// Column names with quotes, backslashes, newlines and non-ASCII letters are features,
/// range keys and example keys as written; the target `conc\mol` names the unit too.
#[test]
fn odd_column_names_round_trip() {
    let target = "conc\\mol";
    let mut csv = line(&[ODD[0], ODD[1], ODD[2], ODD[3], target]);
    csv += "1,2,3,4,5\n1.5,2.5,3.5,4.5,5.5\n2,3,4,5,6\n";
    let w = workspace(&regression_graph(4), &csv);
    let m = run(w.path(), None, false).unwrap();
    let Input::Tabular { features, .. } = &m.input else {
        panic!("tabular")
    };
    assert_eq!(features, &ODD);
    let ranges = &m.applicability_domain.feature_ranges;
    assert_eq!(
        ranges.keys().map(String::as_str).collect::<Vec<_>>().len(),
        4
    );
    assert_eq!((ranges[ODD[2]].min, ranges[ODD[2]].max), (3.0, 4.0));
    let Output::Regression { property, unit } = &m.output else {
        panic!("a regression")
    };
    assert_eq!(property, target);
    assert!(unit.contains(target), "{unit}");
    assert_eq!(
        m.acceptable_ranges.property_ranges[target].training_samples,
        3
    );
    let example = &m.test_examples.examples[0].input["features"];
    assert_eq!(example[ODD[3]].as_f64(), Some(4.0));
}

/// Text features and labels of odd text: categories, labels and example cells as written.
#[test]
fn odd_categories_and_labels_round_trip() {
    let labels = ["yes \"y\"", "no\\n"];
    let graph = encode(
        &[(ODD[2], STRING, &[0, 1]), (ODD[3], FLOAT, &[0, 1])],
        &[
            ("output_label", STRING, &[0]),
            ("output_probability", MAPS, &[]),
        ],
        Some(&labels),
    );
    let (red, blue) = ("red\n\"dark\"", "blue\\é");
    let mut csv = line(&[ODD[3], ODD[2], "answer\n?"]);
    csv += &line(&["1.5", red, labels[0]]);
    csv += &line(&["2", blue, labels[1]]);
    let w = workspace(&graph, &csv);
    let m = run(w.path(), None, false).unwrap();
    let Input::Tabular { categories, .. } = &m.input else {
        panic!("tabular")
    };
    assert_eq!(categories[ODD[2]], [blue, red]);
    let Output::Classification {
        property,
        labels: l,
        ..
    } = &m.output
    else {
        panic!("a classifier")
    };
    assert_eq!(
        (property.as_str(), l.as_slice()),
        ("answer\n?", &labels.map(String::from)[..])
    );
    let e = &m.test_examples.examples[0];
    assert_eq!(
        (e.category.as_str(), &e.input["features"][ODD[2]]),
        (labels[0], &serde_json::json!(red))
    );
}

/// `inf`, `-Infinity` and `1e400` (infinite once read, as numpy reads it) are no training
/// value: refused naming the column and line. `nan` is missing, as `pd.read_csv` reads it:
/// the ranges are those of the other cells (pandas: b min 1.5, max 3.5, mean 2.5).
#[test]
fn infinite_numbers_are_refused_and_nan_is_missing() {
    // Line 4 of REGRESSION_CSV is `1e-7,2.5,7,12.25`.
    for (from, to, column) in [
        (",2.5,", "inf", "b"),
        (",12.25", "1e400", "y"),
        (",7,", "-Infinity", "c"),
    ] {
        let with = from.replace(from.trim_matches(','), to);
        let w = workspace(&regression_graph(3), &REGRESSION_CSV.replace(from, &with));
        let e = format!("{:#}", run(w.path(), None, false).unwrap_err());
        assert!(
            e.contains(&format!("`{column}` holds \"{to}\" on line 4")) && e.contains("finite"),
            "{e}"
        );
    }
    let w = workspace(&regression_graph(3), &REGRESSION_CSV.replace(",,", ",nan,"));
    let m = run(w.path(), None, false).unwrap();
    let b = &m.applicability_domain.feature_ranges["b"];
    assert_eq!((b.min, b.max, b.mean), (1.5, 3.5, Some(2.5)));
    // Two values near f64::MAX: their mean is that value, not the sum's overflow.
    let big = "a,b,c,y\n1.7e308,1,1,1\n1.7e308,2,2,2\n";
    let w = workspace(&regression_graph(3), big);
    let m = run(w.path(), None, false).unwrap();
    assert_eq!(
        m.applicability_domain.feature_ranges["a"].mean,
        Some(1.7e308)
    );
}

/// A held-out row with an infinite value is no test example (JSON cannot carry it).
#[test]
fn held_out_rows_with_infinities_make_no_example() {
    let w = workspace(&regression_graph(3), REGRESSION_CSV);
    let held = w.path().join("held.csv");
    std::fs::write(&held, "a,b,c,y\ninf,1,1,1\n0.1,2,2,2\n0.2,3,3,3\n").unwrap();
    init_in(
        &w.path().join("m"),
        &w.path().join("train.csv"),
        Some(&held),
    )
    .unwrap();
    let text = std::fs::read_to_string(w.path().join("m/model.toml")).unwrap();
    let m = Manifest::parse(&text).unwrap();
    let names: Vec<&str> = m
        .test_examples
        .examples
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["held-out row 3", "held-out row 4"]);
}

/// A text column with no value in any training row has no categories to list: refused
/// naming it.
#[test]
fn an_empty_text_column_is_refused_naming_it() {
    let graph = encode(
        &[("colour", STRING, &[0, 1]), ("size", FLOAT, &[0, 1])],
        &[
            ("output_label", STRING, &[0]),
            ("output_probability", MAPS, &[]),
        ],
        Some(&["a", "b"]),
    );
    for csv in [
        "size,colour,y\n1,,a\n2,,b\n",
        "size,colour,y\n1,,a\n2,nan,b\n",
    ] {
        let w = workspace(&graph, csv);
        let e = format!("{:#}", run(w.path(), None, false).unwrap_err());
        assert!(
            e.contains("column `colour` has no value") && !e.contains("bug"),
            "{e}"
        );
    }
}

/// Rows without a target (empty, or `nan`) are not training samples: pandas'
/// `y.count()` of this file is 4, of its 6 rows.
#[test]
fn rows_without_a_target_are_not_counted() {
    let csv = format!("{REGRESSION_CSV}1,2,3,\n1,2,3,nan\n");
    let w = workspace(&regression_graph(3), &csv);
    let m = run(w.path(), None, false).unwrap();
    assert_eq!(m.acceptable_ranges.property_ranges["y"].training_samples, 4);
    assert!(
        m.acceptable_ranges
            .description
            .contains("(4 rows of train.csv"),
        "{}",
        m.acceptable_ranges.description
    );
}

/// A graph that names no classes (a k-NN's or MLP's are a constant tensor) gets the target's
/// distinct values sorted as scikit-learn's `classes_`: a KNeighborsClassifier fitted on
/// this CSV (pandas) has `classes_` [1., 2., 10.], and its skl2onnx export answers label 10
/// (int64) under onnxruntime for the row of `10.0`.
#[test]
fn unnamed_classes_are_sorted_as_scikit_learn_sorts_them() {
    let graph = encode_unlabelled(
        &[("X", FLOAT, &[0, 1])],
        &[("label", INT64, &[0]), ("probabilities", FLOAT, &[0, 3])],
    );
    let csv = "x,y\n1,10.0\n2,2\n3,1\n4,2.0\n5,10\n";
    let w = workspace(&graph, csv);
    let m = run(w.path(), None, false).unwrap();
    let Output::Classification { labels, .. } = &m.output else {
        panic!("a classifier")
    };
    assert_eq!(labels, &["1", "2", "10"]);
    assert_eq!(m.test_examples.examples[0].category, "10");

    let w = workspace(&graph, "x,y\n1,b\n2,a\n3,B\n");
    let m = run(w.path(), None, false).unwrap();
    let Output::Classification { labels, .. } = &m.output else {
        panic!("a classifier")
    };
    assert_eq!(labels, &["B", "a", "b"]);

    let w = workspace(&graph, "x,y\n1,1\n2,1.0\n");
    let e = format!("{:#}", run(w.path(), None, false).unwrap_err());
    assert!(
        e.contains("are [\"1\"], but a classifier tells two or more") && !e.contains("bug"),
        "{e}"
    );
}

/// A graph or CSV file over 1 GiB (sparse here: nothing is read) is refused by its size.
#[test]
fn files_over_the_limit_are_refused() {
    let w = workspace(&regression_graph(3), REGRESSION_CSV);
    let big = |name: &str| {
        let path = w.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .set_len((1 << 30) + 1)
            .unwrap();
        path
    };
    let (onnx, csv) = (big("big.onnx"), big("big.csv"));
    let e = init(&InitRequest {
        dir: &w.path().join("m"),
        onnx: Some(&onnx),
        training: &w.path().join("train.csv"),
        target: None,
        held_out: None,
        force: false,
    });
    let e = format!("{:#}", e.unwrap_err());
    assert!(
        e.contains("big.onnx: 1073741825 bytes, over the 1073741824"),
        "{e}"
    );
    let e = format!(
        "{:#}",
        init_in(&w.path().join("m"), &csv, None).unwrap_err()
    );
    assert!(
        e.contains("big.csv: 1073741825 bytes, over the 1073741824"),
        "{e}"
    );
}
