//! Bringing your own model takes one try (issue 46 §3, issue 57 §3): docs/own-model.md
//! followed as written. Its files (`<!-- file: PATH -->` before a code block) are written
//! out, its training script run with the tests' pinned scikit-learn and skl2onnx (default
//! export options: the classifier ends in ZipMap), its `runtime-host model init` commands run,
//! its edits (`<!-- edit: PATH -->`: the values to put in place of the `edit me` ones) made,
//! `runtime-host model check` passes both models, and both deploy by being moved into a
//! watched `--models` directory and answer their test examples on the app port.

use super::wait_until_healthy;
use e2e_tests::{Client, Stack, host_binary, shared_cache_dir, temp_dir, workspace_root};
use std::process::Command;

/// The blocks the page marks `<!-- KIND: PATH -->` (`file`, `edit`): each path and the
/// fenced block after it.
fn blocks_of(page: &str, kind: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut lines = page.lines();
    let marker = format!("<!-- {kind}: ");
    while let Some(line) = lines.next() {
        let Some(path) = line
            .trim()
            .strip_prefix(marker.as_str())
            .and_then(|l| l.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().expect("a code block after the file marker");
        assert!(fence.starts_with("```"), "{path}: {fence}");
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        files.push((path.to_owned(), body.join("\n") + "\n"));
    }
    files
}

/// `file`'s text with the values of `edit` (TOML `key = value` lines under `[section]`
/// headers) in place of the same keys' lines in the same sections, as the page asks the
/// reader to edit them.
fn edited(file: &str, edit: &str) -> String {
    let mut lines: Vec<String> = file.lines().map(str::to_owned).collect();
    let mut section = String::new();
    for line in edit.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with('[') {
            section = line.to_owned();
            continue;
        }
        let key = line.split_once(" = ").expect("key = value").0;
        let start = lines
            .iter()
            .position(|l| *l == section)
            .unwrap_or_else(|| panic!("model init wrote no {section}"));
        let at = lines[start + 1..]
            .iter()
            .take_while(|l| !l.starts_with('['))
            .position(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("model init wrote no {key} in {section}"));
        lines[start + 1 + at] = line.to_owned();
    }
    lines.join("\n") + "\n"
}

/// The page's `runtime-host model init ...` commands, as argument lists.
fn init_commands(page: &str) -> Vec<Vec<String>> {
    page.lines()
        .filter_map(|l| l.strip_prefix("runtime-host model init "))
        .map(|args| {
            ["model", "init"]
                .into_iter()
                .map(str::to_owned)
                .chain(args.split_whitespace().map(str::to_owned))
                .collect()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bring_your_own_model_page_works_as_written() {
    let Some(python) = e2e_tests::test_python("the bring-your-own-model page") else {
        return;
    };
    let page = std::fs::read_to_string(workspace_root().join("docs/own-model.md")).unwrap();
    let files = blocks_of(&page, "file");
    let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["train.py"]);
    let work = temp_dir();
    for (path, text) in &files {
        let to = work.path().join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, text).unwrap();
    }

    // 1. Train and export, as the page says.
    let trained = Command::new(python.join("bin/python"))
        .arg("train.py")
        .current_dir(work.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&trained.stdout).into_owned()
        + &String::from_utf8_lossy(&trained.stderr);
    assert!(trained.status.success(), "train.py: {said}");
    assert!(
        said.contains("['setosa', 'versicolor', 'virginica']"),
        "{said}"
    );

    // 2. Write the manifests: the page's `model init` commands, then its edits.
    let inits = init_commands(&page);
    assert_eq!(inits.len(), 2, "{inits:?}");
    for args in &inits {
        let out = Command::new(host_binary())
            .args(args)
            .current_dir(work.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {said}");
    }
    let edits = blocks_of(&page, "edit");
    let names: Vec<&str> = edits.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["flowers/model.toml", "diabetes/model.toml"]);
    for (path, edit) in &edits {
        let file = work.path().join(path);
        let text = edited(&std::fs::read_to_string(&file).unwrap(), edit);
        std::fs::write(&file, text).unwrap();
    }
    for (path, _) in &edits {
        let text = std::fs::read_to_string(work.path().join(path)).unwrap();
        assert!(
            !text.contains("= \"edit me"),
            "every placeholder edited:\n{text}"
        );
    }

    // 3. Check: both pass (the component started on each, its self-test run).
    let checked = Command::new(host_binary())
        .args(["model", "check", "flowers", "diabetes"])
        .current_dir(work.path())
        .env("RUNTIME_HOST_CACHE_DIR", shared_cache_dir())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&checked.stdout);
    assert!(
        checked.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(
        out.contains("flowers: ok (flowers: classification of species into 3 labels"),
        "{out}"
    );
    assert!(
        out.contains("diabetes: ok (diabetes: regression of progression"),
        "{out}"
    );

    // 4. Deploy: moved into the directory a running stack watches.
    let models = temp_dir();
    let dir = models.path().to_str().unwrap();
    let stack = Stack::up(&["--models", dir, "--watch-interval", "300ms"], 4);
    for name in ["flowers", "diabetes"] {
        std::fs::rename(work.path().join(name), models.path().join(name)).unwrap();
    }
    let c = Client::new();
    for name in ["flowers", "diabetes"] {
        wait_until_healthy(&c, &stack, name).await;
    }

    // 5. Call it: the page's request, and each model's own test example.
    let virginica = serde_json::json!({"input_type": "tabular", "data": {"features": {
        "sepal_length_cm": 6.3, "sepal_width_cm": 3.3, "petal_length_cm": 6.0, "petal_width_cm": 2.5}}});
    let r = c
        .post_json(&stack.app("/models/flowers/predict"), &virginica, None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let results = &r.value()["results"];
    assert_eq!(results["prediction"], "virginica", "{results}");
    let p = &results["probabilities"];
    let total: f64 = ["setosa", "versicolor", "virginica"]
        .iter()
        .map(|l| p[l].as_f64().unwrap_or_else(|| panic!("{l} in {p}")))
        .sum();
    assert!(
        (total - 1.0).abs() < 1e-4,
        "probabilities of the three labels: {p}"
    );
    assert_eq!(results["in_domain"], true, "{results}");

    let examples = c
        .get(&stack.app("/models/diabetes/test_examples"))
        .await
        .value();
    let features = &examples["examples"][0]["features"];
    let request = serde_json::json!({"input_type": "tabular", "data": {"features": features}});
    let r = c
        .post_json(&stack.app("/models/diabetes/predict"), &request, None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let progression = r.value()["results"]["prediction"].as_f64().unwrap();
    // train.py printed scikit-learn's own prediction for that row.
    let sklearn: f64 = said
        .lines()
        .find_map(|l| l.strip_prefix("diabetes: first held-out row"))
        .and_then(|l| l.rsplit("-> ").next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("scikit-learn's prediction in {said}"));
    assert!(
        (progression - sklearn).abs() < 0.5,
        "the served forest {progression} against scikit-learn's {sklearn}"
    );
}
