//! Section `media` (issue 58 §5): pictures and sounds. `runtime-host model` serving the ONNX
//! model component on models/digits and models/spoken-digits, beside the Python peer
//! (media_app.py: FastAPI, Pillow, scipy/numpy, onnxruntime) serving the same directories,
//! sides alternating run by run as in the other sections:
//! - digits `/predict` with a PNG of about 1 KB at 1 and 16 connections;
//! - digits `/predict` with a one-megapixel JPEG at 1 connection (the decode and resize
//!   dominate);
//! - spoken-digits `/predict` with 1 s of 16 kHz WAV at 1 and 16 connections;
//! - the same steps natively (the media crate without HTTP, base64 or WebAssembly) and the
//!   time each server says it spent inside (`computation_time_ms`), to show where time goes;
//! - each deployment's resident memory.

mod inputs;
mod native;
mod print;

use super::compare::{Sides, alternate};
use super::load::Call;
use super::peers::{self, ModelUnderTest, Paths};
use super::procs;
use super::report::{PredictRow, Report, StepRow};
use super::section::{Section, no_targets};
use crate::args::BenchArgs;
use anyhow::{Context, Result};
use base64::Engine;
use inputs::Inputs;
pub use print::print;
use serde_json::{Value, json};
use service_client::HttpClient;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const DIGITS: &str = "models/digits";
const SPOKEN: &str = "models/spoken-digits";
/// Load names, as the report's rows and the targets name them.
pub const PNG: &str = "digits, 1 KB PNG";
pub const JPEG: &str = "digits, 1 MP JPEG";
pub const WAV: &str = "spoken-digits, 1 s WAV";

pub const SECTION: Section = Section {
    name: "media",
    about: "pictures and sounds: digits and spoken-digits beside a Python peer, and the media crate's steps natively",
    run: |b, r| Box::pin(media(b.paths, b.args, b.duration, b.rounds, r)),
    targets: no_targets,
    print: |r| print(&r.media, &r.media_steps),
};

/// One deployment measured: its model directory, what it takes, and its loads
/// (name, connections, the request).
struct Deployment<'a> {
    model: &'a str,
    loads: Vec<(&'static str, usize, Call)>,
}

fn request(kind: &str, file: &[u8]) -> Call {
    let b64 = base64::engine::general_purpose::STANDARD.encode(file);
    Call::post_json(
        "/predict",
        &json!({"input_type": kind, "data": {kind: b64}}),
    )
}

pub async fn media(
    paths: &Paths,
    args: &BenchArgs,
    duration: Duration,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    report.notes.push(format!(
        "section media began with load average {} (1, 5, 15 min)",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    ));
    let inputs = Inputs::make(Path::new(DIGITS))?;
    eprintln!(
        "media: PNG {} bytes, JPEG {} bytes ({side}x{side}), WAV {} bytes; native steps ...",
        inputs.png.len(),
        inputs.jpeg.len(),
        inputs.wav.len(),
        side = inputs::PHOTO_SIDE,
    );
    let digits_spec = native::image_spec(Path::new(DIGITS))?;
    let steps = native::pictures(&inputs, &digits_spec, args.quick)?;
    report.media_steps.extend(steps);
    let spoken = Path::new(SPOKEN).join("model.toml").is_file();
    if spoken {
        let spec = native::audio_spec(Path::new(SPOKEN))?;
        report
            .media_steps
            .extend(native::sounds(&inputs, &spec, args.quick)?);
    }
    let digits = Deployment {
        model: "digits",
        loads: vec![
            (PNG, 1, request("image", &inputs.png)),
            (PNG, 16, request("image", &inputs.png)),
            (JPEG, 1, request("image", &inputs.jpeg)),
        ],
    };
    serve_and_measure(paths, args, &digits, duration, rounds, report).await?;
    if spoken {
        let wav = request("audio", &inputs.wav);
        let spoken = Deployment {
            model: "spoken-digits",
            loads: vec![(WAV, 1, wav.clone()), (WAV, 16, wav)],
        };
        serve_and_measure(paths, args, &spoken, duration, rounds, report).await?;
    } else {
        report.notes.push(format!(
            "media: {SPOKEN}/model.toml is missing: spoken-digits not measured"
        ));
    }
    judge(report);
    Ok(())
}

async fn serve_and_measure(
    paths: &Paths,
    args: &BenchArgs,
    d: &Deployment<'_>,
    duration: Duration,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let name = format!("media-{}", d.model);
    let (reg, reg_addr) = peers::registry(paths, &name, "22400-22499", &[]).await?;
    let model = ModelUnderTest::onnx(paths, d.model)?;
    let data = procs::fresh_dir(&paths.work, &format!("{name}-host"))?;
    let (host, addr, _) = peers::host_model(paths, &name, &model, reg_addr, &data, &[]).await?;
    if let Some(mib) = host.rss_mib() {
        let what = format!("runtime-host model ({}), before any request", d.model);
        report.memory_mib.push((what, mib));
    }
    let mut sides = Sides::default();
    sides.push("host", host, addr);
    sides
        .add_python(paths, args, (&peers::CHEMISTRY_PEERS, "media_app"), report)
        .await;
    let first = Arc::<[Call]>::from([d.loads[0].2.clone()]);
    agree(&sides, &first[0], d.model, report).await?;
    alternate(&sides.addrs, 16, duration / 2, 1, &first).await?;
    for (load, conns, call) in &d.loads {
        eprintln!("media: {load} at {conns} connection(s) ...");
        let calls = Arc::<[Call]>::from([call.clone()]);
        let figures = alternate(&sides.addrs, *conns, duration, rounds, &calls).await?;
        report.media.push(PredictRow {
            property: (*load).into(),
            connections: *conns,
            sides: figures,
        });
    }
    let mut seen = Vec::new();
    for (load, _, call) in &d.loads {
        if !seen.contains(load) {
            seen.push(load);
            inside(&sides, load, call, args.quick, report).await?;
        }
    }
    for (p, (side, _)) in sides.procs.iter().zip(&sides.addrs) {
        let who = match side.as_str() {
            "host" => "runtime-host model",
            _ => "Python media peer",
        };
        if let Some(mib) = p.rss_mib() {
            let what = format!("{who} ({}), after the loads", d.model);
            report.memory_mib.push((what, mib));
        }
    }
    for p in sides.procs {
        p.stop().await;
    }
    reg.stop().await;
    Ok(())
}

/// Sends `call` once to each side: both must answer 200 with a prediction, and the label
/// each gives is noted (the peer's Pillow and numpy are not the media crate: a different
/// label is worth knowing, not a failure).
async fn agree(sides: &Sides, call: &Call, model: &str, report: &mut Report) -> Result<()> {
    let client = HttpClient::new(Duration::from_secs(60));
    let mut labels = Vec::new();
    for (side, addr) in &sides.addrs {
        let reply = client
            .send(
                call.method.clone(),
                &format!("http://{addr}{}", call.path),
                Some(call.body.to_vec()),
                None,
            )
            .await?;
        let body: Value = reply.json()?;
        anyhow::ensure!(
            reply.status == 200 && body["success"] == true,
            "{side} ({model}) did not answer the first request: {body}"
        );
        let label = body["results"]["prediction"]
            .as_str()
            .with_context(|| format!("{side} ({model}): no results.prediction in {body}"))?;
        labels.push(format!("{side} says {label}"));
    }
    report.notes.push(format!(
        "media: {model}, first load's file: {}",
        labels.join(", ")
    ));
    Ok(())
}

/// The time each side says it spent inside on `call` (`computation_time_ms`: from the
/// parsed request to the answer: base64, decode, features, graph, domain), median of
/// sequential requests.
async fn inside(
    sides: &Sides,
    load: &str,
    call: &Call,
    quick: bool,
    report: &mut Report,
) -> Result<()> {
    let client = HttpClient::new(Duration::from_secs(60));
    let runs = if quick { 3 } else { 30 };
    for (side, addr) in &sides.addrs {
        let mut ms = Vec::with_capacity(runs);
        for _ in 0..runs {
            let url = format!("http://{addr}{}", call.path);
            let reply = client
                .send(call.method.clone(), &url, Some(call.body.to_vec()), None)
                .await?;
            let body: Value = reply.json()?;
            ms.push(body["computation_time_ms"].as_f64().unwrap_or(f64::NAN));
        }
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
        let who = match side.as_str() {
            "host" => "inside the component",
            _ => "inside the Python handler",
        };
        report.media_steps.push(StepRow {
            what: format!("{load}: {who} (computation_time_ms)"),
            runs,
            p50_ms: at(0.5),
            p90_ms: at(0.9),
            min_ms: ms[0],
        });
    }
    Ok(())
}

/// The targets of issue 58 §5.
fn judge(r: &mut Report) {
    let row = |r: &Report, load: &str, conns: usize| {
        r.media
            .iter()
            .find(|m| m.property == load && m.connections == conns)
            .cloned()
    };
    if let Some(png) = row(r, PNG, 16)
        && let (Some(h), Some(py)) = (png.side("host"), png.side("python"))
    {
        let ratio = h.rps / py.rps.max(1e-9);
        r.target(
            "digits /predict, 1 KB PNG, 16 conns",
            ">= 5x the Python peer's req/s",
            format!("{ratio:.1}x ({:.0} vs {:.0} req/s)", h.rps, py.rps),
            ratio >= 5.0 && h.errors == 0,
        );
    }
    if let Some(jpeg) = row(r, JPEG, 1)
        && let Some(h) = jpeg.side("host")
    {
        r.target(
            "digits /predict, 1 MP JPEG, 1 conn",
            "p50 < 30 ms (decode + resize)",
            format!("{:.1} ms p50", h.p50_ms),
            h.p50_ms < 30.0 && h.errors == 0,
        );
    }
    let step = |r: &Report, start: &str| {
        r.media_steps
            .iter()
            .find(|s| s.what.starts_with(start))
            .cloned()
    };
    if let Some(s) = step(r, "1 MP JPEG: media::image::to_tensor") {
        r.target(
            "1 MP JPEG decoded and resized, native",
            "p50 < 30 ms",
            format!("{:.1} ms p50", s.p50_ms),
            s.p50_ms < 30.0,
        );
    }
    if let Some(s) = step(r, "1 s of 16 kHz WAV") {
        r.target(
            "1 s of 16 kHz audio to log-mel, native",
            "p50 < 5 ms",
            format!("{:.2} ms p50", s.p50_ms),
            s.p50_ms < 5.0,
        );
    }
}
