//! Section `llm`: the language model (issue 60 §3). SmolLM2-135M-Instruct from one GGUF file,
//! served by `runtime-host up` (OpenAI's `POST /v1/chat/completions` on its app port) and by
//! llama-cpp-python's OpenAI-compatible server (llama.cpp), measured by one streaming client
//! ([`stream`]) with the same greedy requests ([`prompts`]), the sides taking turns request
//! by request within each round. Rows, medians over the rounds:
//! 1. tokens/s of one stream (128 new tokens), first token to last: decoding alone;
//! 2. time to the first token of a ~200-token prompt (one new token): reading the prompt;
//! 3. tokens/s in total of 8 streams at once (64 new tokens each), first request to last
//!    token;
//! 4. resident memory: ours before the model loads (`up` loads it on first use) and with it
//!    loaded; both after every load ran.

pub mod figures;
mod print;
mod prompts;
mod sides;
mod stream;

pub use print::print;

use figures::{LlmReport, LlmSide};

use crate::args::BenchArgs;
use crate::peers::Paths;
use crate::report::Report;
use crate::section::{Section, no_targets};
use anyhow::{Context, Result};
use sides::Side;
use std::time::Instant;

/// Rounds at least, whatever `--rounds` says: each takes seconds, and a median of two is
/// no median.
const ROUNDS: usize = 5;
/// Streams of the concurrent row: the generator's own cap on streams decoded together.
const STREAMS: usize = 8;

pub const SECTION: Section = Section {
    name: "llm",
    about: "the language model streamed by `up` beside llama-cpp-python's server",
    run: |b, r| Box::pin(section(b.paths, b.args, b.rounds, r)),
    targets: no_targets,
    print: |r| print(&r.llm),
};

/// New tokens per request of each row: (one stream, each concurrent stream).
fn lengths(quick: bool) -> (u32, u32) {
    if quick { (8, 4) } else { (128, 64) }
}

pub async fn section(
    paths: &Paths,
    args: &BenchArgs,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let ai_models = std::fs::canonicalize(&args.ai_models_dir).ok();
    let Some((ai_models, gguf)) = ai_models.and_then(|d| Some((d.clone(), sides::gguf(&d)?)))
    else {
        report.notes.push(format!(
            "llm skipped: no {} in {} (run `cargo xtask install-models`)",
            edge_api::language_model::MODEL,
            args.ai_models_dir.display()
        ));
        return Ok(());
    };
    let rounds = if args.quick { 1 } else { rounds.max(ROUNDS) };
    let (one, each) = lengths(args.quick);
    eprintln!("language model: runtime-host up beside llama-cpp-python, {rounds} round(s) ...");
    let ours = sides::ours(paths, &ai_models).await?;
    let mut figures = vec![LlmSide {
        name: ours.name.into(),
        rss_before_load_mib: ours.proc.rss_mib(),
        ..LlmSide::default()
    }];
    let mut servers = vec![ours];
    if args.no_python {
        report
            .notes
            .push("llm: llama-cpp-python skipped (--no-python)".into());
    } else {
        match sides::llama_cpp(paths, &gguf).await {
            Ok(peer) => {
                figures.push(LlmSide {
                    name: peer.name.into(),
                    ..LlmSide::default()
                });
                servers.push(peer);
            }
            Err(why) => {
                eprintln!("skipping llama-cpp-python: {why}");
                report
                    .notes
                    .push(format!("llm: llama-cpp-python skipped: {why}"));
            }
        }
    }
    let outcome = measure(&servers, &mut figures, rounds, (one, each)).await;
    for (server, side) in servers.iter().zip(&mut figures) {
        side.rss_after_mib = server.proc.rss_mib();
    }
    for server in servers {
        server.proc.stop().await;
    }
    let long_prompt_tokens = outcome?;
    report.llm = Some(LlmReport {
        rounds,
        one_stream_max_tokens: one,
        concurrent_streams: STREAMS,
        concurrent_max_tokens: each,
        long_prompt_tokens,
        sides: figures,
    });
    print::targets(report);
    Ok(())
}

/// Every row on every side, round by round; returns the long prompt's length in tokens.
async fn measure(
    servers: &[Side],
    figures: &mut [LlmSide],
    rounds: usize,
    (one, each): (u32, u32),
) -> Result<Option<u64>> {
    // The first request loads the model on our side (and warms both).
    for (server, side) in servers.iter().zip(figures.iter_mut()) {
        stream::chat(&server.endpoint, &prompts::long_answer(0, 4))
            .await
            .with_context(|| format!("{}: the first request", server.name))?;
        side.rss_loaded_mib = server.proc.rss_mib();
    }
    let mut long_prompt_tokens = None;
    for round in 0..rounds {
        let n = 1 + round * (2 + STREAMS);
        for (server, side) in servers.iter().zip(figures.iter_mut()) {
            let answer = stream::chat(&server.endpoint, &prompts::long_answer(n, one))
                .await
                .with_context(|| format!("{}: one stream", server.name))?;
            check_usage(&answer, side);
            if let Some(rate) = answer.decode_rate() {
                side.one_stream_tokens_per_s.push(rate);
            }
            side.one_stream_tokens.push(answer.tokens());
            if round == 0 {
                side.first_answer = answer.text;
            }
        }
        for (server, side) in servers.iter().zip(figures.iter_mut()) {
            let answer = stream::chat(&server.endpoint, &prompts::long_prompt(n + 1))
                .await
                .with_context(|| format!("{}: the long prompt", server.name))?;
            check_usage(&answer, side);
            long_prompt_tokens = long_prompt_tokens.or(answer.prompt_tokens);
            let first = answer.time_to_first().context("no token came")?;
            side.first_token_ms.push(first * 1000.0);
        }
        for (server, side) in servers.iter().zip(figures.iter_mut()) {
            let started = Instant::now();
            let mut streams = tokio::task::JoinSet::new();
            for i in 0..STREAMS {
                let (to, body) = (
                    server.endpoint.clone(),
                    prompts::concurrent(n + 2 + i, each),
                );
                streams.spawn(async move { stream::chat(&to, &body).await });
            }
            let mut answers = Vec::with_capacity(STREAMS);
            while let Some(answer) = streams.join_next().await {
                answers
                    .push(answer?.with_context(|| format!("{}: {STREAMS} streams", server.name))?);
            }
            let end = answers.iter().filter_map(|a| a.last).max();
            let tokens: u64 = answers.iter().map(stream::Streamed::tokens).sum();
            for answer in &answers {
                check_usage(answer, side);
            }
            if let Some(end) = end {
                let secs = (end - started).as_secs_f64().max(1e-9);
                side.concurrent_tokens_per_s.push(tokens as f64 / secs);
            }
            side.concurrent_tokens.push(tokens);
        }
    }
    Ok(long_prompt_tokens)
}

/// Counts a stream whose text chunks and `usage` disagree (where `usage` came).
fn check_usage(answer: &stream::Streamed, side: &mut LlmSide) {
    if answer
        .completion_tokens
        .is_some_and(|n| n != answer.chunks as u64)
    {
        side.usage_mismatches += 1;
    }
}
