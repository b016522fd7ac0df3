//! Deploying `up`'s models: every component compiled first (once, however many deployments
//! use it), then each deployment started by the v1.2 lifecycle
//! (`services::model::lifecycle`), and their outcomes collected for the table `up` prints.
//! A [`Deployer`] holds what starting one needs, so deployments can also start later (a
//! watched `--models`, the admin API: [`super::live`]).

use crate::commands::up::started::{Started, either};
use crate::services::launch::{Launcher, Loaded};
use crate::services::model::hooks;
use crate::services::model::lifecycle::deploy;
use crate::services::model::registration::DeployOptions;
use crate::services::model::spec::ModelSpec;
use crate::services::model::versions;
use crate::services::registry::host_prefix;
use crate::services::tiers::Code;
use anyhow::{Context, Result};
use host_core::capabilities::keyvalue::KeyValue;
use host_core::capabilities::llm;
use host_core::http::slot::ServerSlot;
use host_core::runtime::preinit::Source;
use host_core::support::heap;
use host_core::support::stop::Stopped;
use keyvalue_stores::sqlite::KvDatabase;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// A deployment started; `outcome` says where it serves once registered, or why it failed.
pub struct Starting {
    pub name: String,
    pub slot: Arc<ServerSlot>,
    pub outcome: oneshot::Receiver<Result<SocketAddr, String>>,
    /// What a watched `--models` directory needs to manage it later.
    pub adopt: Option<Adopted>,
}

/// A deployment `up` started at start-up, for [`super::live::Live::adopt`].
pub struct Adopted {
    pub name: String,
    pub slot: Arc<ServerSlot>,
    pub kv: KeyValue,
    pub version: String,
    pub source: PathBuf,
    pub stop: oneshot::Sender<()>,
}

/// What deploying the models came to.
pub struct Deployments {
    pub starting: Vec<Starting>,
    /// Models left out before they started, and why (their files could not be read, an AI
    /// model they need is not installed).
    pub skipped: Vec<Skipped>,
}

/// A model `up` was asked to run that did not start: listed with why, and retried by a
/// reload or when its files change.
pub struct Skipped {
    pub name: String,
    pub source: PathBuf,
    pub why: String,
}

impl Skipped {
    /// `name` left out because of `error`, logged.
    fn left_out(name: String, source: PathBuf, error: &anyhow::Error) -> Self {
        let why = format!("{error:#}");
        tracing::error!(model = %name, error = %why, "model left out");
        Self { name, source, why }
    }
}

/// A model ready to deploy: compiled (perhaps by the baseline compiler, its optimized
/// code to follow: see `services::tiers`).
pub struct Ready {
    pub spec: ModelSpec,
    code: Code,
}

/// What starting a model deployment needs, owned, so that deployments can start at any
/// time: at start-up, and later when `--models` changes.
#[derive(Clone)]
pub struct Deployer {
    pub launcher: Launcher,
    /// The stores the runtime config names (a model's own are under them, or beside them).
    pub kv: KeyValue,
    pub host: IpAddr,
    pub heartbeat_interval: Duration,
    pub self_test_deadline: Duration,
    pub registry_scope: Option<String>,
    pub registry_url: String,
}

/// Compiles every model of `specs`, then starts each deployment (and `copies` of it), each
/// stopped with `started`'s models or on its own. A stop signal while compiling ends it with
/// `Stopped`. `watched`: the models' directory is watched, so each version's files are
/// snapshotted first (see `versions::snapshot`).
pub async fn at_start(
    deployer: &Deployer,
    specs: Vec<ModelSpec>,
    copies: u32,
    watched: bool,
    started: &mut Started,
) -> Result<Deployments> {
    // Every component is compiled before any model starts its self-test: a self-test that
    // shared the cores with a compilation took 15-18 s instead of 61 ms (issue 23).
    let mut compiled = HashMap::new();
    let mut ready = Vec::new();
    let mut skipped = Vec::new();
    let data_dir = &deployer.launcher.runtime().data_dir;
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    for spec in specs {
        let (name, source) = (spec.name.clone(), spec.source.clone());
        // A model whose files cannot be deployed (a link leading out, too large, a manifest
        // with problems) is left out with why; the others start.
        if let Err(e) = spec.check() {
            skipped.push(Skipped::left_out(name, source, &e));
            continue;
        }
        let versioned = if watched {
            versions::snapshot_blocking(spec, data_dir).await
        } else {
            let version = versions::version_blocking(&spec.source).await;
            version.map(|version| (spec, version))
        };
        let (spec, version) = match versioned {
            Ok(v) => v,
            Err(e) => {
                skipped.push(Skipped::left_out(name, source, &e));
                continue;
            }
        };
        if watched {
            // Nothing serves yet: earlier runs' versions of it go, and copies left half-done.
            let (dir, kept, name) = (data_dir.clone(), version.clone(), name.clone());
            let pruning = move || versions::prune(&dir, Some(&name), &[&kept], true);
            tokio::task::spawn_blocking(pruning).await?;
        }
        // A component that does not compile is left out too; a stop signal ends it all.
        match deployer.prepare(spec, &mut compiled).await {
            Ok(Ok(model)) => ready.push((model, version)),
            Ok(Err((name, why))) => skipped.push(Skipped { name, source, why }),
            Err(e) if e.is::<Stopped>() => return Err(e),
            Err(e) => skipped.push(Skipped::left_out(name, source, &e)),
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
    for (model, version) in ready {
        for copy in 0..copies {
            let name = if copies > 1 {
                format!("{}-{copy}", model.spec.name)
            } else {
                model.spec.name.clone()
            };
            // Each its own stop beside `up`'s, so a watched directory can remove it.
            let (own, stopped) = oneshot::channel();
            let stop = either(started.model_stop_signal(), stopped);
            let kv = deployer.model_store(&name)?;
            let (mut begun, task) = deployer.start(&model, name, kv.clone(), &version, stop)?;
            started.model(task);
            begun.adopt = Some(Adopted {
                name: begun.name.clone(),
                slot: begun.slot.clone(),
                kv,
                version: version.clone(),
                source: model.spec.source.clone(),
                stop: own,
            });
            starting.push(begun);
        }
    }
    Ok(Deployments { starting, skipped })
}

impl Deployer {
    /// A model ready to start: its component compiled (once per component: `compiled`
    /// remembers) and pre-initialized with its mounts and AI models where it can be;
    /// `Ok(Err((name, why)))` when an AI model it needs is not installed (everything else
    /// still starts).
    pub async fn prepare(
        &self,
        spec: ModelSpec,
        compiled: &mut HashMap<String, Code>,
    ) -> Result<Result<Ready, (String, String)>> {
        let ai = self.launcher.ai_models();
        let wanted = spec
            .ai_models
            .iter()
            .chain(&self.launcher.runtime().ai_models);
        if let Some(missing) = wanted.into_iter().find(|m| !ai.installed(m)) {
            let why = llm::not_installed(missing, &ai.model_dir(missing));
            tracing::warn!(model = %missing, "{why}");
            let short =
                format!("AI model `{missing}` not installed (run `cargo xtask install-models`)");
            return Ok(Err((spec.name.clone(), short)));
        }
        // The grants of its pre-initialization: a store of its own (see `Grants`).
        let grants = self
            .launcher
            .grants(KeyValue::in_memory(), &[], &spec.access())?;
        // A model that is a component of its own came from --models or the admin API, where
        // whoever may write chose it: never read through a link. (A model directory's
        // component is this installation's.)
        let source = match spec.component == spec.source {
            true => Source::read_untrusted(&spec.component, &grants.files)?,
            false => Source::read(&spec.component, &grants.files)?,
        };
        let identity = source.identity();
        let code = match compiled.get(&identity) {
            Some(code) => code.clone(),
            None => {
                let preparing = self.launcher.prepare_code(source, &grants);
                let code = preparing
                    .await
                    .with_context(|| format!("loading model {}", spec.name))?;
                compiled.insert(identity, code.clone());
                code
            }
        };
        Ok(Ok(Ready { spec, code }))
    }

    /// `model` loaded as deployment `name` of `version`, with stores `kv` and a fresh start
    /// time, not started. The version reaches the component as variable `model_version` and
    /// every answer as header `x-model-version`.
    pub fn load(&self, model: &Ready, name: &str, kv: KeyValue, version: &str) -> Result<Loaded> {
        let vars = [("model_version", version.to_owned())];
        let launcher = self.launcher.with_body_of_at_least(model.spec.max_body());
        let grants = launcher.grants(kv, &vars, &model.spec.access())?;
        let hooks = hooks::for_model(version, None);
        Ok(launcher.server_of(name, &model.code, grants, hooks))
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
        let starting = Starting {
            name,
            slot,
            outcome,
            adopt: None,
        };
        Ok((starting, task))
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
        let runtime = self.launcher.runtime();
        if runtime.runtime_config_file.is_none() {
            let dir = runtime.data_dir.join("models").join(name);
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

/// Starts one model's deployment; the receiver gets its address once it serves, or why it
/// failed (the whole error on one line, for `up`'s table and the admin API).
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
        // Its server, instances and code went with it (a model removed, or `up` stopping):
        // what they freed on the heap goes back to the system, not kept for the next model
        // (a removed model's memory stayed resident otherwise, 20-40 MiB of 4 iris models).
        tokio::task::spawn_blocking(heap::release_freed);
        if let Err(e) = &outcome {
            tracing::error!(model = %name, error = %format!("{e:#}"), "model deployment failed");
            send(Err(one_line(&format!("{e:#}"))));
        }
        outcome
    });
    (task, rx)
}

/// `text`'s lines as one: a reason goes in a table row and a JSON string.
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}
