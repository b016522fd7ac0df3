//! `runtime-host model`: one model deployment by the v1.2 startup sequence (spec 9):
//!
//! 1. print the attribution and registration notice;
//! 2. load the component and pass its self-test (its `/health` runs the test examples);
//! 3. register with the registry, with this process's id, *before* binding any port;
//! 4. bind the assigned port and serve;
//! 5. heartbeat, registering again when the registry forgot us, tracking its availability;
//! 6. on SIGINT/SIGTERM or an allowed `POST /shutdown`: stop accepting, finish requests,
//!    cancel the heartbeat task if there is one, unregister (skipped, not failed, when the
//!    registry does not answer), exit 0.

mod registration;
mod self_test;

pub use self_test::self_test;

use crate::cli::ModelArgs;
use crate::serve::{Loaded, print_attribution, shutdown_signal};
use crate::server::ShutdownRoute;
use anyhow::{Context, Result, bail};
use edge_api::model::{Capabilities, ModelInfo, SPEC_VERSION};
use edge_api::registry::RegistrationRequest;
use registration::{Registry, State};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// How one deployment talks to its registry.
#[derive(Debug, Clone)]
pub struct DeployOptions {
    /// `app_name` to register under. Deployments in one process must differ in it (or in the
    /// model name): the registry treats the same process, app and model as a retry.
    pub app_name: String,
    pub registry: String,
    pub preferred_port: Option<u16>,
    pub host: std::net::IpAddr,
    pub heartbeat_interval: std::time::Duration,
    pub registry_wait: std::time::Duration,
    /// One self-test try's deadline (`--self-test-deadline`).
    pub self_test_deadline: std::time::Duration,
    /// The deployed version (`up`: a digest of the model's files), in the registration's
    /// metadata as `model_version`.
    pub model_version: Option<String>,
}

impl DeployOptions {
    fn from_args(args: &ModelArgs) -> Self {
        Self {
            app_name: "runtime-host".into(),
            registry: args.registry.clone(),
            preferred_port: args.preferred_port,
            host: args.host,
            heartbeat_interval: args.heartbeat_interval,
            registry_wait: args.registry_wait,
            self_test_deadline: args.self_test_deadline,
            model_version: None,
        }
    }
}

pub async fn run(args: ModelArgs) -> Result<()> {
    print_attribution();
    crate::metrics::exposition::listen(args.runtime.metrics_listen).await?;
    let trigger = Arc::new(tokio::sync::Notify::new());
    let route = ShutdownRoute {
        allowed: args.allow_shutdown,
        trigger: trigger.clone(),
    };
    let kv = args.runtime.key_value().await?;
    // Its version: a digest of the component (an ONNX manifest may name its own in /info).
    let version = crate::up::versions::version_of(&args.component)?;
    let vars = [("model_version", version.clone())];
    let loading =
        Loaded::load_unless_stopped(&args.component, &args.runtime, kv, &vars, Some(route));
    let Some(loaded) = loading.await? else {
        return Ok(());
    };
    loaded.server.set_version(&version);
    let stop = async move {
        tokio::select! {
            _ = shutdown_signal() => {},
            _ = trigger.notified() => tracing::info!("shutdown requested over HTTP"),
        }
    };
    let opts = DeployOptions {
        model_version: Some(version),
        ..DeployOptions::from_args(&args)
    };
    deploy(loaded, &args.component, opts, stop, |_| {}).await
}

/// Runs one loaded model through the lifecycle until `stop`: self-test, register, bind,
/// serve (calling `ready` with the address), heartbeat, then stop and unregister. `source`
/// (the component, or an ONNX model's directory) is named in the registration's reason.
pub async fn deploy(
    loaded: Loaded,
    source: &std::path::Path,
    opts: DeployOptions,
    stop: impl std::future::Future<Output = ()>,
    ready: impl FnOnce(SocketAddr),
) -> Result<()> {
    // `stop` may come at any step: before registering nothing needs undoing; after, the
    // registration is given back.
    tokio::pin!(stop);
    macro_rules! or_stop {
        ($work:expr) => {
            or_stop!($work, {})
        };
        ($work:expr, $undo:expr) => {
            tokio::select! {
                done = $work => done,
                _ = &mut stop => {
                    tracing::info!("stopped during start-up");
                    $undo;
                    return Ok(());
                }
            }
        };
    }
    let (info, caps) = or_stop!(self_test(&loaded, opts.self_test_deadline))?;
    tracing::info!(model = %info.name, "self-test passed");

    let request = registration_request(&opts, &info, &caps, source);
    let registry = Arc::new(Registry::new(&opts.registry, request));
    let registering = registry.register_within(opts.preferred_port, opts.registry_wait);
    tokio::pin!(registering);
    let registered = tokio::select! {
        done = &mut registering => done,
        _ = &mut stop => {
            // The request under way may already have reached the registry: let it finish
            // (the client's timeout bounds it) and give back whatever it obtained, so no
            // registration outlives a Ctrl-C.
            tracing::info!("stopped during start-up");
            let wait = registration::CALL_TIMEOUT + std::time::Duration::from_millis(500);
            if let Ok(Ok(r)) = tokio::time::timeout(wait, registering).await {
                tracing::info!(model = %info.name, port = r.assigned_port, message = %r.message, "registered");
                match registry.unregister(r.assigned_port, &r.registration_id).await {
                    Ok(()) => tracing::info!(port = r.assigned_port, "unregistered"),
                    Err(e) => tracing::warn!(error = %format!("{e:#}"), "registry unreachable; unregistration skipped"),
                }
            }
            return Ok(());
        }
    };
    let state = match registered {
        Ok(r) => {
            tracing::info!(model = %info.name, port = r.assigned_port, message = %r.message, "registered");
            State {
                port: r.assigned_port,
                lease: registration::lease_left(&r.expires_at),
                registration_id: Some(r.registration_id),
                registry_available: true,
            }
        }
        Err(e) => match opts.preferred_port {
            Some(port) => {
                tracing::warn!(error = %format!("{e:#}"), port, "registry unavailable; serving on the preferred port and registering when it returns");
                State {
                    port,
                    registration_id: None,
                    registry_available: false,
                    lease: None,
                }
            }
            None => bail!(
                "could not register with the registry at {} within {:?}: {e:#}\n\
                 start it (`runtime-host registry`) or pass --preferred-port to serve without it",
                registry.url(),
                opts.registry_wait
            ),
        },
    };
    let state = Arc::new(Mutex::new(state));

    let (service, guards) = or_stop!(
        bind_or_move(&loaded, &opts, &registry, &state),
        release(&registry, &state).await
    )?;
    ready(service.addr);
    let heartbeat = Some(tokio::spawn(
        registry
            .clone()
            .keep_alive(state.clone(), opts.heartbeat_interval),
    ));
    service.run_until(&mut stop).await?;
    if let Some(task) = heartbeat {
        task.abort();
    }
    release(&registry, &state).await;
    PortGuard::release_all(guards).await;
    tracing::info!(model = %info.name, "stopped");
    Ok(())
}

/// What a deployment registers: its name, process and capabilities, and (under `up`) its
/// version. Registering it again from the same process renews the registration on the same
/// port with this metadata (how an upgraded model reports its new version).
pub fn registration_request(
    opts: &DeployOptions,
    info: &ModelInfo,
    caps: &Capabilities,
    source: &std::path::Path,
) -> RegistrationRequest {
    let names: Vec<String> = caps.capabilities.iter().map(|c| c.name.clone()).collect();
    let mut metadata = serde_json::Map::from_iter([
        (
            "model_type".to_owned(),
            json!(names.first().cloned().unwrap_or_default()),
        ),
        ("capabilities".to_owned(), json!(names)),
    ]);
    if let Some(v) = &opts.model_version {
        metadata.insert("model_version".to_owned(), json!(v));
    }
    RegistrationRequest {
        app_name: opts.app_name.clone(),
        app_version: SPEC_VERSION.into(),
        model_name: info.name.clone(),
        process_id: std::process::id(),
        preferred_port: opts.preferred_port,
        reason: format!("serving model {} from {}", info.name, source.display()),
        metadata,
    }
}

/// Tells the registry what an upgraded deployment now serves: the same registration (same
/// process, app and model name), renewed with the new metadata.
pub async fn register_again(request: RegistrationRequest, registry: &str) -> Result<u16> {
    let r = Registry::new(registry, request).register(None).await?;
    Ok(r.assigned_port)
}

/// Binds the registered port. If a process outside the registry holds it, the port is
/// reserved under a guard registration (so the registry does not hand it out again while
/// busy), and the deployment registers again for another port. Every busy port stays
/// guarded, so the moves end at a free port or when the registry has none left.
async fn bind_or_move(
    loaded: &Loaded,
    opts: &DeployOptions,
    registry: &Arc<Registry>,
    state: &Arc<Mutex<State>>,
) -> Result<(crate::serve::Service, Vec<PortGuard>)> {
    let mut guards: Vec<PortGuard> = Vec::new();
    loop {
        let (port, registered) = {
            let s = state.lock().unwrap();
            (s.port, s.registration_id.is_some())
        };
        let busy = match loaded.bind(SocketAddr::new(opts.host, port)).await {
            Ok(service) => return Ok((service, guards)),
            Err(e) if registered => e,
            Err(e) => return Err(e).context(format!("the preferred port {port} is busy")),
        };
        tracing::warn!(port, error = %format!("{busy:#}"), "assigned port is held by another process; moving");
        release(registry, state).await;
        let Some(guard) = PortGuard::reserve(registry, opts, port).await else {
            // Unguarded, the registry could hand the same port out again and again.
            PortGuard::release_all(guards).await;
            bail!("port {port} is busy and could not be reserved in the registry; not moving on");
        };
        guards.push(guard);
        let r = match registry.register(None).await {
            Ok(r) => r,
            Err(e) => {
                let busy: Vec<u16> = guards.iter().map(|g| g.port).collect();
                PortGuard::release_all(guards).await;
                return Err(e).context(format!(
                    "registering again for another port (busy: {busy:?})"
                ));
            }
        };
        if guards.iter().any(|g| g.port == r.assigned_port) {
            // A registry that ignores the reservation would send us round for ever.
            let _ = registry
                .unregister(r.assigned_port, &r.registration_id)
                .await;
            PortGuard::release_all(guards).await;
            bail!(
                "the registry assigned port {} again, though it is busy and reserved there; \
                 not moving on",
                r.assigned_port
            );
        }
        tracing::info!(port = r.assigned_port, "registered on another port");
        let mut s = state.lock().unwrap();
        s.port = r.assigned_port;
        s.lease = registration::lease_left(&r.expires_at);
        s.registration_id = Some(r.registration_id);
    }
}

/// A registration that holds a port some other process occupies, so the registry does not
/// assign it; released as soon as the port is free again (checked every heartbeat).
struct PortGuard {
    port: u16,
    registry: Arc<Registry>,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl PortGuard {
    async fn reserve(main: &Registry, opts: &DeployOptions, port: u16) -> Option<Self> {
        let mut request = main.request.clone();
        request.app_name = format!("{}/busy-port-guard", main.request.app_name);
        // One registration per busy port: the same name twice would be a retry of the first.
        request.model_name = format!("{}-port-{port}", main.request.model_name);
        request.reason = format!(
            "port {port} is held by a process outside the registry; reserved while it stays busy"
        );
        let registry = Arc::new(Registry::new(&opts.registry, request));
        let r = registry.register(Some(port)).await.ok()?;
        if r.assigned_port != port {
            let _ = registry
                .unregister(r.assigned_port, &r.registration_id)
                .await;
            return None;
        }
        tracing::info!(port, "reserved the busy port in the registry");
        let state = Arc::new(Mutex::new(State {
            port,
            lease: registration::lease_left(&r.expires_at),
            registration_id: Some(r.registration_id),
            registry_available: true,
        }));
        let (reg, st, host, every) = (
            registry.clone(),
            state.clone(),
            opts.host,
            opts.heartbeat_interval,
        );
        let task = tokio::spawn(async move {
            loop {
                let lease = st.lock().unwrap().lease;
                tokio::time::sleep(registration::heartbeat_delay(every, lease)).await;
                if std::net::TcpListener::bind((host, port)).is_ok() {
                    tracing::info!(
                        port,
                        "the busy port is free again; releasing its reservation"
                    );
                    release(&reg, &st).await;
                    st.lock().unwrap().registration_id = None;
                    return;
                }
                let id = st.lock().unwrap().registration_id.clone();
                if let Some(id) = id
                    && let Ok(Some(renewed)) = reg.heartbeat(port, &id).await
                {
                    st.lock().unwrap().lease = registration::lease_left(&renewed.expires_at);
                }
            }
        });
        Some(Self {
            port,
            registry,
            state,
            task,
        })
    }

    async fn release(self) {
        self.task.abort();
        release(&self.registry, &self.state).await;
    }

    async fn release_all(guards: Vec<Self>) {
        for guard in guards {
            guard.release().await;
        }
    }
}

/// Unregisters if registered; a registry that does not answer is skipped (spec 7).
async fn release(registry: &Registry, state: &Arc<Mutex<State>>) {
    let (port, id) = {
        let s = state.lock().unwrap();
        (s.port, s.registration_id.clone())
    };
    let Some(id) = id else { return };
    match registry.unregister(port, &id).await {
        Ok(()) => tracing::info!(port, "unregistered"),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "registry unreachable; unregistration skipped")
        }
    }
}
