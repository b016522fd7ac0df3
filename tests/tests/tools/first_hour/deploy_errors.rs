//! A model that cannot serve says why, everywhere it is deployed, at once (issue 46 §3):
//! every problem of a manifest in one answer without compiling anything; the reason of a
//! failed admin deploy in its answer; `serve` refusing at start-up instead of serving 503;
//! nothing left in the data directory by a failed deploy.

use e2e_tests::{Stack, component, host_refuses, model_dir, temp_dir};
use hyper::Method;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A copy of the iris model directory at `to`, changed by `change`.
fn iris_copy(to: &Path, change: impl FnOnce(&Path)) -> PathBuf {
    e2e_tests::copy_model(&model_dir("iris"), to);
    change(to);
    to.to_owned()
}

/// iris's manifest without `[citation]` and `maintainer`, and one property range without its
/// validation metrics: the three problems a newcomer met one compile at a time.
fn three_problems(dir: &Path) {
    let text = std::fs::read_to_string(dir.join("model.toml")).unwrap();
    let (before, rest) = text.split_once("[citation]").unwrap();
    let (_, after) = rest.split_once("[capability]").unwrap();
    let text = format!("{before}[capability]{after}")
        .replace("maintainer = \"edge model runtime team\"\n", "")
        .replacen(
            "[acceptable_ranges.property_ranges.sepal_width_cm.validation_metrics]",
            "[acceptable_ranges.property_ranges.sepal_width_cm.metrics]",
            1,
        );
    std::fs::write(dir.join("model.toml"), text).unwrap();
}

fn assert_three_problems(text: &str) {
    assert!(text.contains("[citation]: missing"), "{text}");
    assert!(text.contains("missing field `maintainer`"), "{text}");
    assert!(
        text.contains("sepal_width_cm]: missing field `validation_metrics`"),
        "{text}"
    );
}

fn snapshots_of(data: &Path, name: &str) -> usize {
    std::fs::read_dir(data.join("snapshots").join(name)).map_or(0, |d| d.count())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_deploy_says_why_and_leaves_nothing_behind() {
    let work = temp_dir();
    let stack = Stack::up(&["--models", work.path().to_str().unwrap()], 4);

    // Every problem of the manifest, in one answer, before anything is copied or compiled.
    let listed = iris_copy(&work.path().join(".listed"), three_problems);
    let started = Instant::now();
    let body = serde_json::json!({"path": listed, "name": "listed"});
    let r = stack.admin(Method::POST, "", Some(body)).await;
    // No compile, no copy: seconds at most even on a loaded machine (a compile takes 25 s).
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.status, 503, "{}", r.text());
    assert_three_problems(&r.text());
    assert_eq!(snapshots_of(stack.data_dir(), "listed"), 0);

    // A graph that is not ONNX: found by the self-test, and the answer says so (before, it
    // ended in "(/health answered 503):" and nothing).
    let broken = iris_copy(&work.path().join(".broken"), |d| {
        std::fs::write(d.join("model.onnx"), b"not a graph").unwrap()
    });
    let body = serde_json::json!({"path": broken, "name": "broken"});
    let r = stack.admin(Method::POST, "", Some(body)).await;
    assert_eq!(r.status, 503, "{}", r.text());
    let why = r.value()["error"].as_str().unwrap_or_default().to_owned();
    assert!(why.contains("broken could not be deployed"), "{why}");
    assert!(why.contains("model.onnx") && why.contains("ONNX"), "{why}");
    assert!(!why.trim_end().ends_with(':'), "{why}");
    // What the failed deploy copied goes.
    let started = Instant::now();
    while snapshots_of(stack.data_dir(), "broken") > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "snapshots left"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(stack.deployment("broken").await, None);
}

/// `serve` with a broken model directory stops at start-up naming every problem (before, it
/// logged `listening` and answered 503 to everything), and so does `model`.
#[test]
fn serve_refuses_a_broken_manifest_at_start_up() {
    let work = temp_dir();
    let dir = iris_copy(&work.path().join("iris"), three_problems);
    let data = work.path().join("data");
    let (onnx, data) = (component("onnx_model"), data.display().to_string());
    let mount = format!("{}:/model", dir.display());
    let onnx = onnx.to_str().unwrap();
    let serve = ["serve", onnx, "--dir", &mount, "--listen", "127.0.0.1:0"];
    let err = host_refuses(
        &[&serve[..], &["--data-dir", &data]].concat(),
        Duration::from_secs(20),
    );
    assert!(err.contains("cannot serve"), "{err}");
    assert_three_problems(&err);
    assert!(!err.contains("listening"), "{err}");
    let model = [
        "model",
        onnx,
        "--dir",
        &mount,
        "--registry",
        "http://127.0.0.1:9",
    ];
    let err = host_refuses(
        &[&model[..], &["--data-dir", &data]].concat(),
        Duration::from_secs(20),
    );
    assert_three_problems(&err);
}
