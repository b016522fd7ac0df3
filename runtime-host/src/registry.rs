//! `runtime-host registry`: serves the registry component and adds what only a native host
//! can do, v1.2's process health monitoring (see [`crate::monitor`]).

use crate::cli::RegistryArgs;
use crate::serve::{Service, default_component, print_attribution};
use anyhow::{Result, bail};
use registry_core::PortRange;

pub async fn run(args: RegistryArgs) -> Result<()> {
    if args.ttl == 0 {
        bail!("--ttl must be at least 1 second");
    }
    if let Err(e) = PortRange::parse(&args.ports) {
        bail!("--ports: {e}");
    }
    let component = match &args.component {
        Some(c) => c.clone(),
        None => default_component("registry")?,
    };
    print_attribution();
    // A fresh secret each start: only this process can use the maintenance route.
    let secret = uuid::Uuid::new_v4().simple().to_string();
    let vars = [
        ("registry_ttl_secs", args.ttl.to_string()),
        ("registry_ports", args.ports.clone()),
        ("registry_maintenance_token", secret.clone()),
    ];
    let service = Service::start(&component, args.listen, &args.runtime, &vars).await?;
    let interval = args.monitor_interval;
    tokio::spawn(crate::monitor::run(service.local_url(), secret, interval));
    tracing::info!(ttl_s = args.ttl, ports = %args.ports, monitor_interval = ?interval, "registry ready");
    service.run_until_signal().await
}
