//! `runtime-host model init`: a model directory's `model.toml` written from its ONNX graph
//! ([`onnx_graph`]) and its training data ([`table`]): what is exact (features in the graph's
//! order, training ranges at full precision, labels, test examples) decided in [`plan`],
//! written with placeholders for what only the author knows ([`write`]). A 30-feature
//! manifest written by hand took long and went wrong (ranges rounded for it put 242 of 442
//! training rows out of domain: issue 57).

mod capped;
mod classes;
pub mod onnx_graph;
pub mod plan;
pub mod table;
pub mod write;

use anyhow::{Context, Result, bail};
use capped::LimitReader;
use host_core::capabilities::files::MAX_TREE_BYTES;
use model_manifest::Manifest;
use std::path::{Path, PathBuf};

/// What `model init` was asked.
pub struct InitRequest<'a> {
    pub dir: &'a Path,
    /// The graph: `DIR/model.onnx` when not given; one outside DIR is copied in.
    pub onnx: Option<&'a Path>,
    pub training: &'a Path,
    pub target: Option<&'a str>,
    pub held_out: Option<&'a Path>,
    /// Overwrite an existing `model.toml` (and `model.onnx`, when copying one in).
    pub force: bool,
}

/// Writes `DIR/model.toml` (and copies the graph in); returns what to say about it.
pub fn init(req: &InitRequest<'_>) -> Result<String> {
    let dir = req.dir;
    let toml_path = dir.join("model.toml");
    if toml_path.exists() && !req.force {
        bail!(
            "{} exists; pass --force to write it again (your edits in it would be lost)",
            toml_path.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let onnx = req
        .onnx
        .map_or_else(|| dir.join("model.onnx"), Path::to_owned);
    // No larger than a model directory may be, all its files together (what a deploy reads).
    let bytes = LimitReader::read_all(&onnx, MAX_TREE_BYTES, GRAPH)?;
    let graph =
        onnx_graph::GraphSummary::read(&bytes).with_context(|| format!("{}", onnx.display()))?;
    let training = table::Table::read(req.training)?;
    let held_out = req.held_out.map(table::Table::read).transpose()?;
    let plan = plan::plan(&graph, &training, req.target, held_out.as_ref())?;
    let onnx_file = graph_in_dir(dir, &onnx, &bytes, req.force)?;
    let name = dir_name(dir)?;
    let training_file = file_name(req.training);
    let origin = write::Origin {
        name: &name,
        onnx_file: &onnx_file,
        training_file: &training_file,
    };
    let text = write::manifest(&plan, &origin);
    // What a deploy reads must read it: a problem here is this command's own.
    if let Err(problems) = Manifest::parse_all(&text) {
        bail!(
            "the manifest written for {} does not parse (a bug of model init):\n{}",
            dir.display(),
            problems.join("\n")
        );
    }
    std::fs::write(&toml_path, text).with_context(|| format!("writing {}", toml_path.display()))?;
    let what = match &plan.output {
        plan::OutputPlan::Regression { property, .. } => format!("a regression of {property}"),
        plan::OutputPlan::Classification { labels, .. } => {
            format!("a classifier of {} labels", labels.len())
        }
    };
    Ok(format!(
        "wrote {}: {what}, {} features, {} test examples\nedit what says \"edit me\" (name, \
         licence, citation, units), then: runtime-host model check {}",
        toml_path.display(),
        plan.features.len(),
        plan.examples.len(),
        dir.display()
    ))
}

/// What the graph is, in the error refusing one too large.
const GRAPH: &str = "an ONNX graph (what a model directory may hold, all its files together)";

/// The graph's file name inside `dir`: the one given if it is there, else a copy of it as
/// `model.onnx` (never over another graph unless `force`).
fn graph_in_dir(dir: &Path, onnx: &Path, bytes: &[u8], force: bool) -> Result<String> {
    let canonical = |p: &Path| p.canonicalize().with_context(|| format!("{}", p.display()));
    let (onnx_c, dir_c) = (canonical(onnx)?, canonical(dir)?);
    if onnx_c.parent() == Some(dir_c.as_path()) {
        return Ok(file_name(&onnx_c));
    }
    let to: PathBuf = dir.join("model.onnx");
    let same = || {
        LimitReader::read_all(&to, MAX_TREE_BYTES, GRAPH)
            .ok()
            .as_deref()
            == Some(bytes)
    };
    if to.exists() && !force && !same() {
        bail!(
            "{} exists and is another graph; pass --force to replace it with {}",
            to.display(),
            onnx.display()
        );
    }
    std::fs::write(&to, bytes).with_context(|| format!("copying the graph to {}", to.display()))?;
    Ok("model.onnx".into())
}

fn dir_name(dir: &Path) -> Result<String> {
    let abs = std::path::absolute(dir)?;
    let name = abs
        .components()
        .next_back()
        .and_then(|c| c.as_os_str().to_str())
        .map(str::to_owned);
    name.filter(|n| !n.trim().is_empty() && n != "/")
        .with_context(|| format!("{} has no name to give the model", dir.display()))
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests;
