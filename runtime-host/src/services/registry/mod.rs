//! The port registry (interface C) as a service: its component with what only a native
//! host can add, callers identified ([`crate::services::caller`]) and v1.2's process health
//! monitoring ([`monitor`]), started by one recipe for `runtime-host registry` and `up`.

pub mod monitor;

use crate::services::caller::CallerHook;
use crate::services::launch::{Launch, Launcher, Service};
use anyhow::{Context, Result, bail};
use clap::Args;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::http::hooks::Hook;
use host_core::runtime::flags::Access;
use host_core::support::duration::parse_duration;
use host_core::support::hostname::hostname;
use registry_core::PortRange;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The registry's settings: the same flags for `runtime-host registry` and `up`.
#[derive(Args, Debug, Clone)]
pub struct RegistryOptions {
    /// Lease length in seconds: a registration not renewed by a heartbeat within it is removed.
    #[arg(long, default_value_t = 120)]
    pub ttl: u64,
    /// Assignable ports, inclusive (must not include the host's own ports, e.g. 5000).
    #[arg(long, default_value = "5100-5999")]
    pub ports: String,
    /// Most live registrations one process (or one remote machine) may hold; 0 for no
    /// limit. Keeps one caller from taking the whole port range.
    #[arg(long, default_value_t = 64)]
    pub max_per_process: u32,
    /// Most live registrations one local user may hold, whatever processes they come from
    /// (the user owning the registering connection, as the kernel tells); 0 for no limit.
    /// Default: a quarter of --ports, at least 8 and at most 256, so that another user of
    /// the machine cannot take the whole range with a handful of processes.
    #[arg(long, value_name = "N")]
    pub max_per_user: Option<u32>,
    /// Time between checks that registered processes are still running.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub monitor_interval: Duration,
    /// On a shared store (Redis), the registry keeps its keys under `hosts/<SCOPE>/`:
    /// registries with the same scope are one registry (one port space; each lists every
    /// registration), other scopes are not seen. Ports belong to a machine, so each machine
    /// gets its own scope. Default: this machine's hostname.
    #[arg(long, value_name = "SCOPE")]
    pub registry_scope: Option<String>,
}

/// The registry's start-up, one recipe for `runtime-host registry` and `up`, so they cannot
/// drift apart: its variables (with a fresh maintenance secret each start, so only this
/// process can use the maintenance route), its view of the stores, and once its component
/// is loaded, callers identified and the process monitor running.
pub struct Recipe {
    options: RegistryOptions,
    secret: String,
    /// The stores, scoped for the registry (see [`scoped_for_registry`]).
    pub kv: KeyValue,
}

impl Recipe {
    pub fn new(options: &RegistryOptions, kv: KeyValue) -> Result<Self> {
        if options.ttl == 0 {
            bail!("--ttl must be at least 1 second");
        }
        Ok(Self {
            kv: scoped_for_registry(kv, options.registry_scope.as_deref())?,
            options: options.clone(),
            secret: uuid::Uuid::new_v4().simple().to_string(),
        })
    }

    /// The component's variables.
    fn variables(&self) -> Vec<(&'static str, String)> {
        let mut variables = vec![
            ("registry_ttl_secs", self.options.ttl.to_string()),
            ("registry_ports", self.options.ports.clone()),
            ("registry_maintenance_token", self.secret.clone()),
            (
                "registry_max_per_process",
                self.options.max_per_process.to_string(),
            ),
        ];
        // Unset, the component takes a quarter of the range (`default_per_user_cap`).
        if let Some(n) = self.options.max_per_user {
            variables.push(("registry_max_per_user", n.to_string()));
        }
        variables
    }

    /// The registry's component at `component` launched: with its variables, no files or
    /// AI models, and the hook that tells it who calls, vouched for by this start's secret.
    pub async fn launch(&self, launcher: &Launcher, component: &Path) -> Result<Launch> {
        let access = Access::nothing("the registry");
        let grants = launcher.grants(self.kv.clone(), &self.variables(), &access)?;
        let hook: Arc<dyn Hook> = Arc::new(CallerHook::new(self.secret.clone()));
        launcher.launch(component, grants, vec![hook]).await
    }

    /// Binds the launched registry to `listen` and starts the process monitor; the service
    /// is ready to run. `choose` says how a user picks another port when `listen` is taken.
    pub async fn bind(self, loaded: Launch, listen: SocketAddr, choose: &str) -> Result<Service> {
        let service = loaded.bind(listen, choose).await?;
        let interval = self.options.monitor_interval;
        tokio::spawn(monitor::run(service.local_url(), self.secret, interval));
        tracing::info!(
            ttl_s = self.options.ttl,
            ports = %self.options.ports,
            monitor_interval = ?interval,
            "registry ready"
        );
        Ok(service)
    }
}

/// Checks `--ports`: a valid range that holds none of the host's own ports (`own`: each with
/// what it is for), which the registry would otherwise hand to a model.
pub fn check_ports(ports: &str, own: &[(u16, &str)]) -> Result<PortRange> {
    let range = PortRange::parse(ports).map_err(|e| anyhow::anyhow!("--ports: {e}"))?;
    if let Some((port, what)) = own.iter().find(|(p, _)| range.contains(*p)) {
        bail!(
            "--ports {ports} includes {port}, the port {what}: the registry would hand it to a \
             model. Choose a range without it, e.g. --ports {}-{}",
            port.saturating_add(100),
            port.saturating_add(999)
        );
    }
    Ok(range)
}

/// The registry's view of the stores. On a shared store its keys live under
/// `hosts/<scope>/` (scope: `--registry-scope`, else the hostname), because ports and
/// process ids mean something only on one machine: registries of one scope share one port
/// space, and a registry never judges another machine's processes. On a store of its own
/// (SQLite) the keys stay where Spin's registry keeps them.
pub fn scoped_for_registry(kv: KeyValue, scope: Option<&str>) -> Result<KeyValue> {
    if !kv.is_shared() {
        return Ok(kv);
    }
    let prefix = host_prefix(scope)?;
    tracing::info!("registry keys kept under {prefix} on the shared store");
    Ok(kv.scoped(&prefix))
}

/// `hosts/<scope>/`: where this machine's keys live on a shared store.
pub fn host_prefix(scope: Option<&str>) -> Result<String> {
    let scope = match scope {
        Some(s) => s.to_owned(),
        None => hostname().context("pass --registry-scope")?,
    };
    if scope.is_empty() || scope.contains('/') {
        bail!("--registry-scope `{scope}` must be a non-empty name without `/`");
    }
    Ok(format!("hosts/{scope}/"))
}
