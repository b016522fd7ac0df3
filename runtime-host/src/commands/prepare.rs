//! `runtime-host prepare` (hidden): one component snapshotted (where it can be) and compiled
//! into the cache, as a deployment with the same mounts would have it, then exit: the child
//! process that does a component's cold work for `up`, `serve`, `model` and `registry`
//! (`host_core::runtime::preinit::child`), so its working memory leaves with it.

use crate::services::launch::Launcher;
use anyhow::Result;
use clap::Args;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::runtime::flags::{Access, RuntimeArgs};
use host_core::support::{log_writer, signals, stop};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// The component to snapshot (where it can be) and compile.
    pub component: PathBuf,
    /// Exit once standard input closes: the parent holds the pipe's other end, so the child
    /// ends with it, whatever way the parent went.
    #[arg(long, hide = true)]
    pub until_stdin_closes: bool,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

pub async fn run(args: PrepareArgs) -> Result<()> {
    // A compile runs inside its task (Wizer's, with `block_in_place`), which cannot see the
    // stop until it ends: tens of seconds, or for good where a lock is never given. The child
    // leaves nothing half-made (cache files appear whole, the temporaries of a dead process
    // are removed), so on the first signal it simply exits.
    tokio::spawn(async {
        signals::wait().await;
        log_writer::flush();
        std::process::exit(143);
    });
    // A parent that exited (a failed self-test ends `model` at once) left its child making a
    // snapshot of files its caller then removed: a snapshot of missing files, cached.
    if args.until_stdin_closes {
        std::thread::spawn(|| {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            std::process::exit(143);
        });
    }
    let launcher = Launcher::new(&args.runtime)?.doing_cold_work_here();
    let whom = format!("component {}", args.component.display());
    let grants = launcher.grants(KeyValue::in_memory(), &[], &Access::flags(whom))?;
    match launcher.load_component(&args.component, &grants).await {
        Ok(_) => Ok(()),
        // Nothing was prepared: the parent must not take the cache for filled.
        Err(e) if stop::is_stopped(&e) => {
            anyhow::bail!("stopped before the component was prepared")
        }
        Err(e) => Err(e),
    }
}
