//! Sentence embeddings: `runtime-host model` serving the minilm component (the network runs
//! natively in the host behind `fermyon:spin/llm`) beside the Python peer (FastAPI +
//! sentence-transformers + torch), on the 60 committed reference sentences: one sentence per
//! request at 1 and 16 connections, and 32 sentences per request.

use super::load::Call;
use super::peers::{self, ModelUnderTest, Paths};
use super::report::{EmbeddingRow, Report};
use super::{Sides, alternate, procs};
use crate::args::BenchArgs;
use anyhow::Result;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

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
