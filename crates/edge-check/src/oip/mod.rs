//! `runtime-host check --oip`: judges any deployment, ours or Triton's or KServe's, against
//! the Open Inference Protocol (REST v2) as its standard clients use it: health, server and
//! model metadata, model readiness, an inference built from the metadata alone in JSON and
//! again in binary tensors (Triton's extension, which tritonclient uses by default) giving
//! the same values, and the error answers a client reads.

mod infer;
mod metadata;
mod tensor;

use crate::report::{Level, Report};
use hyper::Method;
use serde_json::Value;
use service_client::{HttpClient, Reply};

/// A model no deployment serves, for the 404 rule.
const NO_SUCH_MODEL: &str = "no-such-model-oip-check";

struct Target<'a> {
    client: &'a HttpClient,
    base: &'a str,
}

impl Target<'_> {
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Result<Reply, String> {
        let url = format!("{}{path}", self.base);
        self.client
            .send_with(method, &url, body, headers)
            .await
            .map_err(|e| format!("{e:#}"))
    }

    /// The JSON of a 200 answer to `GET path`, or what came instead.
    async fn get_json(&self, path: &str) -> Result<Value, String> {
        let reply = self.send(Method::GET, path, None, &[]).await?;
        let value = serde_json::from_slice(&reply.body).map_err(|_| {
            format!(
                "GET {path}: HTTP {}, not JSON: {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            )
        })?;
        match reply.status {
            200 => Ok(value),
            s => Err(format!("GET {path}: expected 200, got {s}: {value}")),
        }
    }
}

/// Runs every protocol rule against `base` for `models` (discovered from our v1.2 routes
/// when none are named).
pub async fn check(client: &HttpClient, base: &str, models: &[String], report: &mut Report) {
    let target = Target { client, base };
    health(&target, report, "OIP.live", "/v2/health/live", "live").await;
    health(&target, report, "OIP.ready", "/v2/health/ready", "ready").await;
    let problems = match target.get_json("/v2").await {
        Ok(v) => metadata::server(&v),
        Err(e) => vec![e],
    };
    let description = "GET /v2 answers the server's name, version and extensions";
    report.rule("OIP.server_metadata", Level::Must, description, problems);
    let models = match models {
        [] => discover(&target).await,
        named => Ok(named.to_vec()),
    };
    let description = "the models to judge: named with --model, or found on the deployment";
    match models {
        Ok(models) => {
            report.rule("OIP.models", Level::Must, description, Vec::new());
            for name in &models {
                model(&target, report, name).await;
            }
        }
        Err(e) => report.rule("OIP.models", Level::Must, description, vec![e]),
    }
    unknown_model(&target, report).await;
}

/// The models of one of our deployments: a model's own port (or base URL under Spin) names
/// itself in v1.2 `/info`; `up`'s app port lists its models in its registry.
async fn discover(target: &Target<'_>) -> Result<Vec<String>, String> {
    if let Ok(info) = target.get_json("/info").await
        && let Some(name) = info["name"].as_str()
    {
        return Ok(vec![name.to_owned()]);
    }
    let listing = target.get_json("/registry").await.map_err(|_| {
        "no models named and none found (neither /info nor /registry answered): name them with --model"
            .to_owned()
    })?;
    // `up` registers each model as `runtime-host/<name>`, <name> its route on the app port;
    // other registrations (another host's, a busy port's guard) are not this app's models.
    let mut names: Vec<String> = listing["registrations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["app_name"].as_str()?.strip_prefix("runtime-host/"))
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Err("the registry lists no models: name them with --model".into());
    }
    Ok(names)
}

/// 200, and where there is a body (Triton sends none) `{"<field>": true}`.
async fn health(target: &Target<'_>, report: &mut Report, rule: &str, path: &str, field: &str) {
    let problems = match target.send(Method::GET, path, None, &[]).await {
        Err(e) => vec![e],
        Ok(r) if r.status != 200 => vec![format!(
            "expected 200, got {}: {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        )],
        Ok(r) if r.body.is_empty() => Vec::new(),
        Ok(r) => match serde_json::from_slice::<Value>(&r.body) {
            Ok(v) if v[field] == Value::Bool(true) => Vec::new(),
            _ => vec![format!(
                "expected {{\"{field}\": true}}, got {}",
                String::from_utf8_lossy(&r.body)
            )],
        },
    };
    report.rule(
        rule,
        Level::Must,
        &format!("GET {path} answers 200 ({field})"),
        problems,
    );
}

/// Every rule of one model.
async fn model(target: &Target<'_>, report: &mut Report, name: &str) {
    let base = format!("/v2/models/{name}");
    let rule = |part: &str| format!("OIP.{name}.{part}");
    let (declared, problems) = match target.get_json(&base).await {
        Ok(v) => {
            let (inputs, outputs, problems) = metadata::model(&v, name);
            (Some((inputs, outputs)), problems)
        }
        Err(e) => (None, vec![e]),
    };
    let description = format!("GET {base}: name, platform, tensors' names, datatypes, shapes");
    let well_formed = problems.is_empty();
    report.rule(&rule("metadata"), Level::Must, &description, problems);
    health(
        target,
        report,
        &rule("ready"),
        &format!("{base}/ready"),
        "ready",
    )
    .await;
    bad_request(target, report, &rule("bad_request"), &base).await;
    let Some((inputs, outputs)) = declared.filter(|_| well_formed) else {
        return;
    };
    // Sample values for BYTES inputs: our model's own examples, at its base URL or under
    // `/models/<name>` of an app port.
    let examples = match target.get_json("/test_examples").await {
        Ok(v) => Some(v),
        Err(_) => target
            .get_json(&format!("/models/{name}/test_examples"))
            .await
            .ok(),
    };
    let built = match infer::inputs(&inputs, examples.as_ref()) {
        Ok(built) => built,
        Err(why) => {
            let skipped = vec![format!("not run: {why}")];
            let description = "an inference built from the metadata (skipped)";
            report.rule(&rule("infer"), Level::Should, description, skipped);
            return;
        }
    };
    let path = format!("{base}/infer");
    let body = infer::json_request(&built, &outputs);
    let json = match answer(target, &path, body, &[]).await {
        Ok((v, got)) => {
            let problems = infer::judge(&v, &got, &outputs, name);
            let description = "POST .../infer (JSON tensors) answers every output as declared";
            report.rule(&rule("infer.json"), Level::Must, description, problems);
            Some(got)
        }
        Err(e) => {
            let description = "POST .../infer (JSON tensors) answers 200";
            report.rule(&rule("infer.json"), Level::Must, description, vec![e]);
            None
        }
    };
    let problems = match infer::binary_request(&built, &outputs) {
        Err(e) => vec![e],
        Ok((body, length)) => {
            let length = length.to_string();
            let headers = [
                (infer::HEADER_LENGTH, length.as_str()),
                ("content-type", "application/octet-stream"),
            ];
            match answer(target, &path, body, &headers).await {
                Err(e) => vec![e],
                Ok((v, got)) => {
                    let mut problems = infer::judge(&v, &got, &outputs, name);
                    if let Some(json) = &json {
                        problems.extend(infer::same_values(json, &got));
                    }
                    problems
                }
            }
        }
    };
    let description = "the same inference in binary tensors gives the same values";
    report.rule(&rule("infer.binary"), Level::Must, description, problems);
}

/// A 200 answer to an inference, read.
async fn answer(
    target: &Target<'_>,
    path: &str,
    body: Vec<u8>,
    headers: &[(&str, &str)],
) -> Result<(Value, Vec<infer::Output>), String> {
    let reply = target.send(Method::POST, path, Some(body), headers).await?;
    if reply.status != 200 {
        return Err(format!(
            "POST {path}: expected 200, got {}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        ));
    }
    let length = reply
        .headers
        .get(infer::HEADER_LENGTH)
        .and_then(|v| v.to_str().ok());
    infer::read(&reply.body, length)
}

/// A problem unless `reply` has `status` and the protocol's `{"error": "<text>"}`.
fn error_shape(what: &str, reply: Result<Reply, String>, status: u16) -> Vec<String> {
    match reply {
        Err(e) => vec![e],
        Ok(r) => {
            let body: Option<Value> = serde_json::from_slice(&r.body).ok();
            let text = body.as_ref().and_then(|b| b["error"].as_str());
            if r.status == status && text.is_some() {
                Vec::new()
            } else {
                vec![format!(
                    "{what}: expected {status} with {{\"error\": \"...\"}}, got {}: {}",
                    r.status,
                    String::from_utf8_lossy(&r.body)
                )]
            }
        }
    }
}

/// An inference request that is not one: 400 with the error body.
async fn bad_request(target: &Target<'_>, report: &mut Report, rule: &str, base: &str) {
    let path = format!("{base}/infer");
    let body = br#"{"inputs": "not a list"}"#.to_vec();
    let reply = target.send(Method::POST, &path, Some(body), &[]).await;
    let problems = error_shape(&format!("POST {path}"), reply, 400);
    let description = "a malformed inference request gets 400 {\"error\": ...}";
    report.rule(rule, Level::Must, description, problems);
}

/// An unknown model: 404 with the error body, for its metadata and for an inference.
async fn unknown_model(target: &Target<'_>, report: &mut Report) {
    let base = format!("/v2/models/{NO_SUCH_MODEL}");
    let mut problems = error_shape(
        &format!("GET {base}"),
        target.send(Method::GET, &base, None, &[]).await,
        404,
    );
    let path = format!("{base}/infer");
    let body = br#"{"inputs": []}"#.to_vec();
    problems.extend(error_shape(
        &format!("POST {path}"),
        target.send(Method::POST, &path, Some(body), &[]).await,
        404,
    ));
    let description = "an unknown model gets 404 {\"error\": ...}";
    report.rule("OIP.unknown_model", Level::Must, description, problems);
}
