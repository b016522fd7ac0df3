//! Rules for a model deployment (interface B, spec 2.3-2.12, 4.2, 7, 8).

use super::examples::{request_for, results_match};
use super::report::{Level, Report};
use super::{Probe, json_of};
use hyper::Method;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// GETs `path`, expecting 200 and the documented shape, plus whatever `more` finds; records
/// the rule and gives back the answer.
async fn record(
    probe: &Probe<'_>,
    report: &mut Report,
    rule: &str,
    path: &str,
    more: impl Fn(&Value) -> Vec<String>,
) -> Option<Value> {
    let outcome = match probe.call(Method::GET, path, None).await {
        Err(e) => Err(e),
        Ok(r) if r.status != 200 => Err(format!("GET {path}: expected 200, got {}", r.status)),
        Ok(r) => json_of(&r),
    };
    let (problems, value) = match outcome {
        Ok(v) => {
            let mut problems = probe.shape(&Method::GET, path, 200, &v);
            problems.extend(more(&v));
            (problems, Some(v))
        }
        Err(e) => (vec![e], None),
    };
    let description = format!("GET {path} answers 200 with the documented fields");
    report.rule(rule, Level::Must, &description, problems);
    value
}

/// A problem unless `v[field]` is a non-empty array (the schemas do not say "non-empty").
fn non_empty(v: &Value, field: &str) -> Vec<String> {
    match v[field].as_array() {
        Some(list) if !list.is_empty() => vec![],
        _ => vec![format!("{field}: expected a non-empty array")],
    }
}

/// Runs every rule but `B.shutdown`; gives back `/capabilities` and `/test_examples` when
/// both answered, for the rules that build requests from them.
pub async fn check(probe: &Probe<'_>, report: &mut Report) -> Option<(Value, Value)> {
    record(probe, report, "B.health", "/health", |_| vec![]).await;
    health_latency(probe, report).await;
    let caps = record(probe, report, "B.capabilities", "/capabilities", |v| {
        non_empty(v, "capabilities")
    })
    .await;
    let no_more = |_: &Value| vec![];
    record(
        probe,
        report,
        "B.acceptable_ranges",
        "/acceptable_ranges",
        no_more,
    )
    .await;
    record(probe, report, "B.info", "/info", no_more).await;
    let before = record(probe, report, "B.metrics", "/metrics", no_more).await;
    record(probe, report, "B.citation", "/citation", no_more).await;
    let examples = record(probe, report, "B.test_examples", "/test_examples", |v| {
        non_empty(v, "examples")
    })
    .await;
    if let (Some(caps), Some(examples)) = (&caps, &examples) {
        predict_examples(probe, report, caps, examples).await;
    }
    malformed_predictions(probe, report).await;
    if let Some(before) = before {
        metrics_grow(probe, report, &before).await;
    }
    unknown_route(probe, report).await;
    caps.zip(examples)
}

/// Spec 2.12: `/shutdown` either refuses (403 with the error body) or stops the deployment
/// after answering `{success, message}`.
pub async fn shutdown(probe: &Probe<'_>, report: &mut Report) {
    let problems = match probe.json(Method::POST, "/shutdown", None).await {
        Err(e) => vec![e],
        Ok((status @ (200 | 403), v)) => probe.shape(&Method::POST, "/shutdown", status, &v),
        Ok((s, v)) => vec![format!(
            "expected 403 with the error body or 200 {{success, message}}, got {s}: {v}"
        )],
    };
    report.rule(
        "B.shutdown",
        Level::Must,
        "POST /shutdown answers 403 with the error body, or 200 {success, message}",
        problems,
    );
}

async fn health_latency(probe: &Probe<'_>, report: &mut Report) {
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        if probe.call(Method::GET, "/health", None).await.is_ok() {
            times.push(t.elapsed());
        }
    }
    times.sort();
    let problems = match times.get(times.len() / 2) {
        None => vec!["/health did not answer".into()],
        Some(m) if *m >= Duration::from_millis(100) => {
            vec![format!("median of 5: expected under 100 ms, got {m:?}")]
        }
        Some(_) => vec![],
    };
    report.rule(
        "B.health.latency",
        Level::Must,
        "/health answers in under 100 ms (spec 8)",
        problems,
    );
}

/// Every test example sent to `/predict` as `usage_instructions.body_format` describes it.
async fn predict_examples(probe: &Probe<'_>, report: &mut Report, caps: &Value, examples: &Value) {
    let format = &examples["usage_instructions"]["body_format"];
    let schemas: Vec<&Map<String, Value>> = caps["capabilities"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["output_schema"].as_object())
        .collect();
    let mut problems = Vec::new();
    for ex in examples["examples"].as_array().into_iter().flatten() {
        let name = ex["name"].as_str().unwrap_or("?");
        let body = request_for(format, ex, caps);
        let v = match probe.json(Method::POST, "/predict", Some(body)).await {
            Ok((200, v)) if v["success"] == json!(true) => v,
            Ok((status, v)) => {
                problems.push(format!(
                    "example {name}: expected 200 with success true, got {status} {v}"
                ));
                continue;
            }
            Err(e) => {
                problems.push(format!("example {name}: {e}"));
                continue;
            }
        };
        let shape = probe.shape(&Method::POST, "/predict", 200, &v);
        problems.extend(shape.into_iter().map(|p| format!("example {name}: {p}")));
        if !schemas.is_empty() && !schemas.iter().any(|s| results_match(&v["results"], s)) {
            problems.push(format!(
                "example {name}: results match no capability's output_schema: {}",
                v["results"]
            ));
        }
    }
    report.rule(
        "B.predict.examples",
        Level::Must,
        "every /test_examples example predicts successfully, results typed as output_schema says",
        problems,
    );
}

async fn malformed_predictions(probe: &Probe<'_>, report: &mut Report) {
    let cases: [(&str, &str, &[u8]); 4] = [
        (
            "B.predict.malformed_json",
            "malformed JSON",
            b"{\"input_type\": ",
        ),
        (
            "B.predict.missing_input_type",
            "no input_type",
            br#"{"data": {}}"#,
        ),
        (
            "B.predict.missing_data",
            "no data",
            br#"{"input_type": "text"}"#,
        ),
        (
            "B.predict.unlisted_input_type",
            "an input_type no capability lists",
            br#"{"input_type": "no-such-type", "data": {}}"#,
        ),
    ];
    for (rule, what, body) in cases {
        let problems =
            error_answer(probe, Method::POST, "/predict", Some(body.to_vec()), 400).await;
        report.rule(
            rule,
            Level::Must,
            &format!("/predict with {what} answers 400 with the error body"),
            problems,
        );
    }
}

/// Problems unless `method path` answers `status` with the error body (spec 7).
async fn error_answer(
    probe: &Probe<'_>,
    method: Method,
    path: &str,
    body: Option<Vec<u8>>,
    status: u16,
) -> Vec<String> {
    match probe.call(method, path, body).await {
        Err(e) => vec![e],
        Ok(r) if r.status != status => vec![format!(
            "expected {status}, got {}: {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        )],
        Ok(r) => json_of(&r)
            .map(|v| probe.schema("ErrorBody", &v))
            .unwrap_or_else(|e| vec![e]),
    }
}

async fn metrics_grow(probe: &Probe<'_>, report: &mut Report, before: &Value) {
    let problems = match probe.ok_json(Method::GET, "/metrics", None).await {
        Ok(after) => {
            let (b, a) = (
                before["requests_served"].as_u64().unwrap_or(0),
                after["requests_served"].as_u64().unwrap_or(0),
            );
            if a > b {
                vec![]
            } else {
                vec![format!(
                    "requests_served: expected more than {b} after predictions, got {a}"
                )]
            }
        }
        Err(e) => vec![e],
    };
    report.rule(
        "B.metrics.counts",
        Level::Must,
        "requests_served grows with predictions",
        problems,
    );
}

async fn unknown_route(probe: &Probe<'_>, report: &mut Report) {
    let path = "/no-such-route-for-conformance";
    let problems = error_answer(probe, Method::GET, path, None, 404).await;
    report.rule(
        "B.unknown_route",
        Level::Should,
        "an unknown route answers 404 with the error body (spec silent)",
        problems,
    );
}
