//! `runtime-host predict`: a library through a model, from the command line. The work is
//! the `screen` crate's; this command finds the model: a running deployment (`--url`), or a
//! model run in this process (`--model`), served on a loopback port of its own.

use crate::cli::PredictCommand;
use crate::serve::{Loaded, local_url};
use crate::up::models::model_spec;
use anyhow::{Result, bail};

pub async fn run(cmd: PredictCommand) -> Result<()> {
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
    let summary = screen::run(&cmd.args, &url, crate::signals::wait()).await?;
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
    crate::serve::print_attribution();
    let spec = model_spec(model)?;
    let mut runtime = cmd.runtime.clone();
    let state = if runtime.data_dir == std::path::Path::new(".data") {
        let dir = tempfile::tempdir()?;
        runtime.data_dir = dir.path().to_owned();
        Some(dir)
    } else {
        None
    };
    runtime.dirs.extend(spec.mounts.iter().cloned());
    runtime.ai_models.extend(spec.ai_models.iter().cloned());
    let kv = runtime.key_value().await?;
    let loaded = Loaded::load(&spec.component, &runtime, kv, &[], None).await?;
    if crate::signals::unless_stopped(async {}).await.is_none() {
        bail!("stopped while loading {}", spec.name);
    }
    let service = loaded.bind("127.0.0.1:0".parse()?).await?;
    let url = local_url(service.addr);
    tracing::info!(model = %spec.name, %url, "model served in this process");
    let task = tokio::spawn(async move {
        let never = std::future::pending::<()>();
        if let Err(e) = crate::listener::serve(
            service.listener,
            service.server,
            never,
            service.limits.deadline,
        )
        .await
        {
            tracing::error!("serving the model: {e:#}");
        }
    });
    Ok((url, task, state))
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
