//! Which models `up` deploys: the components and ONNX model directories of `--models`, or
//! by default molprop, minilm and the repository's `models/` directories.

use crate::serve::default_component;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// One model `up` deploys: a component, the directories it mounts and the AI models it uses.
pub struct ModelSpec {
    pub name: String,
    pub component: PathBuf,
    pub mounts: Vec<String>,
    pub ai_models: Vec<String>,
    /// What the registration's reason names: the component, or the model directory.
    pub source: PathBuf,
}

/// The repository's `models/` directory, beside the `target/` this binary was built in, or in
/// the working directory.
fn default_models_dir() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe()
        && let Some(root) = exe.ancestors().nth(3)
    {
        candidates.push(root.join("models"));
    }
    candidates.push(PathBuf::from("models"));
    candidates.into_iter().find(|p| p.is_dir())
}

/// The models in `dir`: each `.wasm` as a component of its own, each subdirectory with a
/// `model.toml` as the ONNX model component with that directory mounted at /model.
fn models_in(dir: &Path) -> Result<Vec<ModelSpec>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading --models {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let mut specs = Vec::new();
    for path in entries {
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if path.extension().is_some_and(|x| x == "wasm") {
            specs.push(ModelSpec {
                name,
                component: path.clone(),
                mounts: vec![],
                ai_models: vec![],
                source: path,
            });
        } else if path.join("model.toml").is_file() {
            specs.push(ModelSpec {
                name,
                component: default_component("onnx_model")?,
                mounts: vec![format!("{}:/model", path.display())],
                ai_models: vec![],
                source: path,
            });
        }
    }
    Ok(specs)
}

/// Models to deploy: those in `--models`, else molprop, the embedding model (minilm) and the
/// repository's model directories.
pub fn model_specs(dir: Option<&Path>) -> Result<Vec<ModelSpec>> {
    let specs = match dir {
        Some(dir) => models_in(dir)?,
        None => {
            let molprop = default_component("molprop")?;
            let minilm = default_component("minilm")?;
            let mut specs = vec![
                ModelSpec {
                    name: "molprop".into(),
                    component: molprop.clone(),
                    mounts: vec![],
                    ai_models: vec![],
                    source: molprop,
                },
                ModelSpec {
                    name: "minilm".into(),
                    component: minilm.clone(),
                    mounts: vec![],
                    ai_models: vec![edge_api::embedding::MODEL.to_owned()],
                    source: minilm,
                },
            ];
            if let Some(dir) = default_models_dir() {
                specs.extend(models_in(&dir)?);
            }
            specs
        }
    };
    if specs.is_empty() {
        bail!(
            "no models in {}: put model components (.wasm) or ONNX model directories \
             (with a model.toml) there",
            dir.map(|d| d.display().to_string()).unwrap_or_default()
        );
    }
    Ok(specs)
}
