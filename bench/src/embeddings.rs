//! Sentence embeddings: `runtime-host model` serving the minilm component (the network runs
//! natively in the host behind `fermyon:spin/llm`) beside the Python peer (FastAPI +
//! sentence-transformers + torch), on the 60 committed reference sentences: one sentence per
//! request at 1 and 16 connections, and 32 sentences per request.

use super::compare::{Sides, alternate};
use super::load::Call;
use super::peers::{self, ModelUnderTest, Paths};
use super::procs;
use super::report::{EmbeddingRow, Report};
use super::section::Section;
use crate::args::BenchArgs;
use anyhow::Result;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

pub const SECTION: Section = Section {
    name: "embeddings",
    about: "minilm's sentence embeddings beside a Python peer, sentence-transformers",
    run: |b, r| Box::pin(embeddings(b.paths, b.args, b.duration, b.rounds, r)),
    targets,
    print,
};

/// (texts per request, connections) measured.
const LOADS: [(usize, usize); 4] = [(1, 1), (1, 16), (32, 1), (32, 16)];

/// Requests of `per_request` consecutive sentences each (wrapping), one starting at each.
fn calls(sentences: &[String], per_request: usize) -> Arc<[Call]> {
    (0..sentences.len())
        .map(|start| {
            let texts: Vec<&String> = sentences
                .iter()
                .cycle()
                .skip(start)
                .take(per_request)
                .collect();
            let data = match texts.as_slice() {
                [one] => json!({"text": one}),
                many => json!({"texts": many}),
            };
            Call::post_json("/predict", &json!({"input_type": "text", "data": data}))
        })
        .collect()
}

pub async fn embeddings(
    paths: &Paths,
    args: &BenchArgs,
    duration: Duration,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let ai_models = std::fs::canonicalize(&args.ai_models_dir).ok();
    let Some(ai_models) = ai_models.filter(|d| d.join(edge_api::embedding::MODEL).is_dir()) else {
        report.notes.push(format!(
            "embeddings skipped: no all-minilm-l6-v2 in {} (run `cargo xtask install-models`)",
            args.ai_models_dir.display()
        ));
        return Ok(());
    };
    let sentences = super::inputs::sentences()?;
    let (reg, reg_addr) = peers::registry(paths, "minilm-registry", "22300-22399", &[]).await?;
    let model = ModelUnderTest::minilm(paths, &ai_models)?;
    let data = procs::fresh_dir(&paths.work, "minilm-host")?;
    let (host, addr, _) =
        peers::host_model(paths, "minilm-host", &model, reg_addr, &data, &[]).await?;
    let mut sides = Sides::default();
    sides.push("host", host, addr);
    sides
        .add_python(
            paths,
            args,
            (&peers::EMBEDDING_PEER, "embeddings_app"),
            report,
        )
        .await;
    alternate(&sides.addrs, 16, duration / 2, 1, &calls(&sentences, 1)).await?;
    for (per_request, conns) in LOADS {
        eprintln!("embeddings, {per_request} text(s) per request, {conns} connection(s) ...");
        let figures = alternate(
            &sides.addrs,
            conns,
            duration,
            rounds,
            &calls(&sentences, per_request),
        )
        .await?;
        report.embeddings.push(EmbeddingRow {
            texts_per_request: per_request,
            connections: conns,
            sides: figures,
        });
    }
    sides
        .record_memory_and_stop(report, |side| match side {
            "host" => "runtime-host model (minilm), after load",
            _ => "Python embedding peer (sentence-transformers)",
        })
        .await;
    reg.stop().await;
    Ok(())
}

/// The host over the Python peer, one sentence per request at 16 connections.
fn targets(r: &mut Report) {
    let singles = r
        .embeddings
        .iter()
        .find(|e| e.texts_per_request == 1 && e.connections == 16)
        .cloned();
    if let Some(row) = singles
        && let (Some(h), Some(py)) = (row.per_second("host"), row.per_second("python"))
    {
        let ratio = h / py.max(1e-9);
        r.target(
            "embeddings: host vs Python, 16 conns",
            ">= 2x sentences/s",
            format!("{ratio:.1}x ({h:.0} vs {py:.0} sentences/s)"),
            ratio >= 2.0,
        );
    }
}

/// Sentences per second, and each request's p50 / p99, by load.
fn print(r: &Report) {
    if !r.embeddings.is_empty() {
        println!("\nembeddings (sentences/s, request p50 / p99 ms): minilm");
        println!(
            "  {:>5} {:>5}  {:>24} {:>24}  {:>11}",
            "texts", "conns", "runtime-host", "python", "host/python"
        );
    }
    for row in &r.embeddings {
        let cell = |side: &str| match (row.per_second(side), row.side(side)) {
            (Some(n), Some(f)) => format!("{n:>8.0} {:>6.2}/{:<7.2}", f.p50_ms, f.p99_ms),
            _ => "-".to_owned(),
        };
        let ratio = match (row.per_second("host"), row.per_second("python")) {
            (Some(h), Some(p)) if p > 0.0 => format!("{:.2}x", h / p),
            _ => "-".into(),
        };
        println!(
            "  {:>5} {:>5}  {:>24} {:>24}  {:>11}",
            row.texts_per_request,
            row.connections,
            cell("host"),
            cell("python"),
            ratio
        );
    }
}
