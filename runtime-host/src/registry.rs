//! `runtime-host registry`: serves the registry component and adds what only a native host
//! can do, v1.2's process health monitoring (see [`crate::monitor`]).

use crate::cli::{RegistryArgs, RegistryOptions};
use crate::keyvalue::KeyValue;
use crate::serve::{Loaded, Service, default_component, print_attribution};
use anyhow::{Result, bail};
use registry_core::PortRange;
use std::net::SocketAddr;

pub async fn run(args: RegistryArgs) -> Result<()> {
    check_ports(
        &args.registry.ports,
        &[(args.listen.port(), "the registry listens on")],
    )?;
    let component = match &args.component {
        Some(c) => c.clone(),
        None => default_component("registry")?,
    };
    print_attribution();
    crate::metrics::exposition::listen(args.runtime.metrics_listen).await?;
    let recipe = Recipe::new(&args.registry, args.runtime.key_value().await?)?;
    let (kv, variables) = (recipe.kv.clone(), recipe.variables());
    let loading = Loaded::load_unless_stopped(&component, &args.runtime, kv, &variables, None);
    let Some(loaded) = loading.await? else {
        return Ok(());
    };
    recipe
        .serve(loaded, args.listen)
        .await?
        .run_until_signal()
        .await
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
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("registry_ttl_secs", self.options.ttl.to_string()),
            ("registry_ports", self.options.ports.clone()),
            ("registry_maintenance_token", self.secret.clone()),
            (
                "registry_max_per_process",
                self.options.max_per_process.to_string(),
            ),
        ]
    }

    /// Binds the loaded registry to `listen`, tells it who calls, and starts the process
    /// monitor; the service is ready to run.
    pub async fn serve(self, loaded: Loaded, listen: SocketAddr) -> Result<Service> {
        let service = loaded
            .identifying_callers(self.secret.clone())
            .bind(listen)
            .await?;
        let interval = self.options.monitor_interval;
        tokio::spawn(crate::monitor::run(
            service.local_url(),
            self.secret,
            interval,
        ));
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
        None => hostname()?,
    };
    if scope.is_empty() || scope.contains('/') {
        bail!("--registry-scope `{scope}` must be a non-empty name without `/`");
    }
    Ok(format!("hosts/{scope}/"))
}

/// This machine's name, as `hostname` prints it.
pub fn hostname() -> Result<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        bail!(
            "cannot read this machine's hostname ({}); pass --registry-scope",
            std::io::Error::last_os_error()
        );
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}
