//! `/predict` on the solubility ONNX model: `runtime-host model` serving the generic ONNX
//! component (warm instances, and a fresh instance per request, which reloads the model each
//! time as a Spin deployment does) beside the Python peer serving the same `model.onnx` with
//! FastAPI, RDKit and onnxruntime.

use super::compare::{Sides, alternate, smiles_calls};
use super::peers::{self, ModelUnderTest, Paths};
use super::predict::CONNECTIONS;
use super::procs;
use super::report::{PredictRow, Report};
use super::section::Section;
use crate::args::BenchArgs;
use anyhow::Result;
use std::time::Duration;

pub const SECTION: Section = Section {
    name: "solubility",
    about: "the solubility ONNX model's /predict beside its Python peer, and under `spin up` where spin is on the PATH",
    run: |b, r| {
        Box::pin(solubility(
            b.paths,
            b.args,
            b.molecules,
            b.duration,
            b.rounds,
            r,
        ))
    },
    targets,
    print: print_spin,
};

pub async fn solubility(
    paths: &Paths,
    args: &BenchArgs,
    molecules: &[String],
    duration: Duration,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let (reg, reg_addr) = peers::registry(paths, "onnx-registry", "22200-22299", &[]).await?;
    let model = ModelUnderTest::onnx(paths, "solubility")?;
    let mut sides = Sides::default();
    for (side, extra) in [
        ("host", &[][..]),
        ("host-reuse1", &["--instance-reuse", "1"][..]),
        ("host-baseline", &["--baseline-only"][..]),
    ] {
        let name = format!("solubility-{side}");
        let data = procs::fresh_dir(&paths.work, &name)?;
        let (proc, addr, _) =
            peers::host_model(paths, &name, &model, reg_addr, &data, extra).await?;
        sides.push(side, proc, addr);
    }
    // Spin joins a relative files source to the manifest's directory: give it the whole path.
    let model_dir = std::fs::canonicalize("models/solubility")?;
    super::spin::add_solubility_sides(paths, &model_dir, &mut sides, report).await;
    sides
        .add_python(
            paths,
            args,
            (&peers::CHEMISTRY_PEERS, "solubility_app"),
            report,
        )
        .await;
    let calls = smiles_calls(molecules);
    alternate(&sides.addrs, 16, duration / 2, 1, &calls).await?;
    for conns in CONNECTIONS {
        eprintln!("/predict solubility at {conns} connection(s) ...");
        let figures = alternate(&sides.addrs, conns, duration, rounds, &calls).await?;
        report.predict.push(PredictRow {
            property: "logS".into(),
            connections: conns,
            sides: figures,
        });
    }
    sides
        .record_memory_and_stop(report, |side| match side {
            "host" => "runtime-host model (solubility), after load",
            "host-reuse1" => "runtime-host model (solubility) --instance-reuse 1",
            "host-baseline" => "runtime-host model (solubility), Winch's baseline code",
            "spin-generic" => "spin up (solubility, generic component + mount)",
            "spin-snapshot" => "spin up (solubility snapshot)",
            _ => "Python solubility peer (RDKit + onnxruntime)",
        })
        .await;
    reg.stop().await;
    Ok(())
}

/// Issue 27: a fresh instance per request (Spin's model) within reach; the host over the
/// Python ONNX peer.
fn targets(r: &mut Report) {
    let solubility = r
        .predict
        .iter()
        .find(|p| p.property == "logS" && p.connections == 16)
        .cloned();
    if let Some(fresh) = solubility.as_ref().and_then(|row| row.side("host-reuse1")) {
        // Issue 27: a fresh instance per request (Spin's model) starts from the snapshot.
        r.target(
            "solubility, --instance-reuse 1, 16 conns",
            ">= 3,000 req/s",
            format!("{:.0} req/s", fresh.rps),
            fresh.rps >= 3000.0,
        );
    }
    if let Some(row) = solubility
        && let (Some(h), Some(py)) = (row.side("host"), row.side("python"))
    {
        let ratio = h.rps / py.rps.max(1e-9);
        r.target(
            "solubility: host vs Python ONNX peer, 16 conns",
            ">= 5x req/s, lower p99",
            format!("{ratio:.1}x, p99 {:.2} vs {:.2} ms", h.p99_ms, py.p99_ms),
            ratio >= 5.0 && h.p99_ms < py.p99_ms,
        );
    }
}

/// Solubility under `spin up` (issue 27), where the bench found a `spin` to run.
fn print_spin(r: &Report) {
    let spin_rows: Vec<&PredictRow> = r
        .predict
        .iter()
        .filter(|r| r.side("spin-snapshot").is_some() || r.side("spin-generic").is_some())
        .collect();
    if spin_rows.is_empty() {
        return;
    }
    println!(
        "\nsolubility under `spin up` (requests/s, p50 / p99 ms; a fresh instance per request)"
    );
    println!(
        "  {:>5}  {:>24} {:>24} {:>24}",
        "conns", "spin, generic + mount", "spin, snapshot", "host --instance-reuse 1"
    );
    for row in spin_rows {
        let cell = |side: &str| {
            row.side(side).map_or("-".to_owned(), |f| {
                format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
            })
        };
        println!(
            "  {:>5}  {:>24} {:>24} {:>24}",
            row.connections,
            cell("spin-generic"),
            cell("spin-snapshot"),
            cell("host-reuse1")
        );
    }
}
