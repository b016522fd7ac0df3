//! `edge-bench` (run by `cargo xtask bench`): measures the product beside its alternatives on this machine and
//! prints one table with the targets (issues 7 and 11). Every side of a comparison runs in the same
//! invocation, alternating round by round, so ratios hold on a noisy machine.
//!
//! 1. `/predict` (molprop, the reference molecules, `logp` and `all`) at 1, 16 and 64
//!    connections: `runtime-host model` (warm instances, `--instance-reuse 1`, and Winch's
//!    baseline code) vs `molprop-native` vs the Python peer.
//! 2. `/health` at 64 connections. 3. `/predict` on the solubility ONNX model (same
//!    molecules, same connection counts) vs its Python peer (FastAPI + RDKit + onnxruntime).
//! 4. Registry throughput with 32 clients, duplicate ports. 5. Start-up cold and warm.
//! 6. Resident memory of `up` with 1 and 25 molprop, 25 mixed (13 molprop, 12 solubility),
//!    and 25 molprop beside the embedding model. 7. Registry latency at 10 and 2,000 active
//!    registrations. 8. Sentence embeddings (minilm) vs a Python peer (sentence-transformers).
//! 9. The chat list with 10,000 chats, whole and paged. 10. A file of 100,000 SMILES through
//!    `runtime-host predict` against `up` vs `molprop-native --file` and Python scripts.
//! 11. `/predict` and `/health` while the Prometheus metrics are scraped, and not. 12. Spin.
//! 13. `/predict` at a fixed rate (open loop), host beside native. 14. Pictures and sounds
//!     (digits and spoken-digits) beside a Python peer (FastAPI, Pillow, scipy). 15. `/v2` infer.
//! 16. The language model beside llama.cpp (llama-cpp-python's server), streamed.

mod args;
mod chats;
mod component;
mod embeddings;
mod fleet;
mod inputs;
mod instructions;
mod library;
mod llm;
mod load;
mod media;
mod memory;
mod oip;
mod onnx;
mod open_loop;
mod peers;
mod procs;
mod redis;
mod registry;
mod report;
mod scrape;
mod spin;
mod startup;
mod targets;

use anyhow::{Context, Result};
use args::BenchArgs;
use clap::Parser;
use load::{Call, Measured};
use peers::{ModelUnderTest, Paths};
use procs::Proc;
use report::{PredictRow, Report};
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const CONNECTIONS: [usize; 3] = [1, 16, 64];
const PROPERTIES: [&str; 2] = ["logp", "all"];

#[tokio::main]
async fn main() {
    if let Err(e) = run(BenchArgs::parse()).await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(args: BenchArgs) -> Result<()> {
    let (duration, rounds) = if args.quick {
        (Duration::from_millis(300), 1)
    } else {
        (Duration::from_secs_f64(args.duration), args.rounds)
    };
    std::fs::create_dir_all(&args.work_dir)?;
    let paths = Paths {
        host: args.host.clone().map_or_else(beside_this_program, Ok)?,
        components: args.components.clone().map_or_else(built_components, Ok)?,
        native: args.native.clone(),
        python_app: args.python_app.clone(),
        python: args.python.clone(),
        work: std::fs::canonicalize(&args.work_dir)?,
        wrapper: Vec::new(),
    };
    let molecules = inputs::molecules(&args.molecules)?;
    let mut report = Report {
        machine: report::machine(),
        settings: format!(
            "{} s per run, {rounds} round(s) per side, {} molecules; load generator in this process, servers in their own",
            duration.as_secs_f64(),
            molecules.len()
        ),
        ..Report::default()
    };
    eprintln!("{}\n{}", report.machine, report.settings);

    let wanted = |section: &str| args.only.is_empty() || args.only.iter().any(|s| s == section);
    if wanted("predict") {
        predict_and_health(&paths, &args, &molecules, duration, rounds, &mut report).await?;
    }
    if wanted("solubility") {
        onnx::solubility(&paths, &args, &molecules, duration, rounds, &mut report).await?;
    }
    if wanted("spin") {
        spin::section(&paths, &molecules, duration, rounds, &mut report).await?;
    }
    if wanted("embeddings") {
        embeddings::embeddings(&paths, &args, duration, rounds, &mut report).await?;
    }
    if wanted("oip") {
        report.oip = oip::oip(
            &paths,
            &args,
            &molecules,
            duration,
            rounds,
            &mut report.notes,
        )
        .await?;
    }
    if wanted("media") {
        media::media(&paths, &args, duration, rounds, &mut report).await?;
    }
    if wanted("llm") {
        llm::section(&paths, &args, rounds, &mut report).await?;
    }
    if wanted("startup") {
        startup::startup(&paths, &mut report).await?;
    }
    if wanted("open-loop") {
        report.open_loop = open_loop::open_loop(&paths, &molecules, duration, rounds).await?;
    }
    if wanted("fleet") {
        match fleet::fleet(&paths, &args, duration).await? {
            Ok((rows, failover)) => (report.fleet, report.fleet_failover) = (rows, Some(failover)),
            Err(why) => report.notes.push(format!("section fleet skipped: {why}")),
        }
    }
    if wanted("registry") {
        registry_figures(&paths, duration, &mut report).await?;
    }
    if wanted("redis") {
        match redis::store_backends(&paths, &molecules, duration).await? {
            Some(rows) => report.stores = rows,
            None => report.notes.push(
                "section redis skipped: redis-server is not installed (apt-get install redis-server)"
                    .into(),
            ),
        }
    }
    if wanted("chats") {
        report.chat_list = chats::chat_list(&paths, args.quick).await?;
    }
    if wanted("scrape") {
        scrape::scrape_cost(&paths, &molecules, duration, rounds, &mut report).await?;
    }
    if wanted("library") {
        library::library(&paths, &args, rounds, &mut report).await?;
    }
    if wanted("component") {
        component::deploy_costs(&paths, args.quick, &mut report)?;
    }
    if wanted("memory") {
        memory::memory_of_up(&paths, &args, &molecules, &mut report).await?;
    }
    if wanted("instructions") {
        let (rows, notes) = (&mut report.instructions, &mut report.notes);
        instructions::instructions(&paths, &molecules, args.quick, rows, notes).await?;
    }
    targets::judge(&mut report);

    report.print();
    // Printed by its section, which itself fills the report (so the report cannot call it).
    media::print(&report.media, &report.media_steps);
    llm::print(&report.llm);
    if let Some(file) = &args.json {
        std::fs::write(file, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", file.display()))?;
        println!("\nfigures written to {}", file.display());
    }
    Ok(())
}

/// `runtime-host` in the directory of this program (cargo builds both into one).
fn beside_this_program() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let host = exe.with_file_name("runtime-host");
    anyhow::ensure!(
        host.exists(),
        "no runtime-host beside {} (build it with `cargo xtask build`, or pass --host)",
        exe.display()
    );
    Ok(host)
}

/// The components of the target directory this program was built into.
fn built_components() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let target = exe.parent().and_then(std::path::Path::parent);
    target
        .map(|t| t.join("wasm32-wasip2/release"))
        .context("this program is not in a cargo target directory; pass --components")
}

/// `/predict` of `property` for each molecule (molprop).
pub(crate) fn predict_calls(molecules: &[String], property: &str) -> Arc<[Call]> {
    molecules
        .iter()
        .map(|s| {
            let body = json!({"input_type": "text", "data": {"text": s, "property": property}});
            Call::post_json("/predict", &body)
        })
        .collect()
}

/// `/predict` of each molecule, for a model that takes only the SMILES (solubility).
fn smiles_calls(molecules: &[String]) -> Arc<[Call]> {
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
struct Sides {
    procs: Vec<Proc>,
    addrs: Vec<(String, SocketAddr)>,
}

impl Sides {
    fn push(&mut self, name: &str, proc: Proc, addr: SocketAddr) {
        self.procs.push(proc);
        self.addrs.push((name.to_owned(), addr));
    }

    /// Adds the Python peer `app` (from virtualenv `env`) as side `python`, or notes in the
    /// report why it is missing.
    async fn add_python(
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
    async fn record_memory_and_stop(
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
async fn alternate(
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

async fn predict_and_health(
    paths: &Paths,
    args: &BenchArgs,
    molecules: &[String],
    duration: Duration,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
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

async fn registry_figures(paths: &Paths, duration: Duration, report: &mut Report) -> Result<()> {
    eprintln!("registry throughput, 32 clients ...");
    // The spec's range size (5100-5999): the lease table every operation rewrites is as
    // large as a default deployment's.
    let (reg, addr) = peers::registry(paths, "bench-registry", "30000-30899", &[]).await?;
    report.registry = Some(registry::throughput(addr, 32, duration * 2).await?);
    reg.stop().await;
    for active in [10, 2000] {
        eprintln!("registry latency with {active} active registrations ...");
        let name = format!("scale-registry-{active}");
        let (reg, addr) = peers::registry(paths, &name, "30000-34999", &[]).await?;
        report
            .registry_scale
            .push(registry::latency_at(addr, active, duration).await?);
        reg.stop().await;
    }
    Ok(())
}
