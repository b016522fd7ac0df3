//! `runtime-host up`: the whole local stack in one process (`services::stack`): the registry,
//! chat with sample dialogs, and every model (`services::deployments`), all on one app port
//! with the web console, `/health`, `/metrics` and the admin API.
//!
//! Ctrl-C (or SIGTERM) stops the models first (each unregisters), then the registry, chat and
//! the app port, at any moment: during start-up it stops what has started so far.

use crate::services::announce::announce;
use crate::services::model::api_key::ApiKeyArgs;
use crate::services::model::registration::RegistryWait;
use crate::services::registry::{RegistryOptions, check_ports};
use crate::services::stack::{Stack, StackSettings, StartReport};
use anyhow::Result;
use clap::Args;
use host_core::http::listener::PortBinding;
use host_core::runtime::flags::RuntimeArgs;
use host_core::support::duration::{parse_duration, parse_duration_or_off};
use host_core::support::signals;
use host_core::support::systemd;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct UpArgs {
    /// Port of the registry.
    #[arg(long, default_value_t = 5000)]
    pub registry_port: u16,
    /// Port of the chat service.
    #[arg(long, default_value_t = 8050)]
    pub chat_port: u16,
    /// Port of the app: every service on one origin, routed by path as in `spin.toml`
    /// (the console at `/`, chat under `/api/`, the registry's routes, each model under
    /// `/models/<name>/`). 0 picks a free port.
    #[arg(long, default_value_t = 3000)]
    pub app_port: u16,
    /// Directory of models: every `.wasm` in it is deployed as a model component, and every
    /// subdirectory holding a `model.toml` with the ONNX model component, mounted at /model.
    /// Default: molprop, minilm and textgen from this installation, and the model
    /// directories of its models directory (`<prefix>/lib/runtime-host/models`, or the
    /// repository's `models/` for a cargo build); never the working directory's.
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// How often the models directory (`--models DIR`, or the installation's by default) is
    /// read again: models added there are deployed, changed ones upgraded (the new version
    /// takes over once it passed its self-test), removed ones stopped. `0s` turns watching
    /// off. Only with one deployment per model (`--copies 1`).
    #[arg(long, default_value = "2s", value_parser = parse_duration_or_off)]
    pub watch_interval: Duration,
    /// Deployments of each model (for scale and load tests).
    #[arg(long, default_value_t = 1, help_heading = host_core::runtime::flags::TESTING, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub copies: u32,
    /// Address every service binds on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    #[command(flatten)]
    pub registry: RegistryOptions,
    /// `GET /health` on the app port answers 200 even while a configured model failed to
    /// start (by default it answers 503 naming that model, so a load balancer takes the host
    /// out of rotation): for a host whose models are optional.
    #[arg(long)]
    pub health_ignores_failed_models: bool,
    /// Time between each model's heartbeats.
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

pub async fn run(args: UpArgs) -> Result<()> {
    check_ports(
        &args.registry.ports,
        &[
            (args.registry_port, "the registry listens on"),
            (args.chat_port, "chat listens on"),
            (args.app_port, "the app listens on"),
        ],
    )?;
    announce(args.runtime.metrics_listen).await?;
    let app_addr = SocketAddr::new(args.host, args.app_port);
    let settings = settings(args);
    let mut stack = Stack::new(&settings).await?;
    // Bound first, so a port in use stops `up` before anything registers.
    let app = PortBinding::bind(app_addr, "--app-port").await?;
    let outcome = stack.start(app).await;
    if let Ok(report) = &outcome {
        print(report);
        systemd::ready();
        signals::wait().await;
        systemd::stopping();
    }
    // What started stops in order, whatever happened: the models unregister. A stop during
    // start-up comes back as `Stopped`, which is no failure.
    stack.stop().await;
    outcome.map(|_| ())
}

fn settings(args: UpArgs) -> StackSettings {
    StackSettings {
        host: args.host,
        registry_port: args.registry_port,
        chat_port: args.chat_port,
        models: args.models,
        watch_interval: args.watch_interval,
        copies: args.copies,
        registry: args.registry,
        health_ignores_failed_models: args.health_ignores_failed_models,
        heartbeat_interval: args.heartbeat_interval,
        registry_wait: args.registering.registry_wait,
        self_test_deadline: args.self_test_deadline,
        api_key: args.api_key,
        runtime: args.runtime,
    }
}

/// The table of services, then the line scripts and tests wait for.
fn print(report: &StartReport) {
    println!("{}", report.table);
    let (serving, app_url) = (report.serving, &report.app_url);
    println!(
        "  {serving} model(s) serving. Open {app_url}/ in a browser. Ctrl-C stops everything.\n"
    );
    if let Some((dir, every)) = &report.watching {
        println!(
            "  watching {} every {every:?}: models added, changed or removed there are deployed, upgraded or removed\n",
            dir.display()
        );
    }
    println!("stack ready");
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Up {
        #[command(flatten)]
        up: UpArgs,
    }

    /// `up --help` names every model deployed without `--models` (it once left minilm out).
    #[test]
    fn the_help_names_every_default_model() {
        use clap::CommandFactory;
        let help = Up::command().render_long_help().to_string();
        for name in crate::services::model::spec::DEFAULT_COMPONENTS {
            assert!(help.contains(name), "{name} missing from:\n{help}");
        }
    }

    #[test]
    fn up_takes_the_registry_wait_as_model_does() {
        let wait = |args: &[&str]| {
            Up::try_parse_from(args)
                .unwrap()
                .up
                .registering
                .registry_wait
        };
        assert_eq!(wait(&["up"]), Duration::from_secs(10));
        assert_eq!(
            wait(&["up", "--registry-wait", "3s"]),
            Duration::from_secs(3)
        );
    }
}
