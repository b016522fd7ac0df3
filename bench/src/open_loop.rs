//! Section `open-loop`: molprop's `/predict` (logP) at a fixed load, host beside native.
//! The closed loop of the other sections sends a connection's next request when the last
//! is answered, so a slower server is sent less and its queue never shows. Here requests
//! are due at a fixed rate, 25, 50 and 75 % of what native serves in the closed loop at 64
//! connections, and each is timed from when it was due ([`load::run_open`]). With several
//! rounds the sides take turns, the first of a round alternating, so a machine that slows
//! down during the run weighs on both alike.

use super::load::{self, Measured, Tail};
use super::peers::{self, ModelUnderTest, Paths};
use super::procs;
use super::report::{OpenLoopRow, Report};
use super::section::Section;
use anyhow::Result;
use std::time::Duration;

/// The loads, as shares of native's closed-loop capacity.
const SHARES: [f64; 3] = [0.25, 0.5, 0.75];

pub const SECTION: Section = Section {
    name: "open-loop",
    about: "/predict at 25, 50 and 75 % of native's capacity, latency from when each request was due",
    run: |b, r| {
        Box::pin(async move {
            r.open_loop = open_loop(b.paths, b.molecules, b.duration, b.rounds).await?;
            Ok(())
        })
    },
    targets,
    print: |r| print(&r.open_loop),
};

/// The section's rows, one per load.
pub async fn open_loop(
    paths: &Paths,
    molecules: &[String],
    duration: Duration,
    rounds: usize,
) -> Result<Vec<OpenLoopRow>> {
    let mut rows = Vec::new();
    let (reg, reg_addr) = peers::registry(paths, "open-loop-registry", "22300-22399", &[]).await?;
    let molprop = ModelUnderTest::molprop(paths)?;
    let data = procs::fresh_dir(&paths.work, "open-loop-host")?;
    let (host, host_addr, _) =
        peers::host_model(paths, "open-loop-host", &molprop, reg_addr, &data, &[]).await?;
    let (native, native_addr) = peers::native(paths).await?;
    let calls = super::compare::predict_calls(molecules, "logp");
    for addr in [host_addr, native_addr] {
        load::run(addr, 16, duration / 2, calls.clone()).await?;
    }
    eprintln!("open loop: native's capacity at 64 connections ...");
    let capacity = load::run(native_addr, 64, duration, calls.clone())
        .await?
        .figures()
        .rps;
    for share in SHARES {
        let rate = capacity * share;
        eprintln!("open loop: /predict logp at {rate:.0} requests/s ...");
        let (mut on_host, mut on_native) = (Measured::empty(), Measured::empty());
        for round in 0..rounds.max(1) {
            let mut turns = [(host_addr, &mut on_host), (native_addr, &mut on_native)];
            if round % 2 == 1 {
                turns.reverse();
            }
            for (addr, total) in turns {
                total.absorb(load::run_open(addr, rate, duration, calls.clone()).await?);
            }
        }
        rows.push(OpenLoopRow {
            share,
            rate,
            host: on_host.tail(),
            native: on_native.tail(),
        });
    }
    host.stop().await;
    native.stop().await;
    reg.stop().await;
    Ok(rows)
}

/// Prints the section's table.
pub fn print(rows: &[OpenLoopRow]) {
    if rows.is_empty() {
        return;
    }
    println!(
        "\n/predict logp at a fixed rate (open loop; ms from when each request was due: p50 / p99 / p99.9)"
    );
    println!(
        "  {:>5} {:>8}  {:>26} {:>26}  {:>13}",
        "load", "req/s", "runtime-host", "native", "p99 host/nat"
    );
    let cell = |t: &Tail| {
        let failed = match t.errors {
            0 => String::new(),
            n => format!(" ({n} failed)"),
        };
        format!(
            "{:.2} / {:.2} / {:.2}{failed}",
            t.p50_ms, t.p99_ms, t.p999_ms
        )
    };
    for r in rows {
        println!(
            "  {:>4.0}% {:>8.0}  {:>26} {:>26}  {:>12.2}x",
            r.share * 100.0,
            r.rate,
            cell(&r.host),
            cell(&r.native),
            r.host.p99_ms / r.native.p99_ms.max(1e-9)
        );
    }
}

/// At half native's capacity, the host's p99 within twice native's.
fn targets(r: &mut Report) {
    if let Some(half) = r.open_loop.iter().find(|o| o.share == 0.5).cloned() {
        let ratio = half.host.p99_ms / half.native.p99_ms.max(1e-9);
        r.target(
            "/predict logp p99 at 50 % of native's capacity",
            "host within 2x native (open loop)",
            format!(
                "{ratio:.2}x ({:.2} vs {:.2} ms)",
                half.host.p99_ms, half.native.p99_ms
            ),
            ratio <= 2.0 && half.host.errors == 0,
        );
    }
}
