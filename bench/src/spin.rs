//! Spin's side of the snapshot (issue 27). Where a `spin` binary is on the PATH, `spin up`
//! serves solubility twice beside the host: the generic ONNX component with the model
//! directory mounted (loading the model in every request's fresh instance, as today's
//! `spin.toml` does) and the pre-initialized snapshot without a mount. Where there is no
//! `spin`, the report says so and nothing is measured.
//!
//! Section `spin` (issue 47 §3): the snapshot under `spin up` on Spin's own stores, its
//! default SQLite file and (where redis-server is installed) Redis, beside `runtime-host
//! model` of the same model: `/health`, `/info` and `/predict` at 16 connections.

use super::compare::{Sides, alternate, smiles_calls};
use super::load::Call;
use super::peers::{self, ModelUnderTest, Paths};
use super::procs::{Proc, free_port, wait_ok};
use super::report::PredictRow;
use super::report::Report;
use super::section::Section;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub const SECTION: Section = Section {
    name: "spin",
    about: "solubility's snapshot under `spin up` on its SQLite and Redis stores beside the host",
    run: |b, r| Box::pin(section(b.paths, b.molecules, b.duration, b.rounds, r)),
    targets,
    print,
};

/// The `spin` on the PATH and its version, if there is one.
fn spin_version() -> Option<String> {
    let out = std::process::Command::new("spin")
        .arg("--version")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Adds sides `spin-generic` and `spin-snapshot` for the model directory `model`, or notes
/// why not.
pub async fn add_solubility_sides(
    paths: &Paths,
    model: &Path,
    sides: &mut Sides,
    report: &mut Report,
) {
    let Some(version) = spin_version() else {
        report.notes.push(
            "spin is not on the PATH: solubility under `spin up` (generic component vs \
             snapshot) was not measured; runtime-host --instance-reuse 1 is the same model of a \
             fresh instance per request"
                .into(),
        );
        return;
    };
    match spin_sides(paths, model, sides).await {
        Ok(()) => report.notes.push(format!(
            "{version}: spin-generic is `spin up` of the ONNX component with the model \
             directory mounted, spin-snapshot of `runtime-host snapshot`'s output without it"
        )),
        Err(e) => report.notes.push(format!(
            "{version} found, but serving under it failed: {e:#}"
        )),
    }
}

/// Section `spin`: see the module's documentation.
pub async fn section(
    paths: &Paths,
    molecules: &[String],
    duration: Duration,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let Some(version) = spin_version() else {
        report
            .notes
            .push("section spin skipped: spin is not on the PATH".into());
        return Ok(());
    };
    let model = std::fs::canonicalize("models/solubility")?;
    let snapshot = snapshot_of(paths, &paths.component("onnx_model")?, &model).await?;
    let (reg, reg_addr) = peers::registry(paths, "spin-registry", "22300-22399", &[]).await?;
    let mut sides = Sides::default();
    let onnx = ModelUnderTest::onnx(paths, "solubility")?;
    let data = super::procs::fresh_dir(&paths.work, "spin-beside-host")?;
    let (proc, addr, _) =
        peers::host_model(paths, "spin-beside-host", &onnx, reg_addr, &data, &[]).await?;
    sides.push("host", proc, addr);
    let (proc, addr) = spin_up(paths, "spin-sqlite", &snapshot, None, None).await?;
    sides.push("spin-sqlite", proc, addr);
    // The opt-in of docs/spin.md: the counters in an in-memory `deployment` store.
    let dir = super::procs::fresh_dir(&paths.work, "spin-memory-config")?;
    let config = dir.join("runtime-config.toml");
    std::fs::write(&config, "[key_value_store.deployment]\ntype = \"spin\"\n")?;
    let (proc, addr) = spin_up(paths, "spin-memory", &snapshot, None, Some(&config)).await?;
    sides.push("spin-memory", proc, addr);
    let redis = super::redis::start_redis(paths)?;
    match &redis {
        Some(r) => {
            let (proc, addr) =
                spin_up(paths, "spin-redis", &snapshot, None, Some(&r.config)).await?;
            sides.push("spin-redis", proc, addr);
        }
        None => report
            .notes
            .push("section spin: redis-server is not installed, Spin on Redis not measured".into()),
    }
    report.notes.push(format!(
        "{version}: section spin serves `runtime-host snapshot`'s solubility with `spin up` on \
         its default SQLite store (spin-sqlite) and on Redis (spin-redis), beside \
         `runtime-host model` (host)"
    ));
    let endpoints: [(&str, Arc<[Call]>); 3] = [
        ("/health", Arc::new([Call::get("/health")])),
        ("/info", Arc::new([Call::get("/info")])),
        ("/predict", smiles_calls(molecules)),
    ];
    for (endpoint, calls) in endpoints {
        alternate(&sides.addrs, 16, duration / 2, 1, &calls).await?;
        eprintln!("spin: {endpoint} at 16 connections ...");
        let figures = alternate(&sides.addrs, 16, duration, rounds, &calls).await?;
        report.spin.push(PredictRow {
            property: endpoint.into(),
            connections: 16,
            sides: figures,
        });
    }
    sides
        .record_memory_and_stop(report, |side| match side {
            "host" => "runtime-host model (solubility), beside Spin",
            "spin-sqlite" => "spin up (solubility snapshot, SQLite store), after load",
            "spin-memory" => "spin up (solubility snapshot, in-memory counters), after load",
            _ => "spin up (solubility snapshot, Redis store), after load",
        })
        .await;
    reg.stop().await;
    Ok(())
}

async fn spin_sides(paths: &Paths, model: &Path, sides: &mut Sides) -> Result<()> {
    let generic = paths.component("onnx_model")?;
    let snapshot = snapshot_of(paths, &generic, model).await?;
    let (proc, addr) = spin_up(paths, "spin-generic", &generic, Some(model), None).await?;
    sides.push("spin-generic", proc, addr);
    let (proc, addr) = spin_up(paths, "spin-snapshot", &snapshot, None, None).await?;
    sides.push("spin-snapshot", proc, addr);
    Ok(())
}

/// `runtime-host snapshot` of the ONNX component `generic` with `model` mounted.
async fn snapshot_of(paths: &Paths, generic: &Path, model: &Path) -> Result<std::path::PathBuf> {
    let snapshot = paths.work.join("spin-solubility-snapshot.wasm");
    let mount = format!("{}:/model", model.display());
    let out = tokio::process::Command::new(&paths.host)
        .arg("snapshot")
        .arg(generic)
        .args(["--dir", &mount, "-o"])
        .arg(&snapshot)
        .output()
        .await
        .context("running runtime-host snapshot")?;
    anyhow::ensure!(
        out.status.success(),
        "runtime-host snapshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(snapshot)
}

/// `spin up` of a one-component app serving `source` at every path, with `model` mounted at
/// `/model` when given; waits for its `/health`.
async fn spin_up(
    paths: &Paths,
    name: &str,
    source: &Path,
    model: Option<&Path>,
    runtime_config: Option<&Path>,
) -> Result<(Proc, SocketAddr)> {
    let dir = super::procs::fresh_dir(&paths.work, name)?;
    let files = model.map_or(String::new(), |m| {
        format!(
            "files = [{{ source = {}, destination = \"/model\" }}]\n",
            toml_string(m)
        )
    });
    // A runtime config that names `deployment` gives the component that store too.
    let labels = match runtime_config.map(std::fs::read_to_string).transpose()? {
        Some(config) if config.contains("[key_value_store.deployment]") => {
            "\"default\", \"deployment\""
        }
        _ => "\"default\"",
    };
    let manifest = format!(
        "spin_manifest_version = 2\n\n\
         [application]\nname = \"bench-{name}\"\nversion = \"0.1.0\"\n\n\
         [[trigger.http]]\nroute = \"/...\"\ncomponent = \"model\"\n\n\
         [component.model]\nsource = {}\n{files}key_value_stores = [{labels}]\n",
        toml_string(source)
    );
    let manifest_file = dir.join("spin.toml");
    std::fs::write(&manifest_file, manifest)?;
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let mut args = vec![
        "up".to_owned(),
        "--from".into(),
        manifest_file.display().to_string(),
        "--listen".into(),
        addr.to_string(),
        "--state-dir".into(),
        dir.join(".spin").display().to_string(),
    ];
    if let Some(file) = runtime_config {
        args.extend(["--runtime-config-file".into(), file.display().to_string()]);
    }
    let proc = Proc::spawn(name, Path::new("spin"), &args, &paths.log(name))?;
    let client = service_client::HttpClient::new(Duration::from_secs(5));
    wait_ok(
        &client,
        &format!("http://{addr}/health"),
        Duration::from_secs(180),
    )
    .await
    .with_context(|| format!("see {}", paths.log(name).display()))?;
    Ok((proc, addr))
}

/// `path` as a TOML basic string.
fn toml_string(path: &Path) -> String {
    serde_json::to_string(&path.display().to_string()).expect("a string serializes")
}
/// Issue 47 §3: solubility's snapshot under Spin, 16 connections.
fn targets(r: &mut Report) {
    let goals = [
        ("/health", "spin-sqlite", 4000.0),
        ("/health", "spin-redis", 4000.0),
        ("/predict", "spin-sqlite", 1000.0),
        ("/predict", "spin-redis", 2000.0),
    ];
    for (endpoint, side, goal) in goals {
        let found = r
            .spin
            .iter()
            .find(|row| row.property == endpoint)
            .and_then(|row| row.side(side))
            .map(|f| f.rps);
        if let Some(rps) = found {
            r.target(
                &format!("Spin {endpoint}, {side}, 16 conns"),
                &format!(">= {goal:.0} req/s"),
                format!("{rps:.0} req/s"),
                rps >= goal,
            );
        }
    }
}

/// Section `spin` (issue 47 §3).
fn print(r: &Report) {
    if r.spin.is_empty() {
        return;
    }
    println!("\nsolubility snapshot under `spin up`, 16 connections (requests/s, p50 / p99 ms)");
    println!(
        "  {:<9} {:>24} {:>24} {:>24} {:>24}",
        "endpoint",
        "spin, SQLite store",
        "spin, Redis store",
        "spin, counters in memory",
        "runtime-host model"
    );
    for row in &r.spin {
        let cell = |side: &str| {
            row.side(side).map_or("-".to_owned(), |f| {
                format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
            })
        };
        println!(
            "  {:<9} {:>24} {:>24} {:>24} {:>24}",
            row.property,
            cell("spin-sqlite"),
            cell("spin-redis"),
            cell("spin-memory"),
            cell("host")
        );
    }
}
