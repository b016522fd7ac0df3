//! Launching a component as a service: the one path every command takes, from a component
//! file to a server answering on a port.
//!
//! A [`Launcher`] holds what a process's components share (one engine with its instance
//! pool, the compilation cache, the limits, the AI models' weights, the command line's
//! flags): `serve`, `registry`, `model` and `predict --model` make one for their component,
//! `up` one for everything it runs. It makes each component's grants ([`Launcher::grants`]),
//! compiles and pre-initializes it, racing the stop signal ([`Launcher::load_component`]), and
//! puts a server of it in a slot ([`Launcher::server`]): a [`Launch`], which
//! [`Launch::bind`] turns into a [`Service`] on its port.

use crate::services::metrics_endpoint;
use anyhow::{Context, Result};
use host_core::capabilities::keyvalue::KeyValue;
use host_core::capabilities::llm::AiModels;
use host_core::http::hooks::Hook;
use host_core::http::listener::PortBinding;
use host_core::http::server::ComponentServer;
use host_core::http::slot::ServerSlot;
use host_core::runtime::engine;
use host_core::runtime::flags::{Access, RuntimeArgs};
use host_core::runtime::limits::Limits;
use host_core::runtime::preinit::child::ChildJob;
use host_core::runtime::preinit::{self, ColdWork, Source};
use host_core::runtime::state::{Grants, InstanceState};
use host_core::support::{signals, stop};
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// Extra time in-flight requests get to finish after a shutdown signal, beyond the deadline.
pub const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What the components of one process share, and how each is launched.
#[derive(Clone)]
pub struct Launcher {
    engine: wasmtime::Engine,
    /// Winch's engine, for components whose optimized code is not cached yet ([`CodeTiers`]);
    /// `None` with `--optimized-only`, or where Winch cannot run here.
    baseline: Option<wasmtime::Engine>,
    runtime: RuntimeArgs,
    limits: Limits,
    cache_dir: PathBuf,
    /// One copy of each AI model's weights, whichever component uses it.
    ai: AiModels,
    /// Where the work the cache lacks is done.
    cold: ColdWork,
}

impl Launcher {
    /// For one service: an engine whose instance pool holds `--max-concurrency` instances.
    pub fn new(runtime: &RuntimeArgs) -> Result<Self> {
        let limits = runtime.limits();
        let engine = engine::build_engine(&limits)?;
        Self::with(engine, runtime, limits)
    }

    /// For every service of the process (`up`): one engine whose pool of `slots` instances
    /// they share, as they share its compiled code.
    pub fn shared(runtime: &RuntimeArgs, slots: u32) -> Result<Self> {
        let limits = runtime.limits();
        let engine = engine::build_shared_engine(&limits, slots)?;
        Self::with(engine, runtime, limits)
    }

    fn with(engine: wasmtime::Engine, runtime: &RuntimeArgs, limits: Limits) -> Result<Self> {
        let cache_dir = runtime.cache_dir()?;
        let baseline = match runtime.optimized_only {
            true => None,
            false => engine::build_baseline_engine(&limits)
                .inspect_err(|e| {
                    tracing::warn!(
                        "no baseline compiler here ({e:#}): new components are served once \
                         Cranelift has compiled them"
                    )
                })
                .ok(),
        };
        Ok(Self {
            engine,
            baseline,
            cache_dir,
            ai: runtime.ai_models(),
            runtime: runtime.clone(),
            limits,
            cold: ColdWork::InChild(prepare_in_child),
        })
    }

    /// The same, doing what the cache lacks in this process: `runtime-host prepare`, the
    /// child every other launcher leaves that work to ([`prepare_in_child`]).
    pub fn doing_cold_work_here(self) -> Self {
        Self {
            cold: ColdWork::Here,
            baseline: None,
            ..self
        }
    }

    /// The same, serving components only from optimized code (a batch job: it runs
    /// long enough for the compile to pay off, and would run on baseline code meanwhile).
    pub fn optimized_only(self) -> Self {
        Self {
            baseline: None,
            ..self
        }
    }

    /// The command line's flags.
    pub fn runtime(&self) -> &RuntimeArgs {
        &self.runtime
    }

    /// The limits every component gets.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// This launcher with a request-body cap of at least `bytes`, for a service one of whose
    /// routes takes larger bodies (chat's whole-dialog writes) than `--max-body` allows.
    pub fn with_body_of_at_least(&self, bytes: usize) -> Self {
        let mut wider = self.clone();
        wider.limits.max_body_bytes = wider.limits.max_body_bytes.max(bytes);
        wider
    }

    /// The process's AI models.
    pub fn ai_models(&self) -> &AiModels {
        &self.ai
    }

    /// One component's grants: its stores `kv`; the command line's variables, then `vars`,
    /// then `deployment_started_at_ms` (now: models key their metrics by it); the files and
    /// AI models `access` names.
    pub fn grants(&self, kv: KeyValue, vars: &[(&str, String)], access: &Access) -> Result<Grants> {
        self.runtime
            .grants(kv, &self.ai, &with_start_time(vars), access)
    }

    /// The component at `path`, compiled and pre-initialized with `grants` where it can be
    /// (see `host_core::runtime::preinit`), what the cache lacks done in a child process
    /// (unless [`Launcher::doing_cold_work_here`]); [`stop::Stopped`] if a stop signal comes
    /// first.
    pub async fn load_component(
        &self,
        path: &Path,
        grants: &Grants,
    ) -> Result<ProxyPre<InstanceState>> {
        let source = Source::read(path, &grants.files)?;
        self.load_source(source, grants).await
    }

    /// [`Launcher::load_component`] of a component already read.
    pub async fn load_source(
        &self,
        source: Source,
        grants: &Grants,
    ) -> Result<ProxyPre<InstanceState>> {
        let (engine, limits, cache_dir) = (&self.engine, &self.limits, &self.cache_dir);
        let path = source.path().to_owned();
        let started = Instant::now();
        let preparing = preinit::prepare(engine, source, grants, limits, cache_dir, self.cold);
        let prepared = stop::unless(signals::wait(), preparing).await??;
        tracing::info!(
            component = %path.display(),
            load_ms = started.elapsed().as_millis() as u64,
            snapshot = prepared.snapshot.as_deref().unwrap_or("none"),
            "component compiled"
        );
        Ok(prepared.pre)
    }

    /// Winch's engine, where new components start on baseline code (see
    /// [`crate::services::tiers`]).
    pub fn baseline_engine(&self) -> Option<&wasmtime::Engine> {
        self.baseline.as_ref()
    }

    /// Cranelift's engine, whose code every component is served from in the end.
    pub fn engine(&self) -> &wasmtime::Engine {
        &self.engine
    }

    /// Where compiled code is cached.
    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// A server of `pre` as deployment `name` (the label of its metrics), with `grants`
    /// and the service's `hooks`, in a slot of its own (not yet on a port).
    pub fn server(
        &self,
        name: &str,
        pre: ProxyPre<InstanceState>,
        grants: Grants,
        hooks: Vec<Arc<dyn Hook>>,
    ) -> Launch {
        tracing::info!(
            variables = ?grants.vars.names(),
            mounts = ?grants.files.guest_paths(),
            "component ready"
        );
        let server = ComponentServer::new(name, pre, grants, self.limits.clone(), hooks);
        let server = Arc::new(server);
        metrics_endpoint::watch(&server);
        Launch {
            slot: ServerSlot::new(server.clone()),
            server,
            limits: self.limits.clone(),
        }
    }

    /// The command line's own component (`serve`, `model`): on the stores the runtime
    /// config names, granted the command line's mounts and AI models and `vars`, served with
    /// `hooks`.
    pub async fn launch_flagged(
        &self,
        component: &Path,
        vars: &[(&str, String)],
        hooks: Vec<Arc<dyn Hook>>,
    ) -> Result<Launch> {
        let kv = self.runtime.key_value().await?;
        let access = Access::flags(format!("component {}", component.display()));
        let grants = self.grants(kv, vars, &access)?;
        self.launch(component, grants, hooks).await
    }

    /// [`Launcher::load_component`], then [`Launcher::server`] as the deployment named after the
    /// component's file.
    pub async fn launch(
        &self,
        component: &Path,
        grants: Grants,
        hooks: Vec<Arc<dyn Hook>>,
    ) -> Result<Launch> {
        let source = Source::read(component, &grants.files)?;
        let code = self.load_code(source, &grants).await?;
        Ok(self.server_of(&metrics_name(component), &code, grants, hooks))
    }
}

/// `extra` plus `deployment_started_at_ms` (now), by which models key their metrics.
fn with_start_time<'a>(extra: &[(&'a str, String)]) -> Vec<(&'a str, String)> {
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let mut vars = extra.to_vec();
    vars.push(("deployment_started_at_ms", started_ms.to_string()));
    vars
}

/// The name a component's metrics carry until told otherwise: its file's (`molprop` of
/// molprop.wasm).
pub fn metrics_name(component: &Path) -> String {
    component
        .file_stem()
        .map_or("component".into(), |s| s.to_string_lossy().into_owned())
}

/// A launch: a component compiled, linked and ready to answer, not yet bound to an address.
pub struct Launch {
    pub server: Arc<ComponentServer>,
    /// Where its listener will find it (an upgrade replaces the server there).
    pub slot: Arc<ServerSlot>,
    pub limits: Limits,
}

impl Launch {
    /// Binds `listen`; `choose` says how a user picks another address when it is taken.
    pub async fn bind(&self, listen: SocketAddr, choose: &str) -> Result<Service> {
        Ok(Service {
            listening: PortBinding::bind(listen, choose).await?,
            server: self.server.clone(),
            slot: self.slot.clone(),
            limits: self.limits.clone(),
        })
    }
}

/// A component bound to its address, ready to serve.
pub struct Service {
    listening: PortBinding,
    /// The server it started with (for the host's own in-process calls).
    pub server: Arc<ComponentServer>,
    /// What the listener serves: that server, or a later version of it.
    pub slot: Arc<ServerSlot>,
    pub limits: Limits,
}

impl Service {
    /// The address it serves on.
    pub fn addr(&self) -> SocketAddr {
        self.listening.addr()
    }

    /// The URL a local client reaches it at.
    pub fn local_url(&self) -> String {
        self.listening.url()
    }

    /// Serves until `stop` resolves, then drains requests in flight. Prints where it
    /// listens first: tests and scripts read the line to learn a port chosen for them.
    pub async fn run_until(self, stop: impl Future<Output = ()>) -> Result<()> {
        println!("listening on http://{}", self.addr());
        self.serve_until(stop).await
    }

    /// [`Service::run_until`] without the line (a command whose standard output is its own).
    pub async fn serve_until(self, stop: impl Future<Output = ()>) -> Result<()> {
        let drain = self.limits.deadline + DRAIN_GRACE;
        self.listening.serve(self.slot, stop, drain).await
    }

    /// Serves until SIGINT/SIGTERM, then drains requests in flight.
    pub async fn run_until_signal(self) -> Result<()> {
        self.run_until(signals::wait()).await?;
        tracing::info!("stopped");
        Ok(())
    }
}

/// The child that does a component's cold work (`host_core::runtime::preinit::child`):
/// this program's hidden `runtime-host prepare` (`commands::prepare`), given what decides
/// the cache's entries. A test in `cli` parses what this builds.
pub fn prepare_in_child(job: &ChildJob<'_>) -> Result<tokio::process::Command> {
    let exe = std::env::current_exe().context("finding this program to run it again")?;
    let mut command = tokio::process::Command::new(exe);
    command.args(prepare_args(job));
    Ok(command)
}

/// The arguments of [`prepare_in_child`]'s command.
pub fn prepare_args(job: &ChildJob<'_>) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = vec![
        "prepare".into(),
        job.component.into(),
        "--until-stdin-closes".into(),
        "--cache-dir".into(),
        job.cache_dir.into(),
        "--max-memory-mib".into(),
        job.max_memory_mib.to_string().into(),
    ];
    for mount in job.mounts.dir_args() {
        args.push("--dir".into());
        args.push(mount);
    }
    args
}

/// This program's own component `NAME.wasm`, from its installation (or the cargo build it
/// runs from), never from the working directory (see [`super::installation`]).
pub fn default_component(name: &str) -> Result<PathBuf> {
    super::installation::component(name)
}
