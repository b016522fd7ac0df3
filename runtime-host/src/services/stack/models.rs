//! Which models the stack deploys at start, each with where it came from: this
//! installation's own model components (without `--models`), the models directory
//! (`--models DIR`, or the installation's, `installation::models_dir`), and the admin API's
//! deployments kept from an earlier run on the same data directory
//! (`services::deployments::kept`).

use crate::services::deployments::at_start::LeftOutModel;
use crate::services::deployments::kept;
use crate::services::deployments::live::Origin;
use crate::services::model::spec::{ModelSpec, default_specs, found_in, model_spec};
use anyhow::Result;
use host_core::capabilities::llm::AiModels;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What the stack deploys at start.
pub(super) struct ModelsAtStart {
    pub(super) specs: Vec<(ModelSpec, Origin)>,
    /// Kept admin API deployments whose path is no model any more: listed as failed, why.
    pub(super) left_out: Vec<LeftOutModel>,
}

/// The models of the installation (when `installation` is true: no `--models`), of
/// `models_dir` and, with one deployment per model, the admin API's kept in `data_dir`.
pub(super) fn models_at_start(
    installation: bool,
    models_dir: Option<&Path>,
    data_dir: &Path,
    copies: u32,
) -> Result<ModelsAtStart> {
    let mut specs = Vec::new();
    if installation {
        let own = default_specs()?.into_iter();
        specs.extend(own.map(|spec| (spec, Origin::Installation)));
    }
    if let Some(dir) = models_dir {
        specs.extend(found_in(dir)?.into_iter().map(|s| (s, Origin::Directory)));
    }
    let mut left_out = Vec::new();
    let kept = kept::load(data_dir)?;
    if copies > 1 {
        if !kept.is_empty() {
            tracing::warn!(
                count = kept.len(),
                "the admin API's deployments kept in the data directory are not deployed with --copies above 1 (they stay in its list)"
            );
        }
        return Ok(ModelsAtStart { specs, left_out });
    }
    let mut taken: HashSet<String> = specs.iter().map(|(s, _)| s.name.clone()).collect();
    for deployment in kept {
        if let Some(why) = kept::untrusted(&deployment) {
            tracing::error!(model = ?deployment.name, path = ?deployment.path, error = %why, "an admin API deployment kept in the data directory is not deployed: the file was changed by hand; fix or remove the entry");
            continue;
        }
        let (name, path) = (deployment.name, deployment.path);
        if !taken.insert(name.clone()) {
            tracing::warn!(model = %name, path = ?path, "an admin API deployment is not deployed again while a model of that name is deployed from the installation or the models directory (it stays in the data directory's list)");
            continue;
        }
        match model_spec(&path) {
            Ok(mut spec) => {
                spec.name = name;
                specs.push((spec, Origin::Api));
            }
            Err(e) => {
                let why = format!(
                    "{e:#} (deployed through the admin API before `up` started again; \
                     undeploy it to forget it)"
                );
                left_out.push(LeftOutModel::logged(name, path, Origin::Api, &why));
            }
        }
    }
    Ok(ModelsAtStart { specs, left_out })
}

/// The models directory `up` deploys from and may watch: `--models DIR`, else the
/// installation's (`<prefix>/lib/runtime-host/models`, or the repository's `models/` for a
/// cargo build).
pub(super) fn models_dir(given: Option<&Path>) -> Option<PathBuf> {
    match given {
        Some(dir) => Some(dir.to_owned()),
        None => crate::services::installation::models_dir(),
    }
}

/// The models `/health` does not wait for: without `--models` (`given_models` false),
/// minilm while the embedding model's files are not installed, and textgen while the
/// language model's are not (the table says how to add them; nobody asked for them).
pub(super) fn optional_models(given_models: bool, ai: &AiModels) -> Vec<String> {
    let needs = [
        ("minilm", edge_api::embedding::MODEL),
        ("textgen", edge_api::language_model::MODEL),
    ];
    needs
        .into_iter()
        .filter(|(_, model)| !given_models && !ai.installed(model))
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::deployments::kept::KeptDeployment;

    /// A kept name the admin API would refuse never reaches a deployment, not even a failed
    /// one (whose snapshots would be pruned under that name); a sane one is deployed (or,
    /// its files gone, listed as failed).
    #[test]
    fn kept_entries_are_checked_again_at_start() {
        let data = tempfile::tempdir().unwrap();
        let kept = |name: &str, path: &str| KeptDeployment {
            name: name.into(),
            path: path.into(),
            version: String::new(),
        };
        let gone = data.path().join("gone.wasm");
        let gone = gone.to_str().unwrap();
        let list = vec![
            kept("../../x", gone),
            kept("relative", "models/gone.wasm"),
            kept("sane", gone),
        ];
        kept::save(data.path(), list).unwrap();
        let at_start = models_at_start(false, None, data.path(), 1).unwrap();
        let deployed = at_start.specs.iter().map(|(s, _)| s.name.as_str());
        let failed = at_start.left_out.iter().map(|m| m.name.as_str());
        let names: Vec<&str> = deployed.chain(failed).collect();
        assert_eq!(names, ["sane"]);
    }
}
