//! `runtime-host check`: judges running deployments, ours or anyone's, against the
//! specification, one line per rule: a model (B), and optionally a registry (C) and a chat
//! service (A). Shapes come from `docs/openapi/` ([`spec`]); the rules here add what a
//! schema cannot say (a prediction succeeds, counters grow, secrets stay secret). With
//! `--oip`, the Open Inference Protocol instead ([`oip`]).

mod batch;
mod chat;
mod examples;
mod model;
mod oip;
mod openapi;
mod registry;
mod report;
mod spec;

use anyhow::Result;
use hyper::Method;
use openapi_contract::Contract;
use report::Report;
use serde_json::Value;
use service_client::{HttpClient, Reply};
use spec::Spec;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Base URL of the model deployment, e.g. http://127.0.0.1:5100
    pub model_url: String,
    /// Check the Open Inference Protocol (KServe v2 / Triton REST) alone, at any deployment
    /// that speaks it (ours, Triton's, KServe's), in place of interface 1.2.
    #[arg(long)]
    pub oip: bool,
    /// With `--oip`: a model to judge (repeatable); by default our deployment's models,
    /// found from its `/info` (a model's own URL) or its `/registry` (`up`'s app port).
    #[arg(long = "model", value_name = "NAME", requires = "oip")]
    pub models: Vec<String>,
    /// Also check this port registry (registers probes and removes them afterwards).
    #[arg(long)]
    pub registry: Option<String>,
    /// Also check this chat service.
    #[arg(long)]
    pub chat: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Do not send `POST /shutdown` (rule B.shutdown, run last): a deployment that allows
    /// shutdown would stop.
    #[arg(long)]
    pub keep_running: bool,
}

/// Requests to one service under test, and the document its answers are held to.
pub struct Probe<'a> {
    client: &'a HttpClient,
    base: String,
    contract: &'a Contract,
}

impl Probe<'_> {
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Reply, String> {
        self.client
            .send(method, &format!("{}{path}", self.base), body, None)
            .await
            .map_err(|e| format!("{e:#}"))
    }

    /// The JSON body of a 200 answer; otherwise one message saying what came back instead.
    pub async fn ok_json(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        match self.json(method, path, body).await? {
            (200, v) => Ok(v),
            (s, v) => Err(format!("expected 200, got {s}: {v}")),
        }
    }

    /// Status and JSON body.
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), String> {
        let reply = self
            .call(method, path, body.map(|b| b.to_string().into_bytes()))
            .await?;
        let value = json_of(&reply)?;
        Ok((reply.status, value))
    }

    /// Problems of an answer to `method path` against the service's document (empty when
    /// its status is documented and its body has the documented shape).
    pub fn shape(&self, method: &Method, path: &str, status: u16, body: &Value) -> Vec<String> {
        let path = path.split('?').next().unwrap_or(path);
        let body = body.to_string();
        let checked = self
            .contract
            .check(method.as_str(), path, status, body.as_bytes());
        checked.err().into_iter().collect()
    }

    /// Problems of `value` against one of the document's schemas (`ErrorBody`, say).
    pub fn schema(&self, name: &str, value: &Value) -> Vec<String> {
        spec::schema_problems(self.contract, name, value)
    }
}

pub fn json_of(reply: &Reply) -> Result<Value, String> {
    serde_json::from_slice(&reply.body)
        .map_err(|_| format!("body is not JSON: {}", String::from_utf8_lossy(&reply.body)))
}

/// Runs the checks; `Ok(true)` when every MUST rule passed.
pub async fn run(args: &CheckArgs) -> Result<bool> {
    let client = HttpClient::new(Duration::from_secs(10));
    let spec = Spec::load();
    let base = args.model_url.trim_end_matches('/').to_owned();
    let mut report = Report::new(&base);
    if args.oip {
        report.standard = "the Open Inference Protocol (REST v2)";
        oip::check(&client, &base, &args.models, &mut report).await;
        return finish(args, &report);
    }
    let probe = |url: &str, contract| Probe {
        client: &client,
        base: url.trim_end_matches('/').to_owned(),
        contract,
    };
    let model = probe(&base, &spec.model);
    let described = model::check(&model, &mut report).await;
    if let Some((caps, examples)) = &described {
        openapi::check(&model, &mut report, caps, examples).await;
        batch::check(&model, &mut report, caps, examples).await;
    }
    if !args.keep_running {
        // Last: a deployment that honours it stops, so everything else has been judged.
        model::shutdown(&model, &mut report).await;
    }
    if let Some(url) = &args.registry {
        registry::check(&probe(url, &spec.registry), &mut report).await;
    }
    if let Some(url) = &args.chat {
        chat::check(&probe(url, &spec.chat), &mut report).await;
    }
    finish(args, &report)
}

/// Prints the report as asked; `Ok(true)` when every MUST rule passed.
fn finish(args: &CheckArgs, report: &Report) -> Result<bool> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        report.print();
    }
    Ok(report.passed())
}
