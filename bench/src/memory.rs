//! Section `memory`: the resident memory of whole `up` stacks, with 1 and 25 molprop, 25
//! mixed models, and 25 molprop beside the embedding model.

use super::compare::{predict_calls, smiles_calls};
use super::load::{self, Call};
use super::peers::{self, Paths};
use super::procs;
use super::report::Report;
use super::section::{Section, prints_nothing};
use crate::args::BenchArgs;
use anyhow::{Context, Result};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub const SECTION: Section = Section {
    name: "memory",
    about: "resident memory of `up` with 1 and 25 molprop, 25 mixed, and 25 molprop beside the embedding model",
    run: |b, r| Box::pin(memory_of_up(b.paths, b.args, b.molecules, r)),
    targets,
    print: prints_nothing,
};
/// What one `up` of the memory section deploys.
struct Mix {
    molprop: usize,
    solubility: usize,
    minilm: bool,
}

impl Mix {
    fn label(&self) -> String {
        let mut parts = vec![format!("{} molprop", self.molprop)];
        if self.solubility > 0 {
            parts.push(format!("{} solubility", self.solubility));
        }
        if self.minilm {
            parts.push("minilm".into());
        }
        parts.join(" + ")
    }

    fn total(&self) -> usize {
        self.molprop + self.solubility + usize::from(self.minilm)
    }
}

/// A `--models` directory for `up` holding `mix` as symbolic links: copies of molprop, of
/// the solubility model directory, and the embedding component.
fn models_dir(paths: &Paths, name: &str, mix: &Mix) -> Result<PathBuf> {
    let Mix {
        molprop,
        solubility,
        minilm,
    } = *mix;
    let dir = procs::fresh_dir(&paths.work, name)?;
    if minilm {
        let wasm = paths.component("minilm")?;
        procs::place_component(&wasm, &dir.join("minilm.wasm"))?;
    }
    let wasm = paths.component("molprop")?;
    let model = std::fs::canonicalize("models/solubility")
        .context("models/solubility (run the bench from the repository root)")?;
    for i in 0..molprop {
        procs::place_component(&wasm, &dir.join(format!("molprop-{i}.wasm")))?;
    }
    for i in 0..solubility {
        std::os::unix::fs::symlink(&model, dir.join(format!("solubility-{i}")))?;
    }
    Ok(dir)
}

/// `runtime-host up` with 1 and 25 molprop, 25 mixed models, and 25 molprop beside the
/// embedding model, each model serving predictions first.
pub async fn memory_of_up(
    paths: &Paths,
    args: &BenchArgs,
    molecules: &[String],
    report: &mut Report,
) -> Result<()> {
    let sample = &molecules[..molecules.len().min(20)];
    let (molprop_calls, smiles_calls) = (predict_calls(sample, "all"), smiles_calls(sample));
    let sentence_calls: Arc<[Call]> = Arc::new([Call::post_json(
        "/predict",
        &json!({"input_type": "text", "data": {"text": "A man is eating food."}}),
    )]);
    let ai_models = std::fs::canonicalize(&args.ai_models_dir).ok();
    let mixes = [
        Mix {
            molprop: 1,
            solubility: 0,
            minilm: false,
        },
        Mix {
            molprop: 25,
            solubility: 0,
            minilm: false,
        },
        Mix {
            molprop: 13,
            solubility: 12,
            minilm: false,
        },
        Mix {
            molprop: 25,
            solubility: 0,
            minilm: true,
        },
    ];
    for mix in mixes {
        let label = mix.label();
        let extra = match (&ai_models, mix.minilm) {
            (_, false) => vec![],
            (Some(dir), true) => peers::ai_model_flags(dir),
            (None, true) => {
                report.notes.push(format!(
                    "memory of `up` with {label} skipped: no AI models in {}",
                    args.ai_models_dir.display()
                ));
                continue;
            }
        };
        eprintln!("memory of `up` with {label} ...");
        let name = format!("up-{}-{}-{}", mix.molprop, mix.solubility, mix.minilm);
        let dir = models_dir(paths, &format!("{name}-models"), &mix)?;
        let (up, models) = peers::up(paths, &name, &dir, &extra).await?;
        anyhow::ensure!(
            models.len() == mix.total(),
            "`up` with {label} has {} model(s) serving (see {})",
            models.len(),
            paths.work.join(format!("{name}.log")).display()
        );
        for (model, addr) in &models {
            let calls = if model.starts_with("molprop") {
                &molprop_calls
            } else if model.starts_with("minilm") {
                &sentence_calls
            } else {
                &smiles_calls
            };
            load::run(*addr, 4, Duration::from_millis(200), calls.clone()).await?;
        }
        if let Some(mib) = up.rss_mib() {
            let what = format!("runtime-host up: registry, chat, {label}");
            report.memory_mib.push((what, mib));
            if let Some(pss) = procs::pss_mib(up.pid()) {
                // File-backed pages are mapped compiled code and snapshot images: shared,
                // and many more of them are mapped right after the files were written (a
                // first `up`, compiling) than from a cache written earlier.
                let kind = |field| procs::status_field_kib(up.pid(), field).unwrap_or(0.0) / 1024.0;
                report.notes.push(format!(
                    "`up` with {label}: VmRSS {mib:.1} MiB (anonymous {:.1}, file-backed \
                     {:.1}), PSS {pss:.1} MiB (shared copy-on-write pages counted once)",
                    kind("RssAnon:"),
                    kind("RssFile:")
                ));
            }
            report.up_rss_mib.push((label, mix.total(), mib));
        }
        up.stop().await;
    }
    Ok(())
}

/// `up`'s resident memory: beside the embedding model, and with 25 models.
fn targets(r: &mut Report) {
    if let Some((label, _, mib)) = r
        .up_rss_mib
        .iter()
        .find(|(label, _, _)| label.contains("minilm"))
        .cloned()
    {
        let mb = mib * 1.048_576;
        r.target(
            &format!("`up` with {label}"),
            "< 300 MB RSS",
            format!("{mb:.0} MB (with registry and chat)"),
            mb < 300.0,
        );
    }
    for (label, _, mib) in r.up_rss_mib.clone().iter().filter(|(_, n, _)| *n == 25) {
        let mb = mib * 1.048_576;
        r.target(
            &format!("25 models in one `up` ({label})"),
            "< 150 MB RSS",
            format!("{mb:.0} MB (with registry and chat)"),
            mb < 150.0,
        );
    }
}
