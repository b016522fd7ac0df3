//! What a model is made of, from a path: a component (`.wasm`), or an ONNX model directory
//! (with a `model.toml`) served by the ONNX model component. `up` deploys the models of
//! `--models` (or, by default, molprop, minilm and the repository's `models/` directories);
//! `predict --model` and the admin API take one.

use crate::services::launch::default_component;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// One model: a component, the directories it mounts and the AI models it uses.
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
pub fn models_in(dir: &Path) -> Result<Vec<ModelSpec>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading --models {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    entries
        .iter()
        .filter_map(|p| spec_of(p).transpose())
        .collect()
}

/// The model at `path`: a component (`.wasm`), or a directory with a `model.toml` served by
/// the ONNX model component; `None` for anything else.
fn spec_of(path: &Path) -> Result<Option<ModelSpec>> {
    let name = path
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    Ok(if path.extension().is_some_and(|x| x == "wasm") {
        Some(ModelSpec {
            ai_models: ai_models_of(&name),
            name,
            component: path.to_owned(),
            mounts: vec![],
            source: path.to_owned(),
        })
    } else if path.join("model.toml").is_file() {
        Some(ModelSpec {
            name,
            component: default_component("onnx_model")?,
            mounts: vec![format!("{}:/model", path.display())],
            ai_models: vec![],
            source: path.to_owned(),
        })
    } else {
        None
    })
}

/// The embedding model for minilm (by its component's name), none for the others.
fn ai_models_of(name: &str) -> Vec<String> {
    if name == "minilm" {
        vec![edge_api::embedding::MODEL.to_owned()]
    } else {
        vec![]
    }
}

/// One model named on the command line: a component, an ONNX model directory, or the name of
/// a component of this build (`molprop`, `minilm`).
pub fn model_spec(given: &Path) -> Result<ModelSpec> {
    if let Some(spec) = spec_of(given)? {
        return Ok(spec);
    }
    if !given.exists()
        && let Some(name) = given.to_str()
        && let Ok(component) = default_component(name)
    {
        return Ok(spec_of(&component)?.expect("a .wasm is a model"));
    }
    bail!(
        "{} is not a model: give a component (.wasm), a model directory (with a model.toml) \
         or the name of a built model component (molprop, minilm)",
        given.display()
    )
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
