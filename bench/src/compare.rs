//! The sides of a comparison and how they take turns: each side's server and address, its
//! Python peer where there is one, and the runs alternating side by side, round by round,
//! so ratios hold on a noisy machine. Also the requests the molecule sections send.

use super::args::BenchArgs;
use super::load::{self, Call, Measured};
use super::peers::{self, Paths};
use super::procs::Proc;
use super::report::Report;
use anyhow::Result;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// `/predict` of `property` for each molecule (molprop).
pub fn predict_calls(molecules: &[String], property: &str) -> Arc<[Call]> {
    molecules
        .iter()
        .map(|s| {
            let body = json!({"input_type": "text", "data": {"text": s, "property": property}});
            Call::post_json("/predict", &body)
        })
        .collect()
}

/// `/predict` of each molecule, for a model that takes only the SMILES (solubility).
pub fn smiles_calls(molecules: &[String]) -> Arc<[Call]> {
    molecules
        .iter()
        .map(|s| {
            Call::post_json(
                "/predict",
                &json!({"input_type": "text", "data": {"text": s}}),
            )
        })
        .collect()
}

/// The servers of one comparison: each side's process and address, by side name.
#[derive(Default)]
pub struct Sides {
    pub procs: Vec<Proc>,
    pub addrs: Vec<(String, SocketAddr)>,
}

impl Sides {
    pub fn push(&mut self, name: &str, proc: Proc, addr: SocketAddr) {
        self.procs.push(proc);
        self.addrs.push((name.to_owned(), addr));
    }

    /// Adds the Python peer `app` (from virtualenv `env`) as side `python`, or notes in the
    /// report why it is missing.
    pub async fn add_python(
        &mut self,
        paths: &Paths,
        args: &BenchArgs,
        (env, app): (&peers::PythonEnv, &str),
        report: &mut Report,
    ) {
        if args.no_python {
            report
                .notes
                .push(format!("Python peer {app} skipped (--no-python)"));
            return;
        }
        match peers::python(paths, env, app).await {
            Ok((py, addr)) => self.push("python", py, addr),
            Err(why) => {
                eprintln!("skipping the Python peer {app}: {why}");
                report
                    .notes
                    .push(format!("Python peer {app} skipped: {why}"));
            }
        }
    }

    /// Records each side's resident memory as `label(side)`, then stops every side.
    pub async fn record_memory_and_stop(
        self,
        report: &mut Report,
        label: impl Fn(&str) -> &'static str,
    ) {
        for (p, (name, _)) in self.procs.iter().zip(&self.addrs) {
            if let Some(mib) = p.rss_mib() {
                report.memory_mib.push((label(name).into(), mib));
            }
        }
        for p in self.procs {
            p.stop().await;
        }
    }
}

/// Runs `calls` on each side in turn, `rounds` times, and adds up each side's runs.
pub async fn alternate(
    sides: &[(String, SocketAddr)],
    conns: usize,
    duration: Duration,
    rounds: usize,
    calls: &Arc<[Call]>,
) -> Result<Vec<(String, load::Figures)>> {
    let mut totals: Vec<Measured> = sides.iter().map(|_| Measured::empty()).collect();
    for _ in 0..rounds {
        for ((_, addr), total) in sides.iter().zip(&mut totals) {
            total.absorb(load::run(*addr, conns, duration, calls.clone()).await?);
        }
    }
    Ok(sides
        .iter()
        .zip(totals)
        .map(|((name, _), m)| (name.clone(), m.figures()))
        .collect())
}
