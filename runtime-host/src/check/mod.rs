//! `runtime-host check`: judges running deployments, ours or anyone's, against the
//! specification, one line per rule: a model (B), and optionally a registry (C) and a chat
//! service (A).

mod chat;
mod model;
mod openapi;
mod registry;
mod report;
mod shape;

use crate::cli::CheckArgs;
use crate::client::{HttpClient, Reply};
use anyhow::Result;
use hyper::Method;
use report::Report;
use serde_json::Value;
use std::time::Duration;

/// Requests to one service under test.
pub struct Probe<'a> {
    pub client: &'a HttpClient,
    pub base: String,
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
}

pub fn json_of(reply: &Reply) -> Result<Value, String> {
    serde_json::from_slice(&reply.body)
        .map_err(|_| format!("body is not JSON: {}", String::from_utf8_lossy(&reply.body)))
}

/// Runs the checks; `Ok(true)` when every MUST rule passed.
pub async fn run(args: CheckArgs) -> Result<bool> {
    let client = HttpClient::new(Duration::from_secs(10));
    let base = args.model_url.trim_end_matches('/').to_owned();
    let mut report = Report::new(&base);
    let probe = |url: &str| Probe {
        client: &client,
        base: url.trim_end_matches('/').to_owned(),
    };
    model::ModelCheck {
        probe: probe(&base),
        report: &mut report,
    }
    .run(!args.keep_running)
    .await;
    if let Some(url) = &args.registry {
        registry::check(&probe(url), &mut report).await;
    }
    if let Some(url) = &args.chat {
        chat::check(&probe(url), &mut report).await;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        report.print();
    }
    Ok(report.passed())
}
