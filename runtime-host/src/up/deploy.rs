//! Deploying `up`'s models: every component compiled first (once, however many deployments
//! use it), then each deployment started by the v1.2 lifecycle, and their outcomes collected
//! for the table `up` prints.

use super::Stack;
use super::models::{ModelSpec, model_specs};
use crate::files::Mounts;
use crate::keyvalue::KeyValue;
use crate::llm::{AiGrant, AiModels};
use crate::model::{DeployOptions, deploy};
use crate::registry::host_prefix;
use crate::serve::{Loaded, with_start_time};
use crate::server::ComponentServer;
use crate::signals::unless_stopped;
use crate::state::{Grants, InstanceState};
use anyhow::{Context, Result};
use keyvalue_stores::sqlite::KvDatabase;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// A deployment started; `outcome` says where it serves once registered, or why it failed.
pub struct Starting {
    pub name: String,
    pub server: Arc<ComponentServer>,
    pub outcome: oneshot::Receiver<Result<SocketAddr, String>>,
}

/// What deploying the models came to.
pub struct Deployments {
    pub starting: Vec<Starting>,
    /// Models left out, and why (an AI model they need is not installed).
    pub skipped: Vec<(String, String)>,
}

/// A model ready to deploy: compiled, with what it is granted.
struct Ready {
    spec: ModelSpec,
    pre: ProxyPre<InstanceState>,
    ai: AiGrant,
    mounts: Mounts,
}

impl Stack<'_> {
    /// Compiles every model's component, then starts each deployment (and `--copies` of it)
    /// against the registry at `registry_url`. A stop signal while compiling ends it with
    /// [`super::Stopped`].
    pub async fn deploy_models(&mut self, registry_url: &str) -> Result<Deployments> {
        // Every component is compiled before any model starts its self-test: a self-test that
        // shared the cores with a compilation took 15-18 s instead of 61 ms (issue 23).
        let mut compiled = HashMap::new();
        let mut ready = Vec::new();
        let mut skipped = Vec::new();
        for spec in model_specs(self.args.models.as_deref())? {
            let mut ai_models = spec.ai_models.clone();
            ai_models.extend(self.args.runtime.ai_models.iter().cloned());
            if let Some(missing) = ai_models.iter().find(|m| !self.ai.installed(m)) {
                // Everything else still starts; the model's line says how to add it.
                skipped.push((spec.name.clone(), missing_ai_model(&self.ai, missing)));
                continue;
            }
            let ai = AiGrant::new(self.ai.clone(), &ai_models)
                .with_context(|| format!("model {}", spec.name))?;
            let pre = match compiled.get(&spec.component) {
                Some(pre) => Clone::clone(pre),
                None => {
                    let pre = self.compile_model(&spec).await?;
                    compiled.insert(spec.component.clone(), pre.clone());
                    pre
                }
            };
            // `--dir` mounts go to every model, beside its own (the services read none).
            let mut mounts = spec.mounts.clone();
            mounts.extend(self.args.runtime.dirs.iter().cloned());
            let mounts = Mounts::parse(&mounts).with_context(|| format!("model {}", spec.name))?;
            ready.push(Ready {
                spec,
                pre,
                ai,
                mounts,
            });
        }
        let mut starting = Vec::new();
        for model in ready {
            for copy in 0..self.args.copies {
                let name = if self.args.copies > 1 {
                    format!("{}-{copy}", model.spec.name)
                } else {
                    model.spec.name.clone()
                };
                starting.push(self.start_deployment(&model, name, registry_url)?);
            }
        }
        Ok(Deployments { starting, skipped })
    }

    async fn compile_model(&self, spec: &ModelSpec) -> Result<ProxyPre<InstanceState>> {
        let (engine, path) = (self.engine.clone(), spec.component.clone());
        let compiling =
            tokio::task::spawn_blocking(move || crate::engine::load_proxy(&engine, &path));
        let compiled = unless_stopped(compiling).await.ok_or(super::Stopped)?;
        compiled?.with_context(|| format!("loading model {}", spec.name))
    }

    fn start_deployment(
        &mut self,
        model: &Ready,
        name: String,
        registry: &str,
    ) -> Result<Starting> {
        let args = self.args;
        let grants = Grants {
            kv: self.model_store(&name)?,
            vars: args.runtime.variables(&with_start_time(&[]))?,
            files: model.mounts.clone(),
            ai: model.ai.clone(),
        };
        let loaded = Loaded::from_pre(&name, model.pre.clone(), grants, self.limits.clone(), None);
        let server = loaded.server.clone();
        let opts = DeployOptions {
            app_name: format!("runtime-host/{name}"),
            registry: registry.to_owned(),
            preferred_port: None,
            host: args.host,
            heartbeat_interval: args.heartbeat_interval,
            registry_wait: Duration::from_secs(10),
            self_test_deadline: args.self_test_deadline,
        };
        let source = model.spec.source.clone();
        let stop = self.started.model_stopper();
        let (task, outcome) = spawn_deployment(name.clone(), loaded, source, opts, stop);
        self.started.model(task);
        Ok(Starting {
            name,
            server,
            outcome,
        })
    }

    /// A model's stores. Each deployment keeps its metrics apart from the others': by default
    /// in its own SQLite file under `models/<name>/`; with a runtime config, under the key
    /// prefix `models/<name>/` of the configured stores (and, on a shared store, this
    /// machine's `hosts/<scope>/`, as two machines may both deploy `molprop`).
    fn model_store(&self, name: &str) -> Result<KeyValue> {
        let args = self.args;
        if args.runtime.runtime_config_file.is_none() {
            let dir = args.runtime.data_dir.join("models").join(name);
            return Ok(KeyValue::sqlite(Arc::new(KvDatabase::open_in(&dir)?)));
        }
        let host = if self.kv.is_shared() {
            host_prefix(args.registry.registry_scope.as_deref())?
        } else {
            String::new()
        };
        Ok(self.kv.scoped(&format!("{host}models/{name}/")))
    }
}

/// Why a model that needs `name` was left out, and how to add it.
fn missing_ai_model(ai: &AiModels, name: &str) -> String {
    let why = crate::llm::not_installed(name, &ai.model_dir(name));
    tracing::warn!(model = %name, "{why}");
    format!("AI model `{name}` not installed (run `cargo xtask install-models`)")
}

/// Starts one model's deployment; the receiver gets its address once it serves, or why it
/// failed (the first line of the error, for `up`'s table; the log has it whole).
fn spawn_deployment(
    name: String,
    loaded: Loaded,
    source: PathBuf,
    opts: DeployOptions,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> (
    tokio::task::JoinHandle<Result<()>>,
    oneshot::Receiver<Result<SocketAddr, String>>,
) {
    let (tx, rx) = oneshot::channel();
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let send = move |outcome| {
        if let Some(tx) = tx.lock().expect("not poisoned").take() {
            let _ = tx.send(outcome);
        }
    };
    let task = tokio::spawn(async move {
        let outcome = deploy(loaded, &source, opts, stop, |addr| send.clone()(Ok(addr))).await;
        if let Err(e) = &outcome {
            tracing::error!(model = %name, error = %format!("{e:#}"), "model deployment failed");
            let first = format!("{e:#}")
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
            send(Err(first));
        }
        outcome
    });
    (task, rx)
}
