//! Deploying `up`'s models: every component compiled first (once, however many deployments
//! use it), then each deployment started by the v1.2 lifecycle, and their outcomes collected
//! for the table `up` prints.

use super::Stack;
use super::models::{ModelSpec, model_specs};
use crate::cli::RuntimeArgs;
use crate::files::Mounts;
use crate::keyvalue::KeyValue;
use crate::limits::Limits;
use crate::llm::{AiGrant, AiModels};
use crate::model::{DeployOptions, deploy};
use crate::preinit::Source;
use crate::registry::host_prefix;
use crate::serve::{Loaded, with_start_time};
use crate::slot::ServerSlot;
use crate::state::{Grants, InstanceState};
use anyhow::{Context, Result};
use keyvalue_stores::sqlite::KvDatabase;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// A deployment started; `outcome` says where it serves once registered, or why it failed.
pub struct Starting {
    pub name: String,
    pub slot: Arc<ServerSlot>,
    pub outcome: oneshot::Receiver<Result<SocketAddr, String>>,
    /// What a watched `--models` directory needs to manage it later.
    pub adopt: Option<super::live::Adopted>,
}

/// What deploying the models came to.
pub struct Deployments {
    pub starting: Vec<Starting>,
    /// Models left out, and why (an AI model they need is not installed).
    pub skipped: Vec<(String, String)>,
}

/// A model ready to deploy: compiled, with what it is granted.
pub struct Ready {
    pub spec: ModelSpec,
    pre: ProxyPre<InstanceState>,
    ai: AiGrant,
    mounts: Mounts,
}

/// What starting a model deployment needs, owned, so that deployments can start at any
/// time: at start-up, and later when `--models` changes (see [`super::live`]).
#[derive(Clone)]
pub struct Deployer {
    pub engine: wasmtime::Engine,
    pub kv: KeyValue,
    pub ai: AiModels,
    pub limits: Limits,
    pub runtime: RuntimeArgs,
    pub host: IpAddr,
    pub heartbeat_interval: Duration,
    pub self_test_deadline: Duration,
    pub registry_scope: Option<String>,
    pub registry_url: String,
}

impl Stack<'_> {
    /// What deploying a model needs, against the registry at `registry_url`.
    pub fn deployer(&self, registry_url: &str) -> Deployer {
        let args = self.args;
        Deployer {
            engine: self.engine.clone(),
            kv: self.kv.clone(),
            ai: self.ai.clone(),
            limits: self.limits.clone(),
            runtime: args.runtime.clone(),
            host: args.host,
            heartbeat_interval: args.heartbeat_interval,
            self_test_deadline: args.self_test_deadline,
            registry_scope: args.registry.registry_scope.clone(),
            registry_url: registry_url.to_owned(),
        }
    }

    /// Compiles every model's component, then starts each deployment (and `--copies` of it).
    /// A stop signal while compiling ends it with [`super::Stopped`].
    pub async fn deploy_models(&mut self, deployer: &Deployer) -> Result<Deployments> {
        // Every component is compiled before any model starts its self-test: a self-test that
        // shared the cores with a compilation took 15-18 s instead of 61 ms (issue 23).
        let mut compiled = HashMap::new();
        let mut ready = Vec::new();
        let mut skipped = Vec::new();
        let watched = self.watching();
        for spec in model_specs(self.args.models.as_deref())? {
            let version = super::versions::version_of(&spec.source)?;
            let spec = if watched {
                super::versions::snapshot(spec, &deployer.runtime.data_dir, &version)?
            } else {
                spec
            };
            match deployer.prepare(spec, &mut compiled).await? {
                Ok(model) => ready.push((model, version)),
                Err((name, why)) => skipped.push((name, why)),
            }
        }
        let mut starting = Vec::new();
        for (model, version) in ready {
            for copy in 0..self.args.copies {
                let name = if self.args.copies > 1 {
                    format!("{}-{copy}", model.spec.name)
                } else {
                    model.spec.name.clone()
                };
                // Each its own stop beside `up`'s, so a watched directory can remove it.
                let (own, stopped) = oneshot::channel();
                let stop = super::live::either(self.started.model_stop_signal(), stopped);
                let kv = deployer.model_store(&name)?;
                let (mut started, task) =
                    deployer.start(&model, name, kv.clone(), &version, stop)?;
                self.started.model(task);
                started.adopt = Some(super::live::Adopted {
                    name: started.name.clone(),
                    slot: started.slot.clone(),
                    kv,
                    version: version.clone(),
                    source: model.spec.source.clone(),
                    stop: own,
                });
                starting.push(started);
            }
        }
        Ok(Deployments { starting, skipped })
    }
}

impl Deployer {
    /// A model ready to start: its component compiled (once per component: `compiled`
    /// remembers), its mounts and AI models granted; `Ok(Err((name, why)))` when an AI model
    /// it needs is not installed (everything else still starts).
    pub async fn prepare(
        &self,
        spec: ModelSpec,
        compiled: &mut HashMap<String, ProxyPre<InstanceState>>,
    ) -> Result<Result<Ready, (String, String)>> {
        let mut ai_models = spec.ai_models.clone();
        ai_models.extend(self.runtime.ai_models.iter().cloned());
        if let Some(missing) = ai_models.iter().find(|m| !self.ai.installed(m)) {
            return Ok(Err((
                spec.name.clone(),
                missing_ai_model(&self.ai, missing),
            )));
        }
        let ai = AiGrant::new(self.ai.clone(), &ai_models)
            .with_context(|| format!("model {}", spec.name))?;
        // `--dir` mounts go to every model, beside its own (the services read none).
        let mut mount_args = spec.mounts.clone();
        mount_args.extend(self.runtime.dirs.iter().cloned());
        let mounts = Mounts::parse(&mount_args).with_context(|| format!("model {}", spec.name))?;
        let source = Source::read(&spec.component, &mounts)?;
        let identity = source.identity();
        let pre = match compiled.get(&identity) {
            Some(pre) => Clone::clone(pre),
            None => {
                let pre = self.compile(&spec, source, &mounts, &ai).await?;
                compiled.insert(identity, pre.clone());
                pre
            }
        };
        Ok(Ok(Ready {
            spec,
            pre,
            ai,
            mounts,
        }))
    }

    /// Compiles `source` (`spec`'s component, read with `mounts`), pre-initialized with
    /// `mounts` and `ai` where it can be (see [`crate::preinit`]), what the cache lacks made
    /// in a child process ([`crate::prepare_child`]).
    async fn compile(
        &self,
        spec: &ModelSpec,
        source: Source,
        mounts: &Mounts,
        ai: &AiGrant,
    ) -> Result<ProxyPre<InstanceState>> {
        let grants = Grants {
            kv: KeyValue::in_memory(),
            vars: self.runtime.variables(&[])?,
            files: mounts.clone(),
            ai: ai.clone(),
        };
        let (engine, limits) = (&self.engine, &self.limits);
        let prepared = super::prepare(engine, limits, &self.runtime, source, &grants).await?;
        prepared.with_context(|| format!("loading model {}", spec.name))
    }

    /// `model` loaded as deployment `name` of `version`, with stores `kv` and a fresh start
    /// time, not started. The version reaches the component as variable `model_version` and
    /// every answer as header `x-model-version`.
    pub fn load(&self, model: &Ready, name: &str, kv: KeyValue, version: &str) -> Result<Loaded> {
        let vars = with_start_time(&[("model_version", version.to_owned())]);
        let grants = Grants {
            kv,
            vars: self.runtime.variables(&vars)?,
            files: model.mounts.clone(),
            ai: model.ai.clone(),
        };
        let loaded = Loaded::from_pre(name, model.pre.clone(), grants, self.limits.clone(), None);
        loaded.server.set_version(version);
        Ok(loaded)
    }

    /// Starts deployment `name` of `model` by the v1.2 lifecycle until `stop`; the task and
    /// what `up`'s table waits on.
    pub fn start(
        &self,
        model: &Ready,
        name: String,
        kv: KeyValue,
        version: &str,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(Starting, tokio::task::JoinHandle<Result<()>>)> {
        let loaded = self.load(model, &name, kv, version)?;
        let slot = loaded.slot.clone();
        let opts = self.options(&name, version);
        let source = model.spec.source.clone();
        let (task, outcome) = spawn_deployment(name.clone(), loaded, source, opts, stop);
        Ok((
            Starting {
                name,
                slot,
                outcome,
                adopt: None,
            },
            task,
        ))
    }

    /// How deployment `name` of `version` registers.
    pub fn options(&self, name: &str, version: &str) -> DeployOptions {
        DeployOptions {
            app_name: format!("runtime-host/{name}"),
            registry: self.registry_url.clone(),
            preferred_port: None,
            host: self.host,
            heartbeat_interval: self.heartbeat_interval,
            registry_wait: Duration::from_secs(10),
            self_test_deadline: self.self_test_deadline,
            model_version: Some(version.to_owned()),
        }
    }

    /// A model's stores. Each deployment keeps its metrics apart from the others': by default
    /// in its own SQLite file under `models/<name>/`; with a runtime config, under the key
    /// prefix `models/<name>/` of the configured stores (and, on a shared store, this
    /// machine's `hosts/<scope>/`, as two machines may both deploy `molprop`).
    pub fn model_store(&self, name: &str) -> Result<KeyValue> {
        if self.runtime.runtime_config_file.is_none() {
            let dir = self.runtime.data_dir.join("models").join(name);
            return Ok(KeyValue::sqlite(Arc::new(KvDatabase::open_in(&dir)?)));
        }
        let host = if self.kv.is_shared() {
            host_prefix(self.registry_scope.as_deref())?
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
