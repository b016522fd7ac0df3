//! A minimal model for the SDK's own tests: `tabular` input, echoed back. `data.outcome`
//! steers it: `"fail"` → 200 with `success: false`, `"fault"` → 500. With the variable
//! `echo_broken=true` it fails its own test examples, so `/health` must stay 503; with
//! `echo_busy_ms=N` every prediction keeps the CPU busy for N ms (a self-test under load).
//! `GET /headers` (not the model interface's) answers the names of the request's headers,
//! for tests of what the host lets through to a component.

use model_sdk::*;
use serde_json::{Map, Value, json};
use spin_sdk::http::IncomingRequest;
use spin_sdk::http_component;
use std::collections::BTreeMap;

struct Echo;

#[http_component]
async fn handle(req: IncomingRequest, out: model_sdk::ResponseOutparam) {
    if req.path_with_query().as_deref() == Some("/headers") {
        let names: Vec<String> = req
            .headers()
            .entries()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        return model_sdk::respond(out, guest_kit::http::json(200, &json!({"headers": names})));
    }
    model_sdk::respond(out, model_sdk::serve(&Echo, req).await);
}

impl Model for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn info(&self) -> ModelInfo {
        ModelInfo {
            name: "echo".into(),
            description: "test model: echoes its input".into(),
            license: "MIT".into(),
            citation: "none".into(),
            maintainer: "tests".into(),
            model_version: None,
        }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            model: "echo".into(),
            capabilities: vec![Capability {
                name: "echo".into(),
                input_types: vec![InputType::Tabular],
                output_schema: BTreeMap::from([("echo".into(), OutputType::Object)]),
                description: "returns data".into(),
            }],
            elements: None,
        }
    }
    fn acceptable_ranges(&self) -> AcceptableRanges {
        AcceptableRanges {
            model: "echo".into(),
            version: SPEC_VERSION.into(),
            description: "no ranges".into(),
            property_ranges: BTreeMap::new(),
            chemical_scope: ChemicalScope {
                supported_features: vec![],
                limitations: vec![],
            },
            usage_recommendations: vec![],
            input: None,
        }
    }
    fn citation(&self) -> Citation {
        Citation {
            paper_citation: "none".into(),
            software_bibtex: "@misc{echo}".into(),
        }
    }
    fn test_examples(&self) -> TestExamples {
        TestExamples {
            examples: vec![Example {
                name: "one".into(),
                description: "echoes a number".into(),
                category: "test".into(),
                input: Map::from_iter([("value".to_owned(), json!(1))]),
            }],
            usage_instructions: UsageInstructions {
                endpoint: "/predict".into(),
                method: "POST".into(),
                body_format: json!({"input_type": "tabular", "data": {"value": "<any>"}}),
            },
            expected_output: json!({"success": "true", "results": {"echo": "the data"}}),
            notes: vec![],
        }
    }
    fn predict(&self, _t: InputType, data: &Map<String, Value>) -> Result<Value, PredictError> {
        let broken = guest_kit::config::variable("echo_broken")
            .ok()
            .flatten()
            .as_deref()
            == Some("true");
        let busy_ms: u64 = guest_kit::config::parsed("echo_busy_ms", 0).unwrap_or(0);
        let until = std::time::Instant::now() + std::time::Duration::from_millis(busy_ms);
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
        // `outcome` at the top of `data`, or in `features` (each item of a batch's rows).
        let outcome = data
            .get("outcome")
            .or_else(|| data.get("features").and_then(|f| f.get("outcome")));
        match outcome.and_then(Value::as_str) {
            _ if broken => Err(PredictError::Failed("echo is configured broken".into())),
            Some("fail") => Err(PredictError::Failed("asked to fail".into())),
            Some("fault") => Err(PredictError::Fault("asked to fault".into())),
            _ => Ok(json!({"echo": data})),
        }
    }
}
