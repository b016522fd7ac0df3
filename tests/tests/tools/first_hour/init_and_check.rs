//! A manifest written for you and checked like a deploy (issue 57 §3). `model init` on a
//! regression and a classifier exported with skl2onnx's default options writes a manifest
//! that `model check` passes and that deploys unchanged and answers as onnxruntime does; and
//! for every kind of broken directory, `model check` refuses it first with the very reason
//! the deploy (`runtime-host model`, as tests/tests/models/onnx/refusals.rs deploys one)
//! refuses it with.

use super::wait_until_healthy;
use e2e_tests::{Client, Stack, component, host_binary, shared_cache_dir, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Two models by skl2onnx's defaults (a scaled ridge regression, a random forest over string
/// labels, ending in ZipMap), their training and held-out rows as CSV, and onnxruntime's
/// answers for the held-out rows (`expected.json`: the first output, row by row).
const MAKE: &str = r#"
import json

import numpy as np
import onnxruntime as ort
from skl2onnx import to_onnx
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

expected = {}


def export(name, model, frame, target):
    train, held = train_test_split(frame, test_size=0.2, random_state=0)
    X = train.drop(columns=[target]).to_numpy(np.float32)
    model.fit(X, train[target].to_numpy())
    onx = to_onnx(model, X[:1]).SerializeToString()
    open(f"{name}.onnx", "wb").write(onx)
    train.to_csv(f"{name}_train.csv", index=False)
    held.to_csv(f"{name}_heldout.csv", index=False)
    session = ort.InferenceSession(onx)
    rows = held.drop(columns=[target]).to_numpy(np.float32)
    first = session.run(None, {session.get_inputs()[0].name: rows})[0]
    expected[name] = [v.item() if hasattr(v, "item") else str(v) for v in np.asarray(first).reshape(-1)]


diabetes = load_diabetes(as_frame=True).frame.rename(columns={"target": "progression"})
export("regression", make_pipeline(StandardScaler(), Ridge()), diabetes, "progression")
iris = load_iris(as_frame=True)
flowers = iris.frame.drop(columns=["target"])
flowers.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
flowers["species"] = iris.target_names[iris.target]
export("classifier", RandomForestClassifier(n_estimators=20, random_state=0), flowers, "species")
json.dump(expected, open("expected.json", "w"))
"#;

/// `runtime-host ARGS` in `dir`: whether it succeeded, its stdout and its stderr.
fn host(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(host_binary())
        .args(args)
        .current_dir(dir)
        .env("RUNTIME_HOST_CACHE_DIR", shared_cache_dir())
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// `model init` of `name` (`regression` or `classifier`) into `work/dir`.
fn init(work: &Path, name: &str, dir: &str) {
    let (onnx, train, held) = (
        format!("{name}.onnx"),
        format!("{name}_train.csv"),
        format!("{name}_heldout.csv"),
    );
    let args = [
        "model",
        "init",
        dir,
        "--onnx",
        &onnx,
        "--training",
        &train,
        "--held-out",
        &held,
    ];
    let (ok, out, err) = host(work, &args);
    assert!(ok, "model init {dir}: {out}{err}");
    assert!(out.contains("edit me"), "{out}");
}

/// A copy of model directory `from` as `to`, changed by `edit`.
fn broken(from: &Path, to: &Path, edit: impl FnOnce(&Path)) -> PathBuf {
    e2e_tests::copy_model(from, to);
    edit(to);
    to.to_owned()
}

fn replace_in(file: &Path, from: &str, to: &str) {
    // Every occurrence: an operator's type is also in its node's name, and the same length
    // keeps the protobuf well formed.
    let text = std::fs::read(file).unwrap();
    let (from, to) = (from.as_bytes(), to.as_bytes());
    let mut edited = Vec::new();
    let (mut at, mut found) = (0, 0);
    while at < text.len() {
        if text[at..].starts_with(from) {
            edited.extend_from_slice(to);
            at += from.len();
            found += 1;
        } else {
            edited.push(text[at]);
            at += 1;
        }
    }
    assert!(
        found > 0,
        "{} holds {:?}",
        file.display(),
        String::from_utf8_lossy(from)
    );
    std::fs::write(file, edited).unwrap();
}

/// The problem lines `model check` printed for one directory (`  - ` items).
fn problems(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("  - "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn model_init_writes_what_deploys_and_check_refuses_what_a_deploy_refuses() {
    let Some(python) = e2e_tests::test_python("model init and model check") else {
        return;
    };
    let work = temp_dir();
    let w = work.path();
    std::fs::write(w.join("make.py"), MAKE).unwrap();
    let made = Command::new(python.join("bin/python"))
        .arg("make.py")
        .current_dir(w)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    init(w, "regression", "reg");
    init(w, "classifier", "clf");

    // What init wrote passes the check: the component loaded it and ran its examples.
    let (ok, out, err) = host(w, &["model", "check", "reg", "clf"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("reg: ok (reg: regression of progression"),
        "{out}"
    );
    assert!(
        out.contains("clf: ok (clf: classification of species into 3 labels"),
        "{out}"
    );

    // Every kind of broken directory: the check refuses it naming the reason, and a deploy
    // refuses it with the same lines.
    let (reg, clf) = (w.join("reg"), w.join("clf"));
    let toml = |d: &Path| d.join("model.toml");
    let cases: Vec<(&str, PathBuf, &str)> = vec![
        (
            "an unsupported operator",
            broken(&clf, &w.join("op"), |d| {
                replace_in(
                    &d.join("model.onnx"),
                    "TreeEnsembleClassifier",
                    "TreeEnsembleMadeUpName",
                )
            }),
            "operator `TreeEnsembleMadeUpName`",
        ),
        (
            "labels not the graph's",
            broken(&clf, &w.join("labels"), |d| {
                replace_in(&toml(d), "\"virginica\"]", "\"tulip\"]")
            }),
            "\"tulip\"",
        ),
        (
            "a property_ranges key naming no output",
            broken(&reg, &w.join("range"), |d| {
                replace_in(
                    &toml(d),
                    "property_ranges.progression]",
                    "property_ranges.progresion]",
                )
            }),
            "property_ranges.progresion",
        ),
        (
            "a test example the model cannot answer",
            broken(&reg, &w.join("example"), |d| {
                // The first example's age as text, not a number.
                let text = std::fs::read_to_string(toml(d)).unwrap();
                let at = text.find("features = { age = ").unwrap() + "features = { age = ".len();
                let end = at + text[at..].find(',').unwrap();
                let text = format!("{}\"old\"{}", &text[..at], &text[end..]);
                std::fs::write(toml(d), text).unwrap();
            }),
            "data.features.age",
        ),
        (
            "a feature count the graph does not take",
            broken(&reg, &w.join("width"), |d| {
                replace_in(&toml(d), "\"s6\"]", "\"s6\", \"s7\"]");
                let text = std::fs::read_to_string(toml(d)).unwrap();
                let text = text.replace("features = { age", "features = { s7 = 0.0, age");
                std::fs::write(toml(d), text).unwrap();
            }),
            "takes 10 values per row",
        ),
        (
            "a missing file",
            broken(&reg, &w.join("file"), |d| {
                std::fs::remove_file(d.join("model.onnx")).unwrap()
            }),
            "model.onnx: No such file",
        ),
    ];
    let onnx = component("onnx-model");
    let data = w.join("data");
    for (what, dir, reason) in &cases {
        let d = dir.to_str().unwrap();
        let started = Instant::now();
        let (ok, out, err) = host(w, &["model", "check", d]);
        assert!(!ok, "{what}: model check passed it:\n{out}{err}");
        assert!(out.contains(reason), "{what}: model check said\n{out}");
        assert!(
            err.contains("1 of 1 model directories have problems"),
            "{what}: {err}"
        );
        let lines = problems(&out);
        assert!(!lines.is_empty(), "{what}: {out}");
        let mount = format!("{d}:/model");
        let deploy = [
            "model",
            onnx.to_str().unwrap(),
            "--dir",
            &mount,
            "--registry",
            "http://127.0.0.1:9",
            "--data-dir",
            data.to_str().unwrap(),
        ];
        let (ok, _, said) = host(w, &deploy);
        assert!(!ok, "{what}: the deploy started");
        for line in &lines {
            assert!(
                said.contains(line.as_str()),
                "{what}: the deploy did not say\n{line}\nit said:\n{said}"
            );
        }
        eprintln!(
            "{what}: refused in {:?}: {}",
            started.elapsed(),
            lines.join(" | ")
        );
    }

    // What init wrote deploys unchanged, and answers as onnxruntime does.
    let models = temp_dir();
    let stack = Stack::up(
        &[
            "--models",
            models.path().to_str().unwrap(),
            "--watch-interval",
            "300ms",
        ],
        4,
    );
    for name in ["reg", "clf"] {
        std::fs::rename(w.join(name), models.path().join(name)).unwrap();
    }
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("expected.json")).unwrap()).unwrap();
    let c = Client::new();
    for (name, exported) in [("reg", "regression"), ("clf", "classifier")] {
        wait_until_healthy(&c, &stack, name).await;
        let examples = c
            .get(&stack.app(&format!("/models/{name}/test_examples")))
            .await
            .value();
        let examples = examples["examples"].as_array().unwrap().clone();
        assert_eq!(examples.len(), 3, "{name}: {examples:?}");
        for e in examples {
            // "held-out row N": line N of the held-out CSV, row N - 2 of onnxruntime's answers.
            let line: usize = e["name"]
                .as_str()
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let want = &expected[exported][line - 2];
            let body =
                serde_json::json!({"input_type": "tabular", "data": {"features": e["features"]}});
            let r = c
                .post_json(&stack.app(&format!("/models/{name}/predict")), &body, None)
                .await;
            assert_eq!(r.status, 200, "{name}: {}", r.text());
            let got = &r.value()["results"]["prediction"];
            match want.as_f64() {
                Some(want) => {
                    let got = got.as_f64().unwrap_or_else(|| panic!("{name}: {got}"));
                    assert!(
                        (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                        "{name} line {line}: {got} against onnxruntime's {want}"
                    );
                }
                None => assert_eq!(got, want, "{name} line {line}"),
            }
        }
    }
}
