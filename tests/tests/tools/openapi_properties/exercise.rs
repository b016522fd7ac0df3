//! Sending generated requests for each operation and checking each answer against the
//! document.

use super::CASES;
use super::generate::Gen;
use e2e_tests::contract::Contract;
use e2e_tests::{Client, Host};
use hyper::Method;
use serde_json::Value;

/// One operation to exercise.
pub struct Op {
    pub method: Method,
    pub path: &'static str,
    /// Path with its parameters filled in.
    pub target: String,
    pub token: Option<&'static str>,
    /// Error texts of 400 answers the document states in prose for valid requests.
    pub prose_rules: &'static [&'static str],
}

pub async fn exercise(contract: &Contract, host: &Host, ops: Vec<Op>) {
    let c = Client::new();
    let mut proposer = Gen::new(contract);
    let mut failures = Vec::new();
    let mut counted = (0, 0);
    for op in ops {
        let item = &contract.doc["paths"][op.path][op.method.as_str().to_lowercase()];
        let documented: Vec<u16> = item["responses"]
            .as_object()
            .unwrap()
            .keys()
            .filter_map(|k| k.parse().ok())
            .collect();
        let body_schema = item
            .pointer("/requestBody/content/application~1json/schema")
            .cloned();
        let query: Vec<(String, Value)> = item["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query")
            .map(|p| (p["name"].as_str().unwrap().to_owned(), p["schema"].clone()))
            .collect();
        let required: Vec<bool> = item["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query")
            .map(|p| p["required"] == true)
            .collect();
        let body_validator = body_schema.as_ref().map(|s| contract.validator(s).unwrap());
        for case in 0..2 * CASES {
            let want_valid = case < CASES;
            // Query parameters: generated from their schemas (optional ones now and then left
            // out); an invalid case breaks one: a word for a number, an empty value where one
            // is required, or a required one left out.
            let mut params: Vec<(String, String)> = Vec::new();
            for ((n, s), required) in query.iter().zip(&required) {
                if *required || proposer.rng.coin() {
                    let v = proposer.value(s, 0);
                    params.push((n.clone(), v.as_str().map_or(v.to_string(), str::to_owned)));
                }
            }
            let mut body = body_schema.as_ref().map(|s| proposer.value(s, 0));
            let mut valid = true;
            if let (Some(b), Some(v)) = (&body, &body_validator) {
                valid = v.is_valid(b);
            }
            if !want_valid {
                let break_query = body.is_none() || (!params.is_empty() && proposer.rng.coin());
                if break_query && !params.is_empty() {
                    let i = proposer.rng.below(params.len() as u64) as usize;
                    let q = query.iter().position(|(n, _)| *n == params[i].0).unwrap();
                    let schema = &query[q].1;
                    let min = schema["minLength"].as_u64().unwrap_or(0);
                    if schema["type"] == "integer" {
                        params[i].1 = "many".to_owned();
                    } else if min >= 1 && (proposer.rng.coin() || !required[q]) {
                        params[i].1 = String::new();
                    } else if required[q] {
                        params.remove(i);
                    } else {
                        continue; // an optional free-form value: nothing to break
                    }
                    valid = false;
                } else if let (Some(schema), Some(b)) = (&body_schema, &body) {
                    let broken = proposer.break_body(schema, b);
                    valid = body_validator.as_ref().unwrap().is_valid(&broken);
                    body = Some(broken);
                }
            }
            if valid != want_valid {
                continue; // the generator proposed something else; the judge said no
            }
            let query_string: Vec<String> = params
                .iter()
                .map(|(k, v)| format!("{k}={}", service_client::percent_encode(v)))
                .collect();
            let url = if query_string.is_empty() {
                host.url(&op.target)
            } else {
                host.url(&format!("{}?{}", op.target, query_string.join("&")))
            };
            let auth = op.token.map(|t| format!("Bearer {t}"));
            let mut headers = vec![("content-type", "application/json")];
            if let Some(a) = &auth {
                headers.push(("authorization", a));
            }
            let r = c
                .send(
                    op.method.clone(),
                    &url,
                    body.as_ref().map(|b| b.to_string().into_bytes()),
                    &headers,
                )
                .await;
            let what = format!(
                "{} {url} {}",
                op.method,
                body.map(|b| b.to_string()).unwrap_or_default()
            );
            if valid {
                counted.0 += 1;
                let prose = r.status == 400 && op.prose_rules.iter().any(|p| r.text().contains(p));
                if r.status >= 500 || (r.status == 400 && !prose) || !documented.contains(&r.status)
                {
                    failures.push(format!("valid {what} -> {} {}", r.status, r.text()));
                }
            } else {
                counted.1 += 1;
                if r.status != 400 {
                    failures.push(format!("invalid {what} -> {} {}", r.status, r.text()));
                }
            }
        }
    }
    println!(
        "{}: {} valid and {} invalid generated requests",
        contract.name, counted.0, counted.1
    );
    assert!(
        counted.0 > 0 && counted.1 > 0,
        "the generator produced cases"
    );
    assert!(
        failures.is_empty(),
        "{}:\n{}",
        contract.name,
        failures.join("\n")
    );
}

pub fn op(method: Method, path: &'static str, token: Option<&'static str>) -> Op {
    Op {
        method,
        path,
        target: path.to_owned(),
        token,
        prose_rules: &[],
    }
}
