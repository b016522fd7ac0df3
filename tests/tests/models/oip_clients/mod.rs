//! The standard clients of the Open Inference Protocol call every shipped model (issue 59):
//! tritonclient's HTTP client and KServe's `InferenceRESTClient`, with their default
//! arguments, driven by tests/python/oip_clients.py from the environment
//! target/test-python-oip (tests/python/oip-requirements.txt, installed by `cargo xtask
//! test`), against `runtime-host up` (each model's own port and the app port) and the real
//! `spin up` (each model's base URL). Every call must succeed, and every output must hold
//! what v1.2 `/predict` answers for the same inputs, item by item ([`compare`]). And
//! schemathesis fuzzes a served model against the protocol's own OpenAPI document
//! ([`fuzz`]).

mod compare;
mod fuzz;
mod hosts;
mod plan;

use e2e_tests::tools::{Tool, require_or_skip};
use e2e_tests::{Client, workspace_root};
use plan::Plan;
use serde_json::{Value, json};
use std::path::PathBuf;

/// The shipped models, as `runtime-host up` and spin.toml serve them.
pub const MODELS: &[&str] = &e2e_tests::stack::SHIPPED_MODELS;

/// The clients' environment, or `None` where `cargo xtask test` could not install it (see
/// [`require_or_skip`]).
pub fn oip_python(test: &str) -> Option<PathBuf> {
    let venv = e2e_tests::pinned_python_env(
        "target/test-python-oip",
        "tests/python/oip-requirements.txt",
        "bin/python",
    );
    require_or_skip(Tool::OipPython, test, venv)
}

/// The protocol's OpenAPI document (target/oip-openapi/dataplane.json, from the wheel
/// tests/python/oip-openapi.txt pins), or `None` where `cargo xtask test` could not fetch it
/// (see [`require_or_skip`]).
pub fn oip_document(test: &str) -> Option<PathBuf> {
    let dir = workspace_root().join("target/oip-openapi");
    let pinned = std::fs::read_to_string(workspace_root().join("tests/python/oip-openapi.txt"));
    let fetched = std::fs::read_to_string(dir.join("pin.txt"));
    let document = dir.join("dataplane.json");
    let current = document.is_file() && pinned.is_ok() && pinned.ok() == fetched.ok();
    require_or_skip(Tool::OipPython, test, current.then_some(document))
}

/// One model as the clients reach it: `oip` is the URL they are given (the protocol's paths
/// below it), `v1` the base of the same deployment's v1.2 routes, `label` names it in reports.
pub struct Target {
    pub label: String,
    pub model: String,
    pub oip: String,
    pub v1: String,
}

/// Runs both clients on every target and asserts no call failed and every answer equals
/// v1.2's; returns how many answers were compared.
pub async fn clients_agree_with_v1(python: &std::path::Path, targets: &[Target]) -> usize {
    let c = Client::new();
    let mut plans: Vec<(Plan, &Target)> = Vec::new();
    for t in targets {
        plans.push((Plan::make(&c, t).await, t));
    }
    let calls: Vec<Value> = plans.iter().map(|(plan, t)| plan.call(&t.oip)).collect();
    let work = e2e_tests::temp_dir();
    let input = work.path().join("calls.json");
    std::fs::write(&input, json!({ "calls": calls }).to_string()).unwrap();
    let python = python.join("bin/python");
    let script = workspace_root().join("tests/python/oip_clients.py");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .arg(script)
            .arg(&input)
            .output()
            .expect("running tests/python/oip_clients.py")
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "oip_clients.py failed:\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("oip_clients.py printed no report ({e}):\n{stderr}"));
    let errors = report["errors"].as_array().unwrap();
    assert!(
        errors.is_empty(),
        "{} of {} client calls failed:\n{}",
        errors.len(),
        report["calls"],
        errors
            .iter()
            .map(|e| format!("- {}", e))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let answers = report["answers"].as_array().unwrap();
    let mut problems = Vec::new();
    let mut compared = 0;
    for (plan, t) in &plans {
        let mine: Vec<&Value> = answers
            .iter()
            .filter(|a| a["url"] == t.oip.as_str() && a["model"] == t.model.as_str())
            .collect();
        let expected = plan.modes();
        if mine.len() != expected {
            problems.push(format!(
                "{}: {} answers, expected {expected} (3 tritonclient modes, one per output \
                 alone, 3 kserve modes)",
                t.label,
                mine.len()
            ));
        }
        for answer in mine {
            compared += 1;
            for problem in compare::answer(plan, answer) {
                problems.push(format!(
                    "{} {} {}: {problem}",
                    t.label, answer["client"], answer["mode"]
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the clients' answers differ from v1.2's:\n{}",
        problems.join("\n")
    );
    compared
}
