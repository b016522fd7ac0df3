//! Rule `B.openapi`: a deployment that serves its own OpenAPI document (`GET /openapi.json`,
//! as every model built with the model SDK does) answers as that document says: each
//! description route, and each test example both as a request the document accepts and as
//! an answer it describes. A deployment without the route is not judged (the specification
//! does not ask for it).

use super::Probe;
use super::examples::request_for;
use super::report::{Level, Report};
use hyper::Method;
use openapi_contract::Contract;
use serde_json::Value;

/// The description routes whose answers are checked against the document.
const GETS: [&str; 7] = [
    "/health",
    "/capabilities",
    "/acceptable_ranges",
    "/info",
    "/metrics",
    "/citation",
    "/test_examples",
];

pub async fn check(probe: &Probe<'_>, report: &mut Report, caps: &Value, examples: &Value) {
    let description = "answers match the deployment's own /openapi.json (when it serves one)";
    let doc = match probe.call(Method::GET, "/openapi.json", None).await {
        Ok(r) if r.status == 404 => return,
        Ok(r) if r.status == 200 => serde_json::from_slice::<Value>(&r.body),
        Ok(r) => {
            let problem = format!("GET /openapi.json: expected 200 or 404, got {}", r.status);
            report.rule("B.openapi", Level::Should, description, vec![problem]);
            return;
        }
        Err(e) => {
            report.rule("B.openapi", Level::Should, description, vec![e]);
            return;
        }
    };
    let doc = match doc {
        Ok(doc)
            if doc["openapi"]
                .as_str()
                .is_some_and(|v| v.starts_with("3.1")) =>
        {
            doc
        }
        _ => {
            let problem = "GET /openapi.json: not an OpenAPI 3.1 document".to_owned();
            report.rule("B.openapi", Level::Should, description, vec![problem]);
            return;
        }
    };
    let contract = Contract::from_value("/openapi.json", doc);
    let mut problems = Vec::new();
    for path in GETS {
        match probe.call(Method::GET, path, None).await {
            Ok(r) => problems.extend(contract.check("GET", path, r.status, &r.body).err()),
            Err(e) => problems.push(e),
        }
    }
    let request_schema = contract.doc["components"]["schemas"]["PredictionRequest"].clone();
    let requests = match contract.validator(&request_schema) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(format!("PredictionRequest is not a usable schema: {e}"));
            None
        }
    };
    let format = &examples["usage_instructions"]["body_format"];
    for ex in examples["examples"].as_array().into_iter().flatten() {
        let name = ex["name"].as_str().unwrap_or("?");
        let body = request_for(format, ex, caps);
        if let Some(v) = &requests
            && let Some(e) = v.iter_errors(&body).next()
        {
            problems.push(format!(
                "example {name}: the document refuses its request {body} (at {}: {e})",
                e.instance_path()
            ));
        }
        let sent = probe
            .call(
                Method::POST,
                "/predict",
                Some(body.to_string().into_bytes()),
            )
            .await;
        match sent {
            Ok(r) => problems.extend(
                contract
                    .check("POST", "/predict", r.status, &r.body)
                    .err()
                    .map(|e| format!("example {name}: {e}")),
            ),
            Err(e) => problems.push(format!("example {name}: {e}")),
        }
    }
    report.rule("B.openapi", Level::Should, description, problems);
}
