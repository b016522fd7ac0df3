//! `runtime-host model`: one model deployment (interface B) by the v1.2 lifecycle
//! (`services::model::lifecycle`): self-test, register, then serve on the assigned port until
//! a stop signal or an allowed `POST /shutdown`. `model init` writes a model directory's
//! manifest (`services::model::init`); `model check` checks directories as a deploy would
//! (`services::model::check`).

use crate::services::announce::announce;
use crate::services::launch::{Launcher, metrics_name};
use crate::services::model::api_key::ApiKeyArgs;
use crate::services::model::check::{Verdict, check_dir};
use crate::services::model::hooks::{self, ShutdownRoute};
use crate::services::model::init::{InitRequest, init};
use crate::services::model::lifecycle::deploy;
use crate::services::model::manifest::{check_mounts, listed};
use crate::services::model::registration::{DeployOptions, RegistryWait};
use crate::services::model::versions::version_blocking;
use anyhow::Result;
use clap::{Args, Subcommand};
use host_core::runtime::flags::RuntimeArgs;
use host_core::support::duration::parse_duration;
use host_core::support::signals;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub action: Option<ModelAction>,
    /// The model component (e.g. target/wasm32-wasip2/release/molprop.wasm).
    #[arg(required = true)]
    pub component: Option<PathBuf>,
    /// Base URL of the port registry.
    #[arg(long, default_value = "http://127.0.0.1:5000")]
    pub registry: String,
    /// Port to ask the registry for (and to serve on if the registry is unreachable).
    #[arg(long)]
    pub preferred_port: Option<u16>,
    /// Serve `POST /shutdown` (from this machine only); otherwise it answers 403.
    #[arg(long)]
    pub allow_shutdown: bool,
    /// Address to bind the assigned port on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Time between heartbeats (keep it well inside the registry's TTL).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub heartbeat_interval: Duration,
    #[command(flatten)]
    pub registering: RegistryWait,
    /// Longest one try of the model's self-test may run (its own deadline, apart from
    /// --deadline: it runs every test example, while other start-ups may share the cores).
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub self_test_deadline: Duration,
    #[command(flatten)]
    pub api_key: ApiKeyArgs,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// What `model` does instead of running a deployment.
#[derive(Subcommand, Debug)]
pub enum ModelAction {
    /// Check ONNX model directories by what a deploy runs: each `model.toml` parsed as the
    /// ONNX model component parses it and the files it names present, then the component
    /// launched on the directory (nothing registered, no port) and its self-test run: the
    /// graph loaded, the labels and ranges against it, every test example predicted. Every
    /// problem is listed; exit status 0 only when every directory passes.
    Check(Box<CheckArgs>),
    /// Write DIR/model.toml from an ONNX graph and its training data: the features in the
    /// graph's order with their training ranges, the labels, the target's range, test
    /// examples; then edit what it marks "edit me" and run `model check DIR`.
    Init(InitArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Model directories (each holding a `model.toml`).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Longest one try of a model's self-test may run.
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub self_test_deadline: Duration,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The model directory (created if missing; its name is the model's).
    pub dir: PathBuf,
    /// The exported graph (default DIR/model.onnx); one outside DIR is copied in as model.onnx.
    #[arg(long)]
    pub onnx: Option<PathBuf>,
    /// The training data: CSV with a header line; an empty cell is a missing value.
    #[arg(long)]
    pub training: PathBuf,
    /// The target column (default: the last); every other column the graph takes is a feature.
    #[arg(long)]
    pub target: Option<String>,
    /// Held-out rows (same columns) to take the test examples from, instead of training rows.
    #[arg(long)]
    pub held_out: Option<PathBuf>,
    /// Replace an existing model.toml (and model.onnx, when copying the graph in).
    #[arg(long)]
    pub force: bool,
}

pub async fn run(args: ModelArgs) -> Result<()> {
    match &args.action {
        Some(ModelAction::Check(c)) => {
            return check(&c.dirs, &c.runtime, c.self_test_deadline).await;
        }
        Some(ModelAction::Init(init)) => return init_dir(init),
        None => {}
    }
    let component = args.component.clone().expect("clap requires it");
    let body = check_mounts(&args.runtime.dirs)?;
    let api_key = args.api_key.load()?;
    announce(args.runtime.metrics_listen).await?;
    let launcher = Launcher::new(&args.runtime)?.with_body_of_at_least(body);
    // Its version: a digest of the component (an ONNX manifest may name its own in /info).
    let version = version_blocking(&component).await?;
    let vars = [("model_version", version.clone())];
    let trigger = Arc::new(tokio::sync::Notify::new());
    let shutdown = ShutdownRoute {
        allowed: args.allow_shutdown,
        trigger: trigger.clone(),
    };
    let name = metrics_name(&component);
    let hooks = hooks::for_model(&name, &version, api_key.as_ref(), Some(shutdown));
    let loaded = launcher.launch_flagged(&component, &vars, hooks).await?;
    let stop = async move {
        tokio::select! {
            _ = signals::wait() => {},
            _ = trigger.notified() => tracing::info!("shutdown requested over HTTP"),
        }
    };
    let opts = DeployOptions {
        app_name: "runtime-host".into(),
        registry: args.registry.clone(),
        preferred_port: args.preferred_port,
        host: args.host,
        heartbeat_interval: args.heartbeat_interval,
        registry_wait: args.registering.registry_wait,
        self_test_deadline: args.self_test_deadline,
        model_version: Some(version),
    };
    deploy(loaded, &component, opts, stop, |_| {}).await
}

/// `model check DIR...`: each directory's line, then its problems, a line each.
async fn check(dirs: &[PathBuf], runtime: &RuntimeArgs, deadline: Duration) -> Result<()> {
    let launcher = Launcher::new(runtime)?;
    let mut failed = 0;
    for dir in dirs {
        let (head, problems) = match check_dir(&launcher, dir, deadline).await {
            Verdict::Passes(summary) => {
                println!("{}: ok ({summary})", dir.display());
                continue;
            }
            Verdict::Manifest(problems) => (listed(&problems), vec![]),
            Verdict::Deploy { stage, reasons } => {
                (format!("a deploy refuses it: {stage}"), reasons)
            }
        };
        failed += 1;
        let head = head.replace('\n', "\n  - ");
        println!("{}: {head}", dir.display());
        for p in problems {
            println!("  - {p}");
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} model directories have problems", dirs.len());
    }
    Ok(())
}

/// `model init DIR --onnx --training`.
fn init_dir(args: &InitArgs) -> Result<()> {
    let said = init(&InitRequest {
        dir: &args.dir,
        onnx: args.onnx.as_deref(),
        training: &args.training,
        target: args.target.as_deref(),
        held_out: args.held_out.as_deref(),
        force: args.force,
    })?;
    println!("{said}");
    Ok(())
}
