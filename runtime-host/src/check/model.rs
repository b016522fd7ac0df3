//! Rules for a model deployment (interface B, spec 2.3-2.12, 4.2, 7, 8).

use super::report::{Level, Report};
use super::shape::{Kind, error_body, fields};
use super::{Probe, json_of};
use crate::client::Reply;
use hyper::Method;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

const INPUT_TYPES: [&str; 4] = ["text", "image", "audio", "tabular"];
const OUTPUT_TYPES: [&str; 4] = ["array", "object", "float", "string"];
/// Names under which models commonly take their input.
const INPUT_FIELDS: [&str; 8] = [
    "text",
    "smiles",
    "input",
    "image",
    "image_url",
    "audio",
    "audio_url",
    "table",
];
/// Example fields that describe the example rather than being model input.
const EXAMPLE_META: [&str; 5] = [
    "name",
    "description",
    "category",
    "expected",
    "expected_output",
];

pub struct ModelCheck<'a> {
    pub probe: Probe<'a>,
    pub report: &'a mut Report,
}

impl ModelCheck<'_> {
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Reply, String> {
        self.probe.call(method, path, body).await
    }

    /// GETs `path`, expecting 200 and JSON; records a rule about the record's shape.
    async fn record(
        &mut self,
        rule: &str,
        path: &str,
        check: impl Fn(&Value) -> Vec<String>,
    ) -> Option<Value> {
        let outcome = match self.call(Method::GET, path, None).await {
            Err(e) => Err(e),
            Ok(r) if r.status != 200 => Err(format!("GET {path}: expected 200, got {}", r.status)),
            Ok(r) => json_of(&r),
        };
        let (problems, value) = match outcome {
            Ok(v) => (check(&v), Some(v)),
            Err(e) => (vec![e], None),
        };
        let description = format!("GET {path} answers 200 with the documented fields");
        self.report.rule(rule, Level::Must, &description, problems);
        value
    }

    /// Runs every rule. `probe_shutdown` sends `POST /shutdown` last: a deployment that
    /// honours it stops, so everything else has been judged by then.
    pub async fn run(mut self, probe_shutdown: bool) {
        self.record("B.health", "/health", |v| {
            let mut p = fields(
                v,
                "health",
                &[
                    ("status", Kind::Str),
                    ("model", Kind::Str),
                    ("version", Kind::Str),
                ],
            );
            if v.get("status")
                .and_then(Value::as_str)
                .is_some_and(|s| s != "ok")
            {
                p.push(format!(
                    "health.status: expected \"ok\", got {}",
                    v["status"]
                ));
            }
            if let Some(ver) = v.get("version").and_then(Value::as_str)
                && !ver.starts_with("1.2.")
            {
                p.push(format!("health.version: expected 1.2.x, got {ver}"));
            }
            p
        })
        .await;
        self.health_latency().await;
        let caps = self
            .record("B.capabilities", "/capabilities", capabilities_problems)
            .await;
        self.record("B.acceptable_ranges", "/acceptable_ranges", ranges_problems)
            .await;
        self.record("B.info", "/info", |v| {
            fields(
                v,
                "info",
                &[
                    ("name", Kind::Str),
                    ("description", Kind::Str),
                    ("license", Kind::Str),
                    ("citation", Kind::Str),
                    ("maintainer", Kind::Str),
                ],
            )
        })
        .await;
        let before = self.record("B.metrics", "/metrics", metrics_problems).await;
        self.record("B.citation", "/citation", |v| {
            fields(
                v,
                "citation",
                &[
                    ("paper_citation", Kind::Str),
                    ("software_bibtex", Kind::Str),
                ],
            )
        })
        .await;
        let examples = self
            .record("B.test_examples", "/test_examples", examples_problems)
            .await;
        if let (Some(caps), Some(examples)) = (&caps, &examples) {
            self.predict_examples(caps, examples).await;
            super::openapi::check(&self.probe, self.report, caps, examples).await;
        }
        self.malformed_predictions().await;
        if let Some(before) = before {
            self.metrics_grow(&before).await;
        }
        self.unknown_route().await;
        if probe_shutdown {
            self.shutdown().await;
        }
    }

    /// Spec 2.12: `/shutdown` either refuses (403 with the error body) or stops the
    /// deployment after answering `{success, message}`.
    async fn shutdown(&mut self) {
        let problems = match self.call(Method::POST, "/shutdown", None).await {
            Err(e) => vec![e],
            Ok(r) => match (r.status, json_of(&r)) {
                (_, Err(e)) => vec![e],
                (403, Ok(v)) => error_body(&v, "error"),
                (200, Ok(v)) => fields(
                    &v,
                    "shutdown",
                    &[("success", Kind::Bool), ("message", Kind::Str)],
                ),
                (s, Ok(v)) => vec![format!(
                    "expected 403 with the error body or 200 {{success, message}}, got {s}: {v}"
                )],
            },
        };
        self.report.rule(
            "B.shutdown",
            Level::Must,
            "POST /shutdown answers 403 with the error body, or 200 {success, message}",
            problems,
        );
    }

    async fn health_latency(&mut self) {
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            if self.call(Method::GET, "/health", None).await.is_ok() {
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
        self.report.rule(
            "B.health.latency",
            Level::Must,
            "/health answers in under 100 ms (spec 8)",
            problems,
        );
    }

    /// Every test example sent to `/predict` as `usage_instructions.body_format` describes it.
    async fn predict_examples(&mut self, caps: &Value, examples: &Value) {
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
            let reply = match self
                .call(
                    Method::POST,
                    "/predict",
                    Some(body.to_string().into_bytes()),
                )
                .await
            {
                Ok(r) => r,
                Err(e) => {
                    problems.push(format!("example {name}: {e}"));
                    continue;
                }
            };
            let v = match json_of(&reply) {
                Ok(v) => v,
                Err(e) => {
                    problems.push(format!("example {name}: {e}"));
                    continue;
                }
            };
            if reply.status != 200 || v["success"] != json!(true) {
                problems.push(format!(
                    "example {name}: expected 200 with success true, got {} {v}",
                    reply.status
                ));
                continue;
            }
            problems.extend(fields(
                &v,
                &format!("predict[{name}]"),
                &[
                    ("success", Kind::Bool),
                    ("model_name", Kind::Str),
                    ("results", Kind::Obj),
                    ("computation_time_ms", Kind::Num),
                ],
            ));
            if !v
                .as_object()
                .is_some_and(|o| o.contains_key("error_message"))
            {
                problems.push(format!(
                    "predict[{name}].error_message: missing (expected null)"
                ));
            }
            if !schemas.is_empty() && !schemas.iter().any(|s| results_match(&v["results"], s)) {
                problems.push(format!(
                    "example {name}: results match no capability's output_schema: {}",
                    v["results"]
                ));
            }
        }
        self.report.rule("B.predict.examples", Level::Must, "every /test_examples example predicts successfully, results typed as output_schema says", problems);
    }

    async fn malformed_predictions(&mut self) {
        let cases: [(&str, &str, Vec<u8>); 4] = [
            (
                "B.predict.malformed_json",
                "malformed JSON",
                b"{\"input_type\": ".to_vec(),
            ),
            (
                "B.predict.missing_input_type",
                "no input_type",
                br#"{"data": {}}"#.to_vec(),
            ),
            (
                "B.predict.missing_data",
                "no data",
                br#"{"input_type": "text"}"#.to_vec(),
            ),
            (
                "B.predict.unlisted_input_type",
                "an input_type no capability lists",
                br#"{"input_type": "no-such-type", "data": {}}"#.to_vec(),
            ),
        ];
        for (rule, what, body) in cases {
            let problems = match self.call(Method::POST, "/predict", Some(body)).await {
                Err(e) => vec![e],
                Ok(r) if r.status != 400 => vec![format!(
                    "expected 400, got {}: {}",
                    r.status,
                    String::from_utf8_lossy(&r.body)
                )],
                Ok(r) => json_of(&r)
                    .map(|v| error_body(&v, "error"))
                    .unwrap_or_else(|e| vec![e]),
            };
            self.report.rule(
                rule,
                Level::Must,
                &format!("/predict with {what} answers 400 with the error body"),
                problems,
            );
        }
    }

    async fn metrics_grow(&mut self, before: &Value) {
        let problems = match self
            .call(Method::GET, "/metrics", None)
            .await
            .map(|r| json_of(&r))
        {
            Ok(Ok(after)) => {
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
            Ok(Err(e)) | Err(e) => vec![e],
        };
        self.report.rule(
            "B.metrics.counts",
            Level::Must,
            "requests_served grows with predictions",
            problems,
        );
    }

    async fn unknown_route(&mut self) {
        let problems = match self
            .call(Method::GET, "/no-such-route-for-conformance", None)
            .await
        {
            Err(e) => vec![e],
            Ok(r) if r.status != 404 => vec![format!("expected 404, got {}", r.status)],
            Ok(r) => json_of(&r)
                .map(|v| error_body(&v, "error"))
                .unwrap_or_else(|e| vec![e]),
        };
        self.report.rule(
            "B.unknown_route",
            Level::Should,
            "an unknown route answers 404 with the error body (spec silent)",
            problems,
        );
    }
}

/// The `/predict` body an example stands for: `body_format` with its `<placeholder>` values
/// removed and the example's input put in the first placeholder's place.
pub fn request_for(format: &Value, example: &Value, caps: &Value) -> Value {
    let input_type = format["input_type"]
        .as_str()
        .filter(|t| INPUT_TYPES.contains(t))
        .map(str::to_owned)
        .or_else(|| {
            caps["capabilities"][0]["input_types"][0]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "text".into());
    let is_placeholder = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.starts_with('<') && s.ends_with('>'))
    };
    let mut data = Map::new();
    let mut placeholders = Vec::new();
    for (k, v) in format["data"].as_object().into_iter().flatten() {
        if is_placeholder(v) {
            placeholders.push(k.clone());
        } else {
            data.insert(k.clone(), v.clone());
        }
    }
    let inputs: Vec<(&String, &Value)> = example
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !EXAMPLE_META.contains(&k.as_str()))
        .collect();
    // JSON objects carry no order we can rely on: take the placeholder named like the
    // example's input, else one named like an input, else the first.
    let slot = placeholders
        .iter()
        .find(|p| inputs.iter().any(|(k, _)| k == p))
        .or_else(|| {
            placeholders
                .iter()
                .find(|p| INPUT_FIELDS.contains(&p.as_str()))
        })
        .or(placeholders.first())
        .cloned();
    match (slot, inputs.as_slice()) {
        (Some(slot), [(_, v), ..]) => {
            data.insert(slot, (*v).clone());
        }
        (_, inputs) => data.extend(inputs.iter().map(|(k, v)| ((*k).clone(), (*v).clone()))),
    }
    json!({"input_type": input_type, "data": data})
}

fn results_match(results: &Value, schema: &Map<String, Value>) -> bool {
    schema.iter().all(|(field, ty)| match results.get(field) {
        None => true,
        Some(v) => match ty.as_str() {
            Some("float") => v.is_number(),
            Some("string") => v.is_string(),
            Some("object") => v.is_object(),
            Some("array") => v.is_array(),
            _ => false,
        },
    })
}

fn capabilities_problems(v: &Value) -> Vec<String> {
    let mut p = fields(
        v,
        "capabilities",
        &[("model", Kind::Str), ("capabilities", Kind::Any)],
    );
    match v["capabilities"].as_array() {
        Some(list) if !list.is_empty() => {
            for (i, c) in list.iter().enumerate() {
                let path = format!("capabilities[{i}]");
                p.extend(fields(
                    c,
                    &path,
                    &[
                        ("name", Kind::Str),
                        ("input_types", Kind::StrArray),
                        ("output_schema", Kind::Obj),
                        ("description", Kind::Str),
                    ],
                ));
                for t in c["input_types"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if !INPUT_TYPES.contains(&t) {
                        p.push(format!(
                            "{path}.input_types: `{t}` is not one of text, image, audio, tabular"
                        ));
                    }
                }
                for (k, t) in c["output_schema"].as_object().into_iter().flatten() {
                    if !t.as_str().is_some_and(|t| OUTPUT_TYPES.contains(&t)) {
                        p.push(format!("{path}.output_schema.{k}: expected one of array, object, float, string, got {t}"));
                    }
                }
            }
        }
        _ => p.push("capabilities.capabilities: expected a non-empty array".into()),
    }
    if let Some(e) = v.get("elements")
        && !e.as_array().is_some_and(|a| a.iter().all(Value::is_string))
    {
        p.push("capabilities.elements: expected an array of strings".into());
    }
    p
}

fn ranges_problems(v: &Value) -> Vec<String> {
    let mut p = fields(
        v,
        "ranges",
        &[
            ("model", Kind::Str),
            ("version", Kind::Str),
            ("description", Kind::Str),
            ("property_ranges", Kind::Obj),
            ("chemical_scope", Kind::Obj),
            ("usage_recommendations", Kind::StrArray),
        ],
    );
    for (code, r) in v["property_ranges"].as_object().into_iter().flatten() {
        let path = format!("property_ranges.{code}");
        p.extend(fields(
            r,
            &path,
            &[
                ("property_name", Kind::Str),
                ("unit", Kind::Str),
                ("training_range", Kind::Obj),
                ("reliable_range", Kind::Obj),
                ("training_samples", Kind::Int),
                ("validation_metrics", Kind::Obj),
            ],
        ));
        p.extend(fields(
            &r["training_range"],
            &format!("{path}.training_range"),
            &[("min", Kind::Num), ("max", Kind::Num), ("mean", Kind::Num)],
        ));
        p.extend(fields(
            &r["reliable_range"],
            &format!("{path}.reliable_range"),
            &[("min", Kind::Num), ("max", Kind::Num), ("note", Kind::Str)],
        ));
        p.extend(fields(
            &r["validation_metrics"],
            &format!("{path}.validation_metrics"),
            &[("R2", Kind::Str), ("typical_error", Kind::Str)],
        ));
    }
    p.extend(fields(
        &v["chemical_scope"],
        "ranges.chemical_scope",
        &[
            ("supported_features", Kind::StrArray),
            ("limitations", Kind::StrArray),
        ],
    ));
    p
}

fn metrics_problems(v: &Value) -> Vec<String> {
    fields(
        v,
        "metrics",
        &[
            ("uptime_s", Kind::Num),
            ("requests_served", Kind::Int),
            ("avg_latency_ms", Kind::Num),
            ("last_error", Kind::StrOrNull),
        ],
    )
}

fn examples_problems(v: &Value) -> Vec<String> {
    let mut p = fields(
        v,
        "test_examples",
        &[
            ("examples", Kind::Any),
            ("usage_instructions", Kind::Obj),
            ("expected_output", Kind::Obj),
            ("notes", Kind::StrArray),
        ],
    );
    match v["examples"].as_array() {
        Some(list) if !list.is_empty() => {
            for (i, e) in list.iter().enumerate() {
                p.extend(fields(
                    e,
                    &format!("examples[{i}]"),
                    &[
                        ("name", Kind::Str),
                        ("description", Kind::Str),
                        ("category", Kind::Str),
                    ],
                ));
            }
        }
        _ => p.push("test_examples.examples: expected a non-empty array".into()),
    }
    p.extend(fields(
        &v["usage_instructions"],
        "usage_instructions",
        &[
            ("endpoint", Kind::Str),
            ("method", Kind::Str),
            ("body_format", Kind::Obj),
        ],
    ));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_requests_fill_the_placeholder() {
        let format =
            json!({"input_type": "text", "data": {"text": "<SMILES>", "property": "<code>"}});
        let ex = json!({"name": "aspirin", "smiles": "CC(=O)O", "description": "d", "category": "c", "expected": {}});
        assert_eq!(
            request_for(&format, &ex, &json!({})),
            json!({"input_type": "text", "data": {"text": "CC(=O)O"}})
        );
        let no_format = request_for(
            &json!({}),
            &json!({"name": "n", "value": 1}),
            &json!({"capabilities": [{"input_types": ["tabular"]}]}),
        );
        assert_eq!(
            no_format,
            json!({"input_type": "tabular", "data": {"value": 1}})
        );
    }
}
