//! `/predict` on the solubility ONNX model: `runtime-host model` serving the generic ONNX
//! component (warm instances, and a fresh instance per request, which reloads the model each
//! time as a Spin deployment does) beside the Python peer serving the same `model.onnx` with
//! FastAPI, RDKit and onnxruntime.

use super::peers::{self, ModelUnderTest, Paths};
use super::report::{PredictRow, Report};
use super::{CONNECTIONS, Sides, alternate, procs, smiles_calls};
use crate::args::BenchArgs;
use anyhow::Result;
use std::time::Duration;

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
