//! Deploying a model: its component compiled and pre-initialized ([`Deployer::compile`]),
//! loaded as a deployment of one version ([`Deployer::load`]), and started by the v1.2
//! lifecycle (`services::model::lifecycle`). A [`Deployer`] holds what that needs, owned, so
//! deployments start at any time: at start-up ([`super::at_start`]) and later (a watched
//! `--models`, the admin API: [`super::live`]).

use crate::services::launch::{Launch, Launcher};
use crate::services::model::api_key::ApiKey;
use crate::services::model::hooks;
use crate::services::model::lifecycle::deploy;
use crate::services::model::registration::DeployOptions;
use crate::services::model::spec::ModelSpec;
use crate::services::registry::host_prefix;
use crate::services::tiers::CodeTiers;
use anyhow::{Context, Result};
use host_core::capabilities::keyvalue::KeyValue;
use host_core::capabilities::llm;
use host_core::http::slot::ServerSlot;
use host_core::runtime::preinit::Source;
use host_core::support::heap;
use host_core::support::stop;
use keyvalue_stores::sqlite::KvDatabase;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// A deployment started; `outcome` says where it serves once registered, or why it failed.
pub struct StartingDeployment {
    pub name: String,
    pub slot: Arc<ServerSlot>,
    pub outcome: oneshot::Receiver<Result<SocketAddr, String>>,
}

/// A model ready to deploy: compiled (perhaps by the baseline compiler, its optimized
/// code to follow: see `services::tiers`).
pub struct CompiledModel {
    pub spec: ModelSpec,
    code: CodeTiers,
}

/// Compiled code by component identity: a component several models (or copies) use is
/// compiled once.
pub type CodeCache = HashMap<String, CodeTiers>;

/// Why a model could not be compiled for deployment. The others still start, unless a stop
/// came.
#[derive(Debug)]
pub enum CompileError {
    /// An AI model it needs is not installed.
    AiModelMissing { model: String },
    /// A stop signal came while it compiled: the stack stops (no failure).
    Stopped,
    /// Its component could not be read, pre-initialized or compiled.
    Component(anyhow::Error),
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AiModelMissing { model } => write!(
                f,
                "AI model `{model}` not installed (run `cargo xtask install-models`)"
            ),
            Self::Stopped => write!(f, "{}", stop::Stopped),
            Self::Component(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for CompileError {}

impl From<anyhow::Error> for CompileError {
    fn from(error: anyhow::Error) -> Self {
        match stop::is_stopped(&error) {
            true => Self::Stopped,
            false => Self::Component(error),
        }
    }
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
    /// How long a deployment keeps trying the registry when it registers.
    pub registry_wait: Duration,
    pub self_test_deadline: Duration,
    pub registry_scope: Option<String>,
    pub registry_url: String,
    /// The key every model route needs (`--api-key-file`), if any.
    pub api_key: Option<ApiKey>,
}

impl Deployer {
    /// A model ready to start: its component compiled (once per component: `compiled`
    /// remembers) and pre-initialized with its mounts and AI models where it can be.
    pub async fn compile(
        &self,
        spec: ModelSpec,
        compiled: &mut CodeCache,
    ) -> Result<CompiledModel, CompileError> {
        let ai = self.launcher.ai_models();
        let wanted = spec
            .ai_models
            .iter()
            .chain(&self.launcher.runtime().ai_models);
        if let Some(missing) = wanted.into_iter().find(|m| !ai.installed(m)) {
            let why = llm::not_installed(missing, &ai.model_dir(missing));
            tracing::warn!(model = %missing, "{why}");
            let model = missing.clone();
            return Err(CompileError::AiModelMissing { model });
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
                let preparing = self.launcher.load_code(source, &grants);
                let code = preparing
                    .await
                    .with_context(|| format!("loading model {}", spec.name))?;
                compiled.insert(identity, code.clone());
                code
            }
        };
        Ok(CompiledModel { spec, code })
    }

    /// `model` loaded as deployment `name` of `version`, with stores `kv` and a fresh start
    /// time, not started. The version reaches the component as variable `model_version` and
    /// every answer as header `x-model-version`.
    pub fn load(
        &self,
        model: &CompiledModel,
        name: &str,
        kv: KeyValue,
        version: &str,
    ) -> Result<Launch> {
        let vars = [("model_version", version.to_owned())];
        let launcher = self.launcher.with_body_of_at_least(model.spec.max_body());
        let grants = launcher.grants(kv, &vars, &model.spec.access())?;
        let hooks = hooks::for_model(name, version, self.api_key.as_ref(), None);
        Ok(launcher.server_of(name, &model.code, grants, hooks))
    }

    /// Starts deployment `name` of `model` by the v1.2 lifecycle until `stop`; the task and
    /// what `up`'s table waits on.
    pub fn start(
        &self,
        model: &CompiledModel,
        name: String,
        kv: KeyValue,
        version: &str,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(StartingDeployment, tokio::task::JoinHandle<Result<()>>)> {
        let loaded = self.load(model, &name, kv, version)?;
        let slot = loaded.slot.clone();
        let opts = self.options(&name, version);
        let source = model.spec.source.clone();
        let (task, outcome) = spawn_deployment(name.clone(), loaded, source, opts, stop);
        let starting = StartingDeployment {
            name,
            slot,
            outcome,
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
            registry_wait: self.registry_wait,
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
    loaded: Launch,
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
