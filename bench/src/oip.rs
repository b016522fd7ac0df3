//! Section `oip`: the Open Inference Protocol against v1.2 on the same server (issue 59).
//! `runtime-host model` serves molprop, solubility and (with its files) minilm; each load is
//! run as v1.2 `/predict`, as `/v2/models/<name>/infer` with JSON tensors, and with binary
//! tensors (Triton's extension, tritonclient's default: binary inputs and outputs), the
//! three alternating run by run on the one server. The target: the protocol at >= 0.9x the
//! requests per second of `/predict`.

use super::compare::smiles_calls;
use super::load::{self, Call, Measured};
use super::peers::{self, ModelUnderTest, Paths};
use super::procs;
use super::report::{OipRow, Report};
use super::section::Section;
use crate::args::BenchArgs;
use anyhow::Result;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The three ways of asking, as the report's side names.
pub const SIDES: [&str; 3] = ["v1.2", "oip-json", "oip-binary"];
const CONNECTIONS: [usize; 2] = [1, 16];

pub const SECTION: Section = Section {
    name: "oip",
    about: "the Open Inference Protocol's infer, JSON and binary, against /predict",
    run: |b, r| {
        Box::pin(async move {
            r.oip = oip(
                b.paths,
                b.args,
                b.molecules,
                b.duration,
                b.rounds,
                &mut r.notes,
            )
            .await?;
            Ok(())
        })
    },
    targets,
    print: |r| print(&r.oip),
};
/// Sentences per embeddings request: few enough that a 2 s run at 16 connections on two
/// cores completes dozens of requests (at 32, a handful: the figures were noise).
const TEXTS: usize = 4;

/// An inference request for `texts` as the BYTES input `input`, asking for `outputs` (all
/// when empty): JSON tensors, or binary ones with binary outputs.
fn infer(model: &str, input: &str, texts: &[&str], outputs: &[&str], binary: bool) -> Call {
    let path = format!("/v2/models/{model}/infer");
    let mut tensor = json!({"name": input, "shape": [texts.len()], "datatype": "BYTES"});
    let mut request = json!({"inputs": []});
    if !outputs.is_empty() {
        let asked: Vec<Value> = outputs
            .iter()
            .map(|o| json!({"name": o, "parameters": {"binary_data": binary}}))
            .collect();
        request["outputs"] = json!(asked);
    } else if binary {
        request["parameters"] = json!({"binary_data_output": true});
    }
    if !binary {
        tensor["data"] = json!(texts);
        request["inputs"] = json!([tensor]);
        return Call::post_json(&path, &request);
    }
    let mut data = Vec::new();
    for t in texts {
        data.extend_from_slice(&(t.len() as u32).to_le_bytes());
        data.extend_from_slice(t.as_bytes());
    }
    tensor["parameters"] = json!({"binary_data_size": data.len()});
    request["inputs"] = json!([tensor]);
    let mut body = request.to_string().into_bytes();
    let header = body.len();
    body.extend_from_slice(&data);
    Call::post_bytes(
        &path,
        body,
        vec![
            ("content-type", "application/octet-stream".to_owned()),
            ("inference-header-content-length", header.to_string()),
        ],
    )
}

/// One call list per side: v1.2, then the protocol in JSON and in binary.
type Loads = [Arc<[Call]>; 3];
/// A deployment's loads, each with what it asks.
type Named = Vec<(String, Loads)>;

fn smiles_loads(model: &str, molecules: &[String], property: Option<&str>) -> Loads {
    let v12: Arc<[Call]> = match property {
        None => smiles_calls(molecules),
        Some(p) => molecules
            .iter()
            .map(|s| {
                Call::post_json(
                    "/predict",
                    &json!({"input_type": "text", "data": {"text": s, "property": p}}),
                )
            })
            .collect(),
    };
    let outputs: Vec<&str> = property.into_iter().collect();
    let oip = |binary| -> Arc<[Call]> {
        molecules
            .iter()
            .map(|s| infer(model, "smiles", &[s.as_str()], &outputs, binary))
            .collect()
    };
    [v12, oip(false), oip(true)]
}

/// Runs every side's calls on `addr`, alternating run by run.
async fn alternate(
    addr: SocketAddr,
    conns: usize,
    duration: Duration,
    rounds: usize,
    loads: &Loads,
) -> Result<Vec<(String, load::Figures)>> {
    let mut totals: Vec<Measured> = loads.iter().map(|_| Measured::empty()).collect();
    for _ in 0..rounds {
        for (calls, total) in loads.iter().zip(&mut totals) {
            total.absorb(load::run(addr, conns, duration, calls.clone()).await?);
        }
    }
    Ok(SIDES
        .iter()
        .zip(totals)
        .map(|(side, m)| (side.to_string(), m.figures()))
        .collect())
}

pub async fn oip(
    paths: &Paths,
    args: &BenchArgs,
    molecules: &[String],
    duration: Duration,
    rounds: usize,
    notes: &mut Vec<String>,
) -> Result<Vec<OipRow>> {
    let mut rows = Vec::new();
    let (reg, reg_addr) = peers::registry(paths, "oip-registry", "22700-22799", &[]).await?;
    let mut procs = Vec::new();
    let mut deployments: Vec<(String, SocketAddr, Named)> = Vec::new();
    for (name, model) in [
        ("molprop", ModelUnderTest::molprop(paths)?),
        ("solubility", ModelUnderTest::onnx(paths, "solubility")?),
    ] {
        let dir = procs::fresh_dir(&paths.work, &format!("oip-{name}"))?;
        let (proc, addr, _) =
            peers::host_model(paths, &format!("oip-{name}"), &model, reg_addr, &dir, &[]).await?;
        procs.push(proc);
        let loads = match name {
            "molprop" => vec![
                (
                    "molprop logp".to_owned(),
                    smiles_loads(name, molecules, Some("logp")),
                ),
                (
                    "molprop all".to_owned(),
                    smiles_loads(name, molecules, None),
                ),
            ],
            _ => vec![("solubility".to_owned(), smiles_loads(name, molecules, None))],
        };
        deployments.push((name.to_owned(), addr, loads));
    }
    if let Some((proc, addr, loads)) = minilm(paths, args, reg_addr, notes).await? {
        procs.push(proc);
        deployments.push(("minilm".into(), addr, loads));
    }
    for (_, addr, loads) in &deployments {
        alternate(*addr, 16, duration / 2, 1, &loads[0].1).await?;
        for (what, calls) in loads {
            for conns in CONNECTIONS {
                eprintln!("{what}: /predict vs /v2 infer at {conns} connection(s) ...");
                rows.push(OipRow {
                    load: what.clone(),
                    connections: conns,
                    sides: alternate(*addr, conns, duration, rounds, calls).await?,
                });
            }
        }
    }
    for proc in procs {
        proc.stop().await;
    }
    reg.stop().await;
    Ok(rows)
}

/// minilm with its files, and its loads: [`TEXTS`] sentences a request.
async fn minilm(
    paths: &Paths,
    args: &BenchArgs,
    registry: SocketAddr,
    notes: &mut Vec<String>,
) -> Result<Option<(procs::Proc, SocketAddr, Named)>> {
    let ai_models = std::fs::canonicalize(&args.ai_models_dir).ok();
    let Some(ai_models) = ai_models.filter(|d| d.join(edge_api::embedding::MODEL).is_dir()) else {
        notes.push(
            "oip: minilm skipped (no embedding model files; run `cargo xtask install-models`)"
                .into(),
        );
        return Ok(None);
    };
    let sentences = super::inputs::sentences()?;
    let model = ModelUnderTest::minilm(paths, &ai_models)?;
    let dir = procs::fresh_dir(&paths.work, "oip-minilm")?;
    let (proc, addr, _) =
        peers::host_model(paths, "oip-minilm", &model, registry, &dir, &[]).await?;
    let batches: Vec<Vec<&str>> = (0..sentences.len())
        .map(|start| {
            let all = sentences.iter().cycle().skip(start).take(TEXTS);
            all.map(String::as_str).collect()
        })
        .collect();
    let v12: Arc<[Call]> = batches
        .iter()
        .map(|texts| {
            Call::post_json(
                "/predict",
                &json!({"input_type": "text", "data": {"texts": texts}}),
            )
        })
        .collect();
    let oip = |binary| -> Arc<[Call]> {
        batches
            .iter()
            .map(|texts| infer("minilm", "text", texts, &[], binary))
            .collect()
    };
    let loads = vec![(
        format!("minilm {TEXTS} texts"),
        [v12, oip(false), oip(true)],
    )];
    Ok(Some((proc, addr, loads)))
}

/// The section's table: requests/s and p50/p99 per side, and each protocol side over v1.2.
pub fn print(rows: &[OipRow]) {
    if rows.is_empty() {
        return;
    }
    println!(
        "\nOpen Inference Protocol vs v1.2 on one runtime-host model (requests/s, p50 / p99 ms)"
    );
    println!(
        "  {:<18} {:>5}  {:>24} {:>24} {:>24}  {:>9} {:>11}",
        "load",
        "conns",
        "v1.2 /predict",
        "/v2 infer JSON",
        "/v2 infer binary",
        "JSON/v1.2",
        "binary/v1.2"
    );
    for row in rows {
        let cell = |side: &str| {
            row.side(side).map_or("-".to_owned(), |f| {
                format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
            })
        };
        let ratio = |side: &str| match (row.side(side), row.side("v1.2")) {
            (Some(s), Some(v)) if v.rps > 0.0 => format!("{:.2}x", s.rps / v.rps),
            _ => "-".into(),
        };
        println!(
            "  {:<18} {:>5}  {:>24} {:>24} {:>24}  {:>9} {:>11}",
            row.load,
            row.connections,
            cell("v1.2"),
            cell("oip-json"),
            cell("oip-binary"),
            ratio("oip-json"),
            ratio("oip-binary")
        );
    }
}
/// The targets: at 16 connections, each protocol side within 0.9x of v1.2 (molprop and
/// solubility); and minilm's binary as fast as its JSON, within noise.
fn targets(report: &mut Report) {
    for row in report.oip.clone() {
        if row.connections != 16 {
            continue;
        }
        let (Some(v12), Some(json), Some(binary)) = (
            row.side("v1.2"),
            row.side("oip-json"),
            row.side("oip-binary"),
        ) else {
            continue;
        };
        let errors = v12.errors + json.errors + binary.errors;
        if row.load.starts_with("minilm") {
            let ratio = binary.rps / json.rps.max(1e-9);
            report.target(
                &format!("{}: /v2 binary vs JSON, 16 conns", row.load),
                ">= 0.95x req/s (the network dominates), 0 errors",
                format!(
                    "{ratio:.2}x ({:.0} vs {:.0}/s), {errors} errors",
                    binary.rps, json.rps
                ),
                ratio >= 0.95 && errors == 0,
            );
            continue;
        }
        for (side, f) in [("JSON", json), ("binary", binary)] {
            let ratio = f.rps / v12.rps.max(1e-9);
            report.target(
                &format!("{}: /v2 infer {side} vs /predict, 16 conns", row.load),
                ">= 0.9x req/s, 0 errors",
                format!(
                    "{ratio:.2}x ({:.0} vs {:.0}/s), {errors} errors",
                    f.rps, v12.rps
                ),
                ratio >= 0.9 && errors == 0,
            );
        }
    }
}
