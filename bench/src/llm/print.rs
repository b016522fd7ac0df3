//! The section's table and its targets (issue 60 §3): one stream at >= 0.7x llama.cpp's
//! tokens/s, the first token of a ~200-token prompt within 1.3x llama.cpp's time.

use super::figures::{LlmReport, LlmSide, Sample};
use crate::report::Report;

const OURS: &str = "runtime-host";
const PEER: &str = "llama-cpp-python";

/// Holds the report's figures to the targets, where both sides ran.
pub fn targets(report: &mut Report) {
    let Some(llm) = report.llm.clone() else {
        return;
    };
    let (Some(ours), Some(peer)) = (llm.side(OURS), llm.side(PEER)) else {
        return;
    };
    // The best rounds beside the medians: llama.cpp's threads spin at every step, so a busy
    // machine slows it far more than ours, and its median then flatters ours.
    let (o, p) = (&ours.one_stream_tokens_per_s, &peer.one_stream_tokens_per_s);
    let ratio = o.median / p.median.max(1e-9);
    let best = o.highest() / p.highest().max(1e-9);
    report.target(
        "LLM: one stream's tokens/s vs llama.cpp",
        ">= 0.7x",
        format!(
            "{ratio:.2}x ({:.1} vs {:.1} tokens/s); best rounds {best:.2}x",
            o.median, p.median
        ),
        ratio >= 0.7,
    );
    let (o, p) = (&ours.first_token_ms, &peer.first_token_ms);
    let ratio = o.median / p.median.max(1e-9);
    let best = o.lowest() / p.lowest().max(1e-9);
    let tokens = llm
        .long_prompt_tokens
        .map_or("~200".to_owned(), |n| n.to_string());
    report.target(
        &format!("LLM: first token, {tokens}-token prompt"),
        "<= 1.3x llama.cpp's time",
        format!(
            "{ratio:.2}x ({:.0} vs {:.0} ms); best rounds {best:.2}x",
            o.median, p.median
        ),
        ratio <= 1.3,
    );
}

/// The table: each row's median per side (and the spread of the rounds), and ours over the
/// peer's.
pub fn print(llm: &Option<LlmReport>) {
    let Some(llm) = llm else {
        return;
    };
    let prompt = llm
        .long_prompt_tokens
        .map_or("~200".to_owned(), |n| n.to_string());
    println!(
        "\nlanguage model ({}, Q4_1 GGUF): medians of {} round(s), [lowest-highest]",
        edge_api::language_model::MODEL,
        llm.rounds
    );
    let names: Vec<&str> = llm.sides.iter().map(|s| s.name.as_str()).collect();
    print!("  {:<44}", "row");
    for name in &names {
        print!(" {name:>26}");
    }
    println!(" {:>12}", "ours/peer");
    let rows: [(String, PickSample); 3] = [
        (
            format!(
                "one stream, tokens/s ({} tokens)",
                llm.one_stream_max_tokens
            ),
            |s| &s.one_stream_tokens_per_s,
        ),
        (format!("first token, {prompt}-token prompt, ms"), |s| {
            &s.first_token_ms
        }),
        (
            format!(
                "{} streams, tokens/s in total ({} each)",
                llm.concurrent_streams, llm.concurrent_max_tokens
            ),
            |s| &s.concurrent_tokens_per_s,
        ),
    ];
    for (label, pick) in rows {
        print!("  {label:<44}");
        for side in &llm.sides {
            print!(" {:>26}", cell(pick(side)));
        }
        println!(" {:>12}", ratio(llm, |s| Some(pick(s).median)));
    }
    let memory: [(&str, PickMib); 3] = [
        ("RSS before the model loads, MiB", |s| s.rss_before_load_mib),
        ("RSS after the first request, MiB", |s| s.rss_loaded_mib),
        ("RSS after every load, MiB", |s| s.rss_after_mib),
    ];
    for (label, pick) in memory {
        print!("  {label:<44}");
        for side in &llm.sides {
            print!(
                " {:>26}",
                pick(side).map_or("-".into(), |m| format!("{m:.1}"))
            );
        }
        println!(" {:>12}", ratio(llm, pick));
    }
    for side in &llm.sides {
        println!(
            "  {}: tokens generated, one stream {:?}, {} streams {:?}; usage mismatches {}",
            side.name,
            side.one_stream_tokens,
            llm.concurrent_streams,
            side.concurrent_tokens,
            side.usage_mismatches
        );
    }
    if let (Some(ours), Some(peer)) = (llm.side(OURS), llm.side(PEER)) {
        let (a, b) = (&ours.first_answer, &peer.first_answer);
        let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        println!(
            "  greedy answers of the first round: the same for {same} of {} / {} characters",
            a.chars().count(),
            b.chars().count()
        );
    }
}

/// Which figure of a side a row shows: a timed one, or a memory one (MiB).
type PickSample = fn(&LlmSide) -> &Sample;
type PickMib = fn(&LlmSide) -> Option<f64>;

/// A sample as `median [lowest-highest]`.
fn cell(s: &Sample) -> String {
    if s.runs.is_empty() {
        return "-".into();
    }
    format!("{:.1} [{:.1}-{:.1}]", s.median, s.lowest(), s.highest())
}

/// Ours over the peer's, where both have the figure.
fn ratio(llm: &LlmReport, pick: impl Fn(&LlmSide) -> Option<f64>) -> String {
    match (
        llm.side(OURS).and_then(&pick),
        llm.side(PEER).and_then(&pick),
    ) {
        (Some(o), Some(p)) if p > 0.0 => format!("{:.2}x", o / p),
        _ => "-".into(),
    }
}
