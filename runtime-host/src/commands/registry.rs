//! `runtime-host registry`: the port registry (interface C) with what only a native host
//! adds, callers identified and v1.2's process health monitoring.

use crate::services::announce::announce;
use crate::services::launch::{Launcher, default_component};
use crate::services::registry::{Recipe, RegistryOptions, check_ports};
use anyhow::Result;
use clap::Args;
use host_core::runtime::flags::RuntimeArgs;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RegistryArgs {
    /// Address to listen on (the spec's default registry port is 5000).
    #[arg(long, default_value = "127.0.0.1:5000")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub registry: RegistryOptions,
    /// The registry component (default: registry.wasm from this build's target directory).
    #[arg(long)]
    pub component: Option<PathBuf>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

pub async fn run(args: RegistryArgs) -> Result<()> {
    check_ports(
        &args.registry.ports,
        &[(args.listen.port(), "the registry listens on")],
    )?;
    let component = match &args.component {
        Some(c) => c.clone(),
        None => default_component("registry")?,
    };
    announce(args.runtime.metrics_listen).await?;
    let launcher = Launcher::new(&args.runtime)?;
    let recipe = Recipe::new(&args.registry, args.runtime.key_value().await?)?;
    let loaded = recipe.launch(&launcher, &component).await?;
    let service = recipe.bind(loaded, args.listen, "--listen").await?;
    service.run_until_signal().await
}
