//! `runtime-host predict`: libraries through real models, in process and against a running
//! deployment, with bad rows, every input format, the limits, Ctrl-C and --resume
//! (`resume`), hostile input (`hostile`) and the usual slips (`mistakes`); picture files
//! (`media`) and a column of their URLs (`urls`, from a server of `e2e_tests::served`); a
//! deployment failing (HTTP 500) on one file (`faults`).

mod faults;
mod hostile;
mod media;
mod mistakes;
mod resume;
mod urls;

use e2e_tests::host::HostBuilder;
use e2e_tests::{component, host_binary, model_dir, temp_dir, workspace_root};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `runtime-host predict ARGS` to its end.
pub fn predict(args: &[&str]) -> Output {
    Command::new(host_binary())
        .arg("predict")
        .args(args)
        .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
        .output()
        .expect("running runtime-host predict")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn csv_rows(path: &Path) -> Vec<csv::StringRecord> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    reader.records().map(Result::unwrap).collect()
}

pub fn header(path: &Path) -> Vec<String> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect()
}

/// Checks the CSV at `output` row by row against `expected`, in order: each row's id (its
/// first column), then for `Some(prediction)` that prediction in column `prediction` and an
/// empty error, for `None` an error. The error is the last column, wherever the model's
/// fields put the prediction.
pub fn assert_predictions(output: &Path, prediction: usize, expected: &[(String, Option<String>)]) {
    let error = header(output).len() - 1;
    let rows = csv_rows(output);
    assert_eq!(rows.len(), expected.len());
    for (row, (id, want)) in rows.iter().zip(expected) {
        assert_eq!(&row[0], id);
        match want {
            Some(want) => {
                assert_eq!(&row[prediction], want, "{row:?}");
                assert_eq!(&row[error], "", "{row:?}");
            }
            None => assert!(!row[error].is_empty(), "{row:?}"),
        }
    }
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The RDKit reference molecules (SMILES, logP) of the chemistry tests.
pub fn reference_molecules(n: usize) -> Vec<(String, f64)> {
    let text =
        std::fs::read_to_string(workspace_root().join("crates/chem/tests/data/rdkit-samples.tsv"))
            .unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let logp = head.iter().position(|h| *h == "logp").unwrap();
    lines
        .take(n)
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            (cells[0].to_owned(), cells[logp].parse().unwrap())
        })
        .collect()
}

/// JSON lines for the echo model (tabular), each row its own id and value.
pub fn echo_rows(path: &Path, n: usize, start: usize) {
    let text: String = (start..start + n)
        .map(|i| format!("{{\"id\": \"r{i}\", \"value\": {i}}}\n"))
        .collect();
    std::fs::write(path, text).unwrap();
}

/// The arguments of a slow run (each row 25 ms) of the echo model in process over `input`
/// into `output`, then `extra`.
pub fn slow_echo_args(input: &Path, output: &Path, extra: &[&str]) -> Vec<String> {
    let echo = component("echo-model");
    let mut args: Vec<String> = [s(input), "--model", s(&echo), "-o", s(output)]
        .iter()
        .chain(&["--variable", "echo_busy_ms=25"])
        .map(|x| x.to_string())
        .collect();
    args.extend(extra.iter().map(|x| x.to_string()));
    args
}

/// `runtime-host predict ARGS` started, its standard error piped.
pub fn spawn_predict(args: &[String]) -> std::process::Child {
    Command::new(host_binary())
        .arg("predict")
        .args(args)
        .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting runtime-host predict")
}

/// Waits (up to 60 s) until `output` holds `lines` lines.
pub fn wait_for_lines(output: &Path, lines: usize) {
    let started = std::time::Instant::now();
    while std::fs::read_to_string(output).map_or(0, |t| t.lines().count()) < lines {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no rows written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_smiles_file_is_scored_in_order_and_bad_rows_fail_alone() {
    let dir = temp_dir();
    let input = dir.path().join("library.smi");
    let mut expected = Vec::new();
    let mut text = String::from("# a comment line, then 600 molecules and three bad rows\n");
    for (i, (smiles, logp)) in reference_molecules(600).into_iter().enumerate() {
        let bad = match i {
            10 => Some("XX1"),
            300 => Some("C1CC"),
            599 => Some("c1cc"),
            _ => None,
        };
        let written = bad.unwrap_or(&smiles).to_owned();
        text.push_str(&format!("{written}\tmol-{i}\n"));
        expected.push((format!("mol-{i}"), written, bad.is_none().then_some(logp)));
        if i == 200 {
            text.push('\n'); // blank lines are not rows
        }
    }
    std::fs::write(&input, text).unwrap();
    let output = dir.path().join("scores.csv");
    let molprop = component("molprop");
    let out = predict(&[
        s(&input),
        "--model",
        s(&molprop),
        "--data",
        "property=logp",
        "-o",
        s(&output),
        "--batch-size",
        "64",
        "--data-dir",
        s(dir.path()),
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // The summary: rows, failures by kind, the domain.
    assert!(err.contains("done: 600 rows through molprop"), "{err}");
    assert!(err.contains("failed:   3"), "{err}");
    assert!(err.contains("outside the applicability domain:"), "{err}");
    let head = header(&output);
    assert_eq!(&head[..3], ["id", "smiles", "prediction"], "{head:?}");
    assert_eq!(&head[head.len() - 2..], ["in_domain", "error"]);
    let rows = csv_rows(&output);
    assert_eq!(rows.len(), 600);
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    for (row, (id, smiles, logp)) in rows.iter().zip(&expected) {
        assert_eq!(&row[0], id);
        assert_eq!(&row[1], smiles);
        match logp {
            Some(logp) => {
                let got: f64 = row[col("prediction")].parse().unwrap();
                assert!((got - logp).abs() < 1e-3, "{id}: {got} vs RDKit {logp}");
                assert_eq!(&row[col("error")], "");
                assert!(matches!(&row[col("in_domain")], "true" | "false"));
            }
            None => {
                assert_eq!(&row[col("prediction")], "", "{id}");
                assert!(
                    row[col("error")].contains("SMILES"),
                    "{id}: {}",
                    &row[col("error")]
                );
            }
        }
    }
}

#[test]
fn sd_and_tsv_files_through_a_running_deployment_agree() {
    let dir = temp_dir();
    let host = HostBuilder::new(component("onnx-model"), dir.path())
        .shared_compile_cache()
        .mount(&model_dir("solubility"), "/model")
        .start();
    let sdf = model_dir("solubility").join("solubility.test.sdf");
    let from_sdf = dir.path().join("sdf.jsonl");
    let out = predict(&[s(&sdf), "--url", &host.base_url(), "-o", s(&from_sdf)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tsv = model_dir("solubility").join("test_set.tsv");
    let from_tsv = dir.path().join("tsv.jsonl");
    let out = predict(&[
        s(&tsv),
        "--url",
        &host.base_url(),
        "-o",
        s(&from_tsv),
        "--column",
        "smiles",
        "--id-column",
        "name",
        "--concurrency",
        "1",
        "--batch-size",
        "7",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (a, b) = (jsonl(&from_sdf), jsonl(&from_tsv));
    assert_eq!(a.len(), 257);
    assert_eq!(b.len(), 257);
    // The recorded onnxruntime answers of the training script, row by row.
    let text = std::fs::read_to_string(&tsv).unwrap();
    let recorded: Vec<(String, f64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[0].to_owned(), c[3].trim().parse().unwrap())
        })
        .collect();
    let mut outside = 0;
    for ((x, y), (name, logs)) in a.iter().zip(&b).zip(&recorded) {
        // The SD record's title and the TSV's name column are the same names.
        assert_eq!(x["id"], y["id"]);
        assert_eq!(x["id"].as_str(), Some(name.as_str()));
        assert_eq!(x["success"], true, "{x}");
        let p = x["results"]["prediction"].as_f64().unwrap();
        assert!((p - logs).abs() < 1e-3, "{name}: {p} vs {logs}");
        assert_eq!(
            x["results"]["prediction"], y["results"]["prediction"],
            "{name}"
        );
        assert_eq!(x["in_domain"], y["in_domain"]);
        outside += usize::from(x["in_domain"] == false);
    }
    assert!(outside > 0, "the test set has molecules outside the domain");
}

#[test]
fn a_tabular_model_reads_its_feature_columns() {
    let dir = temp_dir();
    let tsv = model_dir("iris").join("heldout.tsv");
    let output = dir.path().join("iris.csv");
    // The file has more columns than features (species, recorded answers): the model's own
    // document names the features to take.
    let out = predict(&[
        s(&tsv),
        "--model",
        s(&model_dir("iris")),
        "-o",
        s(&output),
        "--data-dir",
        s(dir.path()),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let head = header(&output);
    let prediction = head.iter().position(|h| h == "prediction").unwrap();
    // The echoed features in model.toml's order, not sorted by name (issue 62).
    let echoed: Vec<&str> = head
        .iter()
        .filter_map(|h| h.strip_prefix("input."))
        .collect();
    assert_eq!(
        echoed,
        [
            "sepal_length_cm",
            "sepal_width_cm",
            "petal_length_cm",
            "petal_width_cm"
        ],
        "{head:?}"
    );
    let text = std::fs::read_to_string(&tsv).unwrap();
    let species: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(4).unwrap())
        .collect();
    let rows = csv_rows(&output);
    assert_eq!(rows.len(), species.len());
    let right = rows
        .iter()
        .zip(&species)
        .filter(|(r, s)| &r[prediction] == **s)
        .count();
    assert!(
        right * 10 >= rows.len() * 9,
        "{right} of {} right",
        rows.len()
    );
}

#[test]
fn refusals_and_limits() {
    let dir = temp_dir();
    let molprop = component("molprop");
    let input = dir.path().join("library.csv");
    let mut text = String::from("compound,structure\n");
    for (i, (smiles, _)) in reference_molecules(400).into_iter().enumerate() {
        text.push_str(&format!("c{i},{smiles}\n"));
    }
    std::fs::write(&input, text).unwrap();
    let output = dir.path().join("out.jsonl");
    let base = |extra: &[&str]| -> Output {
        let mut args = vec![
            s(&input),
            "--model",
            s(&molprop),
            "-o",
            s(&output),
            "--data-dir",
            s(dir.path()),
        ];
        args.extend_from_slice(extra);
        predict(&args)
    };
    // No SMILES column by a known name: say which columns there are.
    let out = base(&[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--column") && stderr(&out).contains("compound, structure"),
        "{}",
        stderr(&out)
    );
    // A wrong shared field: the model refuses the batch, and the run stops saying why.
    let out = base(&["--column", "structure", "--data", "property=colour"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("property"), "{}", stderr(&out));
    // Over the body cap (a 4 KiB body limit against batches of 400): batches are halved
    // until they fit, and every row is answered in order.
    let out = base(&[
        "--column",
        "structure",
        "--id-column",
        "compound",
        "--data",
        "property=logp",
        "--max-body",
        "4096",
        "--batch-size",
        "400",
        "--force",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = jsonl(&output);
    assert_eq!(rows.len(), 400);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["id"], format!("c{i}"));
        assert_eq!(row["success"], true, "{row}");
    }
    // Neither a URL nor a model.
    let out = predict(&[s(&input)]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--url"), "{}", stderr(&out));
}
