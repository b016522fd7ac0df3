//! Running a component as a service: `runtime-host serve`, and the shared start-up every
//! service command uses.

use crate::cli::{RuntimeArgs, ServeArgs};
use crate::files::Mounts;
use crate::keyvalue::KeyValue;
use crate::limits::Limits;
use crate::listener::serve;
use crate::llm::AiGrant;
use crate::preinit::ColdWork;
use crate::server::{ComponentServer, ShutdownRoute};
use crate::signals::unless_stopped;
use crate::slot::ServerSlot;
use crate::state::{Grants, InstanceState};
use anyhow::{Context, Result};
use edge_api::model::{ATTRIBUTION, REGISTRATION_NOTICE};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// Extra time in-flight requests get to finish after a shutdown signal, beyond the deadline.
pub const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// A component loaded and bound to its address, ready to serve.
pub struct Service {
    pub listener: TcpListener,
    /// The server it started with (for the host's own in-process calls).
    pub server: Arc<ComponentServer>,
    /// What the listener serves: that server, or a later version of it.
    pub slot: Arc<ServerSlot>,
    pub limits: Limits,
    pub addr: SocketAddr,
}

/// `extra` plus `deployment_started_at_ms` (now), by which models key their metrics.
pub fn with_start_time<'a>(extra: &[(&'a str, String)]) -> Vec<(&'a str, String)> {
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let mut vars = vec![("deployment_started_at_ms", started_ms.to_string())];
    vars.extend(extra.iter().cloned());
    vars
}

/// The name a component's metrics carry until told otherwise: its file's (`molprop` of
/// molprop.wasm).
pub fn metrics_name(component: &Path) -> String {
    component
        .file_stem()
        .map_or("component".into(), |s| s.to_string_lossy().into_owned())
}

/// A component compiled, linked and ready to answer, not yet bound to an address.
pub struct Loaded {
    pub server: Arc<ComponentServer>,
    /// Where its listener will find it (an upgrade replaces the server there).
    pub slot: Arc<ServerSlot>,
    pub limits: Limits,
}

impl Loaded {
    /// Loads one component into its own engine, with the stores `kv`: pre-initialized where
    /// the component allows it (see [`crate::preinit`]).
    pub async fn load(
        component: &Path,
        runtime: &RuntimeArgs,
        kv: KeyValue,
        extra_vars: &[(&str, String)],
        shutdown: Option<ShutdownRoute>,
    ) -> Result<Self> {
        let limits = runtime.limits();
        let grants = Grants {
            vars: runtime.variables(&with_start_time(extra_vars))?,
            files: Mounts::parse(&runtime.dirs)?,
            kv,
            ai: AiGrant::new(runtime.ai_models(), &runtime.ai_models)?,
        };
        let cache_dir = runtime.cache_dir();
        let engine = crate::engine::build_engine(&limits)?;
        let started = std::time::Instant::now();
        let source = crate::preinit::Source::read(component, &grants.files)?;
        let prepared = crate::preinit::prepare(
            &engine,
            source,
            &grants,
            &limits,
            &cache_dir,
            ColdWork::InChild,
        )
        .await?;
        tracing::info!(
            component = %component.display(),
            load_ms = started.elapsed().as_millis() as u64,
            snapshot = prepared.snapshot.as_deref().unwrap_or("none"),
            "component compiled"
        );
        let name = metrics_name(component);
        Ok(Self::from_pre(
            &name,
            prepared.pre,
            grants,
            limits,
            shutdown,
        ))
    }

    /// [`Loaded::load`], or `None` (and a log line) if a stop signal comes first: a Ctrl-C
    /// while the component is compiled or snapshotted ends start-up at once.
    pub async fn load_unless_stopped(
        component: &Path,
        runtime: &RuntimeArgs,
        kv: KeyValue,
        extra_vars: &[(&str, String)],
        shutdown: Option<ShutdownRoute>,
    ) -> Result<Option<Self>> {
        let loading = Self::load(component, runtime, kv, extra_vars, shutdown);
        let loaded = unless_stopped(loading).await.transpose()?;
        if loaded.is_none() {
            tracing::info!("stopped during start-up");
        }
        Ok(loaded)
    }

    /// A service of an already compiled component: deployments of one component (copies of a
    /// model, or ONNX models sharing the generic component) share its compiled code. `name`
    /// labels its metrics.
    pub fn from_pre(
        name: &str,
        pre: ProxyPre<InstanceState>,
        grants: Grants,
        limits: Limits,
        shutdown: Option<ShutdownRoute>,
    ) -> Self {
        tracing::info!(
            variables = ?grants.vars.names(),
            mounts = ?grants.files.guest_paths(),
            "component ready"
        );
        let mut server = ComponentServer::new(name, pre, grants, limits.clone());
        if let Some(route) = shutdown {
            server = server.with_shutdown_route(route);
        }
        let server = Arc::new(server);
        crate::metrics::exposition::watch(&server);
        Self {
            slot: ServerSlot::new(server.clone()),
            server,
            limits,
        }
    }

    /// Makes this the registry's service: it learns who calls (see [`crate::caller`]),
    /// vouched for by `token`, the component's `registry_maintenance_token`.
    pub fn identifying_callers(self, token: String) -> Self {
        self.server.identify_callers(token);
        self
    }

    pub async fn bind(&self, listen: SocketAddr) -> Result<Service> {
        let listener = TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}: is another process using it?"))?;
        let addr = listener.local_addr()?;
        Ok(Service {
            listener,
            server: self.server.clone(),
            slot: self.slot.clone(),
            limits: self.limits.clone(),
            addr,
        })
    }
}

impl Service {
    /// Serves until `stop` resolves, then drains requests in flight.
    pub async fn run_until(self, stop: impl std::future::Future<Output = ()>) -> Result<()> {
        // Tests and scripts read this line to learn the port when --listen used port 0.
        println!("listening on http://{}", self.addr);
        let drain = self.limits.deadline + DRAIN_GRACE;
        serve(self.listener, self.slot, stop, drain).await
    }

    /// Serves until SIGINT/SIGTERM, then drains requests in flight.
    pub async fn run_until_signal(self) -> Result<()> {
        self.run_until(shutdown_signal()).await?;
        tracing::info!("stopped");
        Ok(())
    }

    /// The URL a local client reaches this service at.
    pub fn local_url(&self) -> String {
        local_url(self.addr)
    }
}

/// The URL a local client reaches a listener on `addr` at (loopback for an unspecified
/// address).
pub fn local_url(addr: SocketAddr) -> String {
    let ip = if addr.ip().is_unspecified() {
        std::net::IpAddr::from([127, 0, 0, 1])
    } else {
        addr.ip()
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

pub fn print_attribution() {
    println!("{ATTRIBUTION}");
    println!("{REGISTRATION_NOTICE}");
}

pub async fn run(args: ServeArgs) -> Result<()> {
    print_attribution();
    crate::metrics::exposition::listen(args.runtime.metrics_listen).await?;
    let kv = args.runtime.key_value().await?;
    let loading = Loaded::load_unless_stopped(&args.component, &args.runtime, kv, &[], None);
    let Some(loaded) = loading.await? else {
        return Ok(());
    };
    loaded.bind(args.listen).await?.run_until_signal().await
}

/// Finds a built component: beside this executable's target directory
/// (`target/release/runtime-host` → `target/wasm32-wasip2/release/NAME.wasm`), else under
/// `./target`.
pub fn default_component(name: &str) -> Result<PathBuf> {
    let file = format!("{name}.wasm");
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe()
        && let Some(target) = exe.parent().and_then(Path::parent)
    {
        candidates.push(target.join("wasm32-wasip2/release").join(&file));
    }
    candidates.push(PathBuf::from("target/wasm32-wasip2/release").join(&file));
    candidates.iter().find(|p| p.exists()).cloned().with_context(|| {
        format!("could not find {file} (looked in {candidates:?}); build it with `cargo xtask build` or pass --component")
    })
}

/// Resolves on SIGINT or SIGTERM, at once if one arrived earlier (see [`crate::signals`]).
pub async fn shutdown_signal() {
    crate::signals::wait().await;
}
