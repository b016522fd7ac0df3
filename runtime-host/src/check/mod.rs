//! `runtime-host check`: judges a running deployment, ours or anyone's, against the
//! specification, one line per rule. Interface B (model) rules for now; registry (C) and chat
//! (A) rules follow.

mod model;
mod report;
mod shape;

use crate::cli::CheckArgs;
use crate::client::HttpClient;
use anyhow::Result;
use report::Report;
use std::time::Duration;

/// Runs the checks; `Ok(true)` when every MUST rule passed.
pub async fn run(args: CheckArgs) -> Result<bool> {
    let client = HttpClient::new(Duration::from_secs(10));
    let base = args.model_url.trim_end_matches('/').to_owned();
    let mut report = Report::new(&base);
    model::ModelCheck {
        client: &client,
        base: base.clone(),
        report: &mut report,
    }
    .run()
    .await;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        report.print();
    }
    Ok(report.passed())
}
