//! Section `predict`: molprop's `/predict` (the reference molecules, `logp` and `all`) at 1,
//! 16 and 64 connections, and `/health` at 64: `runtime-host model` (warm instances,
//! `--instance-reuse 1`, and Winch's baseline code) beside `molprop-native` and the Python
//! peer. Its table also holds the solubility section's rows (`logS`).

use super::compare::{Sides, alternate, predict_calls};
use super::load::Call;
use super::peers::{self, ModelUnderTest};
use super::procs;
use super::report::{PredictRow, Report};
use super::section::{Bench, Section};
use anyhow::Result;
use std::sync::Arc;

/// The connection counts of every `/predict` comparison.
pub const CONNECTIONS: [usize; 3] = [1, 16, 64];
const PROPERTIES: [&str; 2] = ["logp", "all"];

pub const SECTION: Section = Section {
    name: "predict",
    about: "molprop's /predict beside the native and Python peers, with /health",
    run: |bench, report| Box::pin(run(bench, report)),
    targets,
    print,
};

/// molprop's `/predict` (logp and all) at each connection count, then `/health`, on every
/// side; each side's memory after the loads.
async fn run(bench: &Bench<'_>, report: &mut Report) -> Result<()> {
    let Bench {
        paths,
        args,
        molecules,
        duration,
        rounds,
    } = *bench;
    let (reg, reg_addr) = peers::registry(paths, "predict-registry", "22000-22099", &[]).await?;
    let molprop = ModelUnderTest::molprop(paths)?;
    let data = procs::fresh_dir(&paths.work, "host-model")?;
    let (host, host_addr, _) =
        peers::host_model(paths, "host-model", &molprop, reg_addr, &data, &[]).await?;
    // The same host with a fresh instance for every request, as Spin does.
    let data = procs::fresh_dir(&paths.work, "host-model-reuse1")?;
    let (fresh, fresh_addr, _) = peers::host_model(
        paths,
        "host-model-reuse1",
        &molprop,
        reg_addr,
        &data,
        &["--instance-reuse", "1"],
    )
    .await?;
    // Winch's baseline code, which a new component serves until Cranelift's is ready.
    let data = procs::fresh_dir(&paths.work, "host-model-baseline")?;
    let (baseline, baseline_addr, _) = peers::host_model(
        paths,
        "host-model-baseline",
        &molprop,
        reg_addr,
        &data,
        &["--baseline-only"],
    )
    .await?;
    let (native, native_addr) = peers::native(paths).await?;
    let mut sides = Sides::default();
    sides.push("host", host, host_addr);
    sides.push("host-reuse1", fresh, fresh_addr);
    sides.push("host-baseline", baseline, baseline_addr);
    sides.push("native", native, native_addr);
    sides
        .add_python(paths, args, (&peers::CHEMISTRY_PEERS, "app"), report)
        .await;
    for property in PROPERTIES {
        let calls = predict_calls(molecules, property);
        // Warm every side up (compilation caches, allocator pools, Python imports).
        alternate(&sides.addrs, 16, duration / 2, 1, &calls).await?;
        for conns in CONNECTIONS {
            eprintln!("/predict {property} at {conns} connection(s) ...");
            let sides = alternate(&sides.addrs, conns, duration, rounds, &calls).await?;
            report.predict.push(PredictRow {
                property: property.into(),
                connections: conns,
                sides,
            });
        }
    }
    eprintln!("/health at 64 connections ...");
    let health: Arc<[Call]> = Arc::new([Call::get("/health")]);
    report.health = alternate(&sides.addrs, 64, duration, rounds, &health).await?;
    sides
        .record_memory_and_stop(report, |side| match side {
            "host" => "runtime-host model (1 molprop), after load",
            "host-reuse1" => "runtime-host model --instance-reuse 1, after load",
            "host-baseline" => "runtime-host model, Winch's baseline code, after load",
            "native" => "molprop-native, after load",
            _ => "Python peer (uvicorn + RDKit), after load",
        })
        .await;
    reg.stop().await;
    Ok(())
}

/// Host over Python (>= 10x) and over native (>= 0.6x) at 16 connections, by property; and
/// `/health`'s p99 at 64.
fn targets(r: &mut Report) {
    for prop in PROPERTIES {
        let found = r
            .predict
            .iter()
            .find(|p| p.property == prop && p.connections == 16)
            .cloned();
        let Some(row) = found else { continue };
        if let (Some(h), Some(py)) = (row.side("host"), row.side("python")) {
            let ratio = h.rps / py.rps.max(1e-9);
            r.target(
                &format!("{prop}: host vs Python at 16 conns"),
                ">= 10x req/s, lower p99",
                format!("{ratio:.1}x, p99 {:.2} vs {:.2} ms", h.p99_ms, py.p99_ms),
                ratio >= 10.0 && h.p99_ms < py.p99_ms,
            );
        }
        if let (Some(h), Some(n)) = (row.side("host"), row.side("native")) {
            let ratio = h.rps / n.rps.max(1e-9);
            r.target(
                &format!("{prop}: host vs native at 16 conns"),
                ">= 0.6x req/s (stretch 0.8x)",
                format!("{ratio:.2}x ({:.0} vs {:.0} req/s)", h.rps, n.rps),
                ratio >= 0.6,
            );
        }
    }
    if let Some((_, h)) = r.health.iter().find(|(s, _)| s == "host").cloned() {
        r.target(
            "/health p99 at 64 conns",
            "< 2 ms",
            format!("{:.2} ms", h.p99_ms),
            h.p99_ms < 2.0,
        );
    }
}

/// The `/predict` table (molprop's rows and solubility's), then `/health`.
fn print(r: &Report) {
    println!("/predict (requests/s, p50 / p99 ms): molprop logp and all; solubility logS");
    println!(
        "  {:<6} {:>5}  {:>24} {:>24} {:>24} {:>24} {:>24}  {:>11} {:>11} {:>13}",
        "prop",
        "conns",
        "runtime-host",
        "host --instance-reuse 1",
        "host, Winch's code",
        "native",
        "python",
        "host/native",
        "host/python",
        "Winch/host"
    );
    for row in &r.predict {
        let cell = |side: &str| {
            row.side(side).map_or("-".to_owned(), |f| {
                format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
            })
        };
        let ratio = |one: &str, other: &str| match (row.side(one), row.side(other)) {
            (Some(h), Some(o)) if o.rps > 0.0 => format!("{:.2}x", h.rps / o.rps),
            _ => "-".into(),
        };
        println!(
            "  {:<6} {:>5}  {:>24} {:>24} {:>24} {:>24} {:>24}  {:>11} {:>11} {:>13}",
            row.property,
            row.connections,
            cell("host"),
            cell("host-reuse1"),
            cell("host-baseline"),
            cell("native"),
            cell("python"),
            ratio("host", "native"),
            ratio("host", "python"),
            ratio("host-baseline", "host")
        );
    }
    println!("\n/health at 64 connections (requests/s, p50 / p99 ms)");
    for (side, f) in &r.health {
        println!(
            "  {side:<12} {:>8.0} {:>6.2} / {:.2}",
            f.rps, f.p50_ms, f.p99_ms
        );
    }
}
