//! The media crate's own cost, natively, without HTTP, base64 or WebAssembly: what
//! `image::to_tensor` and `audio::Featurizer::to_tensor` take on the section's files, and, to show
//! where a picture's time goes, the `image` crate's decode alone and its resize alone. Run before any server starts,
//! so the figures are the code's, not the machine's other load.

use super::inputs::Inputs;
use crate::report::StepRow;
use anyhow::{Context, Result};
use image::imageops::FilterType;
use model_manifest::{AudioSpec, ImageSpec, Input};
use std::path::Path;
use std::time::Instant;

/// Runs `step` `runs` times (after two unmeasured runs) and keeps its timing.
fn time(what: &str, runs: usize, mut step: impl FnMut() -> Result<()>) -> Result<StepRow> {
    for _ in 0..2 {
        step()?;
    }
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            step().map(|()| started.elapsed().as_secs_f64() * 1000.0)
        })
        .collect::<Result<_>>()?;
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    Ok(StepRow {
        what: what.into(),
        runs,
        p50_ms: at(0.5),
        p90_ms: at(0.9),
        min_ms: ms[0],
    })
}

/// `[input]` of `dir/model.toml`.
pub fn input_of(dir: &Path) -> Result<Input> {
    let file = dir.join("model.toml");
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let table: toml::Table = toml::from_str(&text).with_context(|| file.display().to_string())?;
    let input = table
        .get("input")
        .with_context(|| format!("{}: no [input]", file.display()))?
        .clone();
    Ok(input.try_into()?)
}

pub fn image_spec(dir: &Path) -> Result<ImageSpec> {
    match input_of(dir)? {
        Input::Image { image } => Ok(image),
        _ => anyhow::bail!("{} takes no image", dir.display()),
    }
}

pub fn audio_spec(dir: &Path) -> Result<AudioSpec> {
    match input_of(dir)? {
        Input::Audio { audio } => Ok(audio),
        _ => anyhow::bail!("{} takes no audio", dir.display()),
    }
}

/// The picture steps, on models/digits' `[input.image]`.
pub fn pictures(inputs: &Inputs, spec: &ImageSpec, quick: bool) -> Result<Vec<StepRow>> {
    let runs = if quick { 5 } else { 50 };
    let to_tensor = |bytes: &[u8]| {
        let bytes = bytes.to_vec();
        move || {
            ::media::image::to_tensor(&bytes, spec).map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(())
        }
    };
    // What `to_tensor` resizes: the decoded picture once grey (the filter `fit` uses).
    let grey = image::load_from_memory(&inputs.jpeg)?.into_luma8();
    Ok(vec![
        time("1 MP JPEG: decode only (image crate)", runs, || {
            image::load_from_memory(&inputs.jpeg)?;
            Ok(())
        })?,
        time(
            "1 MP JPEG: the grey picture resized to 8x8 only (Triangle)",
            runs,
            || {
                let (w, h) = (spec.width, spec.height);
                drop(image::imageops::resize(&grey, w, h, FilterType::Triangle));
                Ok(())
            },
        )?,
        time(
            "1 MP JPEG: media::image::to_tensor (to 8x8)",
            runs,
            to_tensor(&inputs.jpeg),
        )?,
        time(
            "1 KB PNG: media::image::to_tensor (to 8x8)",
            runs * 10,
            to_tensor(&inputs.png),
        )?,
    ])
}

/// The sound step, on models/spoken-digits' `[input.audio]`: 1 s of 16 kHz to log-mel.
pub fn sounds(inputs: &Inputs, spec: &AudioSpec, quick: bool) -> Result<Vec<StepRow>> {
    let runs = if quick { 20 } else { 500 };
    let featurizer = ::media::audio::Featurizer::new(spec);
    // The featurizer's own set-up (window, filters, FFT plan) is made once per model.
    let setup = time("log-mel set-up (once per model)", runs / 10, || {
        drop(::media::audio::Featurizer::new(spec));
        Ok(())
    })?;
    let featurize = time(
        "1 s of 16 kHz WAV: Featurizer::to_tensor (log-mel)",
        runs,
        || {
            featurizer
                .to_tensor(inputs.wav.clone())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(())
        },
    )?;
    Ok(vec![featurize, setup])
}
