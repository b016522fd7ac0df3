//! `runtime-host serve`: one component over HTTP, on embedded or configured stores.

use crate::services::announce::announce;
use crate::services::launch::Launcher;
use crate::services::model::manifest::check_mounts;
use anyhow::Result;
use clap::Args;
use host_core::runtime::flags::RuntimeArgs;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The component to serve (e.g. target/wasm32-wasip2/release/chat.wasm).
    pub component: PathBuf,
    /// Address to listen on. Port 0 picks a free port (printed on startup).
    #[arg(long, default_value = "127.0.0.1:8050")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

pub async fn run(args: ServeArgs) -> Result<()> {
    let body = check_mounts(&args.runtime.dirs)?;
    announce(args.runtime.metrics_listen).await?;
    let launcher = Launcher::new(&args.runtime)?.with_body_of_at_least(body);
    let loaded = launcher
        .launch_flagged(&args.component, &[], Vec::new())
        .await?;
    let service = loaded.bind(args.listen, "--listen").await?;
    service.run_until_signal().await
}
