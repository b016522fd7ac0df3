//! What a model is made of, from a path: a component (`.wasm`), or an ONNX model directory
//! (with a `model.toml`) served by the ONNX model component. `up` deploys the models of
//! `--models` (or, by default, molprop, minilm, textgen and the installation's model
//! directories); `predict --model` and the admin API take one.

use crate::services::launch::default_component;
use crate::services::model::manifest::{check_model_dir, listed, outbound_hosts};
use anyhow::{Context, Result, bail};
use host_core::runtime::flags::Access;
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

impl ModelSpec {
    /// What the model is granted beside its store: its own mounts and AI models, beside the
    /// command line's `--dir` mounts and `--ai-model`s, and the hosts its manifest lets it
    /// reach; the same for every command that runs a model (`up`, `predict`, `model check`).
    pub fn access(&self) -> Access {
        let whom = format!("model {}", self.name);
        Access::own(whom, self.mounts.clone(), self.ai_models.clone())
            .with_outbound(outbound_hosts(&self.source))
    }

    /// The largest request body the model reads: a picture or sound model's file in base64
    /// and room for the JSON (`[input.image] max_bytes`), so the host's cap does not refuse
    /// what the component takes; 0 (the launcher's own cap) for any other model.
    pub fn max_body(&self) -> usize {
        if !self.source.join("model.toml").is_file() {
            return 0;
        }
        check_model_dir(&self.source)
            .ok()
            .and_then(|m| m.input.max_body())
            .unwrap_or(0)
    }

    /// Checks an ONNX model directory's manifest and the files it names before anything is
    /// copied or compiled (see [`super::manifest`]); `Err` lists every problem, a line each.
    /// A component has nothing to check here.
    pub fn check(&self) -> Result<()> {
        if !self.source.join("model.toml").is_file() {
            return Ok(());
        }
        match check_model_dir(&self.source) {
            Ok(_) => Ok(()),
            Err(problems) => bail!(listed(&problems)),
        }
    }
}

/// What a models directory holds.
#[derive(Default)]
pub struct Found {
    pub specs: Vec<ModelSpec>,
    /// The models left out because of their names, each with why (the name escaped, as a
    /// file name may hold a newline or worse).
    pub refused: Vec<String>,
}

/// The models in `dir`: each `.wasm` as a component of its own, each subdirectory with a
/// `model.toml` as the ONNX model component with that directory mounted at /model. A hidden
/// entry (a name starting with `.`, where a model is staged before it is moved in) is
/// passed over; a model whose name is not a [`valid_name`] is refused.
pub fn models_in(dir: &Path) -> Result<Found> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading --models {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
        })
        .collect();
    entries.sort();
    let mut found = Found::default();
    for path in &entries {
        if let Some(why) = not_a_plain_component(path) {
            found.refused.push(why);
            continue;
        }
        let Some(spec) = spec_of(path)? else {
            continue;
        };
        let raw = path.file_stem().unwrap_or_default();
        match raw.to_str().map(valid_name) {
            Some(Ok(())) => found.specs.push(spec),
            Some(Err(why)) => found.refused.push(why),
            None => found
                .refused
                .push(format!("{raw:?} is not a deployment name: not UTF-8")),
        }
    }
    Ok(found)
}

/// Why the `.wasm` at `path` in a models directory is refused, if it is: a component there is
/// read only from a regular file (a link is not followed, whatever it points to), as every
/// file of a model directory is. The name escaped; nothing of the file's content shown.
fn not_a_plain_component(path: &Path) -> Option<String> {
    if path.extension().is_none_or(|x| x != "wasm") {
        return None;
    }
    let name = path.file_name().unwrap_or_default();
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => None,
        Ok(meta) if meta.is_symlink() => Some(format!(
            "{name:?} is a symbolic link: a model's component must be a regular file in the \
             models directory (copy it in)"
        )),
        Ok(_) => Some(format!("{name:?} is not a regular file")),
        Err(e) => Some(format!("{name:?} cannot be read: {e}")),
    }
}

/// The one rule for a deployment's name, wherever it comes from (a file in `--models`, the
/// admin API): it becomes a path segment, a metric label and a log field. 1-64 ASCII
/// letters, digits, `-`, `_` or `.`, not starting with `.`.
pub fn valid_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a deployment name: 1-64 letters, digits, `-`, `_` or `.`, not \
             starting with `.`"
        ))
    }
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

/// The models in `dir` (`up`'s models directory), the refused ones logged.
pub fn found_in(dir: &Path) -> Result<Vec<ModelSpec>> {
    let found = models_in(dir)?;
    for why in &found.refused {
        tracing::warn!(dir = ?dir, "model left out: {why}");
    }
    Ok(found.specs)
}

/// The AI model a component of this build uses (by its name): the embedding model for
/// minilm, the language model for textgen; none for the others.
fn ai_models_of(name: &str) -> Vec<String> {
    match name {
        "minilm" => vec![edge_api::embedding::MODEL.to_owned()],
        "textgen" => vec![edge_api::language_model::MODEL.to_owned()],
        _ => vec![],
    }
}

/// One model named on the command line: a component, an ONNX model directory, or the name of
/// a component of this build (`molprop`, `minilm`, `textgen`).
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
         or the name of a built model component (molprop, minilm, textgen)",
        given.display()
    )
}

/// The model components `up` deploys without `--models`: molprop, the embedding model and
/// the text generation model.
pub const DEFAULT_COMPONENTS: [&str; 3] = ["molprop", "minilm", "textgen"];

/// This installation's own model components, [`DEFAULT_COMPONENTS`]: what `up` deploys
/// without `--models`, beside the models of the installation's models directory (never
/// `./models`: see `services::installation`).
pub fn default_specs() -> Result<Vec<ModelSpec>> {
    let mut specs = Vec::new();
    for name in DEFAULT_COMPONENTS {
        let component = default_component(name)?;
        specs.push(ModelSpec {
            name: name.into(),
            component: component.clone(),
            mounts: vec![],
            ai_models: ai_models_of(name),
            source: component,
        });
    }
    Ok(specs)
}
