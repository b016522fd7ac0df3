//! The models a stack deploys when it starts: every component compiled first (once, however
//! many deployments use it), then each deployment started ([`super::deployer`]), and what
//! became of each collected for the start-up table and the live set ([`super::live`]).

use crate::services::deployments::deployer::{
    CodeCache, CompileError, Deployer, StartingDeployment,
};
use crate::services::deployments::live::Origin;
use crate::services::deployments::tasks::DeploymentTasks;
use crate::services::model::spec::ModelSpec;
use crate::services::model::versions;
use anyhow::Result;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::http::slot::ServerSlot;
use host_core::support::stop::Stopped;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::oneshot;

/// A deployment started at start-up, with what the live set needs to manage it later (with
/// one deployment per model).
pub struct StartedAtStart {
    pub starting: StartingDeployment,
    pub adoption: AdoptedModel,
}

/// A deployment the stack started at start-up, for [`super::live::LiveSet::adopt`].
pub struct AdoptedModel {
    pub name: String,
    pub slot: Arc<ServerSlot>,
    pub kv: KeyValue,
    pub version: String,
    pub source: PathBuf,
    pub origin: Origin,
    pub stop: oneshot::Sender<()>,
}

/// What deploying the models came to.
pub struct Deployments {
    pub starting: Vec<StartedAtStart>,
    /// Models left out before they started, and why (their files could not be read, an AI
    /// model they need is not installed).
    pub left_out: Vec<LeftOutModel>,
}

/// A model the stack was asked to run that did not start: listed with why, and retried by a
/// reload or when its files change.
pub struct LeftOutModel {
    pub name: String,
    pub source: PathBuf,
    pub origin: Origin,
    pub why: String,
}

impl LeftOutModel {
    /// `name` left out because of `error`, logged.
    pub fn logged(
        name: String,
        source: PathBuf,
        origin: Origin,
        error: &dyn std::fmt::Display,
    ) -> Self {
        let why = error.to_string();
        tracing::error!(model = %name, error = %why, "model left out");
        Self {
            name,
            source,
            origin,
            why,
        }
    }
}

/// Compiles every model of `specs` (each with where it came from), then starts each
/// deployment (and `copies` of it), each stopped with the stack's models or on its own. A
/// stop signal while compiling ends it with `Stopped`. `watched`: the models' directory is
/// watched, so each version of its models is snapshotted first (see `versions::snapshot`),
/// as is every admin API deployment's, as when the API made it.
pub async fn deploy_at_start(
    deployer: &Deployer,
    specs: Vec<(ModelSpec, Origin)>,
    copies: u32,
    watched: bool,
    tasks: &DeploymentTasks,
) -> Result<Deployments> {
    // Every component is compiled before any model starts its self-test: a self-test that
    // shared the cores with a compilation took 15-18 s instead of 61 ms (issue 23).
    let mut compiled = CodeCache::new();
    let mut ready = Vec::new();
    let mut left_out = Vec::new();
    let data_dir = &deployer.launcher.runtime().data_dir;
    let names: Vec<String> = specs.iter().map(|(s, _)| s.name.clone()).collect();
    for (spec, origin) in specs {
        let (name, source) = (spec.name.clone(), spec.source.clone());
        // A model whose files cannot be deployed (a link leading out, too large, a manifest
        // with problems) is left out with why; the others start.
        if let Err(e) = spec.check() {
            let why = format!("{e:#}");
            left_out.push(LeftOutModel::logged(name, source, origin, &why));
            continue;
        }
        let snapshotted = match origin {
            Origin::Directory => watched,
            Origin::Api => true,
            Origin::Installation => false,
        };
        let versioned = if snapshotted {
            versions::snapshot_blocking(spec, data_dir).await
        } else {
            let version = versions::version_blocking(&spec.source).await;
            version.map(|version| (spec, version))
        };
        let (spec, version) = match versioned {
            Ok(v) => v,
            Err(e) => {
                let why = format!("{e:#}");
                left_out.push(LeftOutModel::logged(name, source, origin, &why));
                continue;
            }
        };
        if snapshotted {
            // Nothing serves yet: earlier runs' versions of it go, and copies left half-done.
            let (dir, kept, name) = (data_dir.clone(), version.clone(), name.clone());
            let pruning = move || versions::prune(&dir, Some(&name), &[&kept], true);
            tokio::task::spawn_blocking(pruning).await?;
        }
        // A component that does not compile is left out too; a stop signal ends it all.
        match deployer.compile(spec, &mut compiled).await {
            Ok(model) => ready.push((model, version, origin)),
            Err(CompileError::Stopped) => return Err(Stopped.into()),
            // Said once already, as a warning naming where the files go.
            Err(e @ CompileError::AiModelMissing { .. }) => {
                let why = e.to_string();
                left_out.push(LeftOutModel {
                    name,
                    source,
                    origin,
                    why,
                });
            }
            Err(e @ CompileError::Component(_)) => {
                left_out.push(LeftOutModel::logged(name, source, origin, &e));
            }
        }
    }
    // The snapshots of models no longer deployed go too.
    let dir = data_dir.clone();
    let pruning = move || {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        versions::prune(&dir, None, &names, true);
    };
    tokio::task::spawn_blocking(pruning).await?;
    let mut starting = Vec::new();
    for (model, version, origin) in ready {
        for copy in 0..copies {
            let name = if copies > 1 {
                format!("{}-{copy}", model.spec.name)
            } else {
                model.spec.name.clone()
            };
            // Each its own stop beside the stack's, so a watched directory can remove it.
            let (own, stop) = tasks.own_stop();
            let kv = deployer.model_store(&name)?;
            let (begun, task) = deployer.start(&model, name, kv.clone(), &version, stop)?;
            tasks.push(task);
            let adoption = AdoptedModel {
                name: begun.name.clone(),
                slot: begun.slot.clone(),
                kv,
                version: version.clone(),
                source: model.spec.source.clone(),
                origin,
                stop: own,
            };
            starting.push(StartedAtStart {
                starting: begun,
                adoption,
            });
        }
    }
    Ok(Deployments { starting, left_out })
}
