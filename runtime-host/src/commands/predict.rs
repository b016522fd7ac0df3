//! `runtime-host predict`: a library, or picture and sound files, through a model, from the
//! command line. The work is the `screen` crate's; this command finds the model: a running
//! deployment (`--url`), or a model run in this process (`--model`), served on a loopback
//! port of its own.

use crate::services::announce::print_attribution;
use crate::services::launch::Launcher;
use crate::services::model::spec::model_spec;
use anyhow::{Result, bail};
use clap::Args;
use host_core::runtime::flags::RuntimeArgs;
use host_core::support::task::AbortOnDrop;
use host_core::support::{signals, stop};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PredictCommand {
    #[command(flatten)]
    pub args: screen::PredictArgs,
    /// A running deployment's base URL, e.g. http://127.0.0.1:3000/models/solubility.
    #[arg(long, conflicts_with = "model")]
    pub url: Option<String>,
    /// Run the model in this process instead: a component (.wasm), a model directory (with a
    /// model.toml, served by the ONNX component) or a built component's name (molprop, minilm,
    /// textgen).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Settings of a model run in this process (--model).
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

pub async fn run(cmd: PredictCommand) -> Result<()> {
    // An output that cannot be written is said at once, before a model is loaded.
    screen::claim::check(&cmd.args.output_path()?, cmd.args.resume, cmd.args.force)?;
    let (url, _served, _state) = match (&cmd.url, &cmd.model) {
        (Some(url), None) => (url.clone(), None, None),
        (None, Some(model)) => {
            let (url, task, state) = serve_in_process(&cmd, model).await?;
            (url, Some(AbortOnDrop(task)), state)
        }
        _ => bail!(
            "name the model: --url of a running deployment (e.g. http://127.0.0.1:3000/models/molprop \
             under `runtime-host up`), or --model (a component, a model directory or molprop/minilm) \
             to run it in this process"
        ),
    };
    let summary = screen::run(&cmd.args, &url, signals::wait()).await?;
    eprint!("{summary}");
    if summary.interrupted {
        bail!("interrupted");
    }
    Ok(())
}

/// Serves the model on a free loopback port until the command ends. Unless --data-dir names
/// one, its state (metrics) lives in a temporary directory removed at the end, apart from any
/// `up` using `.data`.
async fn serve_in_process(
    cmd: &PredictCommand,
    model: &std::path::Path,
) -> Result<(
    String,
    tokio::task::JoinHandle<()>,
    Option<tempfile::TempDir>,
)> {
    print_attribution();
    let spec = model_spec(model)?;
    let mut runtime = cmd.runtime.clone();
    let state = if runtime.data_dir == std::path::Path::new(".data") {
        let dir = tempfile::tempdir()?;
        runtime.data_dir = dir.path().to_owned();
        Some(dir)
    } else {
        None
    };
    // A scoring job runs long enough for Cranelift's code to pay for itself.
    let launcher = Launcher::new(&runtime)?
        .optimized_only()
        .with_body_of_at_least(spec.max_body());
    let kv = runtime.key_value().await?;
    let grants = launcher.grants(kv, &[], &spec.access())?;
    let loaded = match launcher.launch(&spec.component, grants, Vec::new()).await {
        Err(e) if stop::is_stopped(&e) => bail!("stopped while loading {}", spec.name),
        loaded => loaded?,
    };
    let service = loaded
        .bind("127.0.0.1:0".parse()?, "(none: a free port is chosen)")
        .await?;
    let url = service.local_url();
    tracing::info!(model = %spec.name, %url, "model served in this process");
    let task = tokio::spawn(async move {
        if let Err(e) = service.serve_until(std::future::pending()).await {
            tracing::error!("serving the model: {e:#}");
        }
    });
    Ok((url, task, state))
}
