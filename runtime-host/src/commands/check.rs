//! `runtime-host check`: judges running deployments against the v1.2 specification (the
//! work is the `edge-check` crate's); exit status 0 only when every MUST rule passes.

use anyhow::Result;

pub use edge_check::CheckArgs;

pub async fn run(args: CheckArgs) -> Result<()> {
    if edge_check::run(&args).await? {
        Ok(())
    } else {
        anyhow::bail!("the deployment fails MUST rules")
    }
}
