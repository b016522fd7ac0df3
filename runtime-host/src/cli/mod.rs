//! Layer 8, the command line: the commands and the flags every command shares. Each
//! command's own flags are in its module ([`crate::commands`]), the flags of running
//! components in `host_core::runtime::flags`; this module puts them together.

use crate::commands::{
    chats, check, compile, model, predict, prepare, registry, serve, snapshot, up,
};
use anyhow::Result;
use clap::{Parser, Subcommand};
use host_core::http::settings::{HttpSettings, default_batch_lanes};
use host_core::runtime::flags::RuntimeArgs;
use host_core::support::log_writer::LogFormat;
use host_core::support::private;

#[derive(Parser, Debug)]
#[command(
    name = "runtime-host",
    version,
    about = "Native wasmtime host for the chat (A), model runtime (B) and port registry (C) components",
    long_about = "Serves WebAssembly components that export wasi:http/incoming-handler@0.2.x \
                  (built with spin-sdk 5.x), giving them WASI 0.2, wasi-http, wasi:keyvalue \
                  persisted in SQLite and application variables, with warm instances reused serially."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// A further name this machine answers to on loopback listeners (beside localhost,
    /// loopback addresses and its hostname); repeatable. Requests naming any other `Host`
    /// are refused there, so a web page cannot reach the services by rebinding its DNS.
    #[arg(long = "allowed-host", global = true, value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// How log lines are written (on stderr): `text` for people, or `json` for a log
    /// pipeline: one JSON object a line, every line of the process; a request's line has its
    /// `request_id` (also answered in `x-request-id`), method, route, path, model, status,
    /// duration_ms, bytes_in, bytes_out, port and peer.
    #[arg(long, global = true, value_enum, default_value_t = LogFormatFlag::Text)]
    pub log_format: LogFormatFlag,
}

/// `--log-format`'s values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormatFlag {
    Text,
    Json,
}

impl From<LogFormatFlag> for LogFormat {
    fn from(flag: LogFormatFlag) -> Self {
        match flag {
            LogFormatFlag::Text => LogFormat::Text,
            LogFormatFlag::Json => LogFormat::Json,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve one component over HTTP.
    Serve(serve::ServeArgs),
    /// Run the port registry (interface C) with process health monitoring.
    Registry(registry::RegistryArgs),
    /// Run one model deployment (interface B) by the v1.2 startup sequence: self-test,
    /// register, then serve on the assigned port.
    Model(model::ModelArgs),
    /// Run the whole local stack in one process: registry, chat (with sample dialogs) and
    /// every model, each registered on its own port.
    Up(up::UpArgs),
    /// Check running deployments (a model; optionally a registry and a chat service) against
    /// the v1.2 specification; exit status 0 only when every MUST rule passes.
    Check(check::CheckArgs),
    /// Score a library (SMILES, CSV, TSV, SD or JSON lines file) through a model: in
    /// batches, in input order, with progress; Ctrl-C leaves a valid partial output that
    /// `--resume` continues.
    Predict(predict::PredictCommand),
    /// Import or export chat dialogs through a running chat service.
    #[command(subcommand)]
    Chats(chats::ChatsCommand),
    /// Write a model component pre-initialized with its files (`--dir`): a `.wasm` that
    /// starts with its model loaded, for Spin hosts (no files mount needed) or any host.
    Snapshot(snapshot::SnapshotArgs),
    /// Compile components into the cache ahead of their deployment, printing each one's
    /// size and compile time.
    Compile(compile::CompileArgs),
    /// Snapshot and compile one component into the cache, as `up` has it done in a child
    /// process (see `host_core::runtime::preinit::child`).
    #[command(hide = true)]
    Prepare(prepare::PrepareArgs),
}

impl Cli {
    /// The HTTP settings of the whole process, from the global flags and the flags of the
    /// command's runtime (defaults for a command that runs no components).
    pub fn http_settings(&self) -> HttpSettings {
        let mut settings = HttpSettings {
            allowed_hosts: self.allowed_hosts.clone(),
            ..HttpSettings::default()
        };
        if let Some(runtime) = self.command.runtime() {
            settings.max_held_bytes = (runtime.max_held_bodies as usize) << 20;
            settings.max_receiving = runtime.max_receiving as usize;
            settings.batch_lanes = runtime
                .batch_lanes
                .map_or_else(default_batch_lanes, |n| n as usize);
        }
        settings
    }
}

impl Command {
    /// The flags of running components, for a command that runs them.
    fn runtime(&self) -> Option<&RuntimeArgs> {
        match self {
            Command::Serve(args) => Some(&args.runtime),
            Command::Registry(args) => Some(&args.runtime),
            Command::Model(args) => match &args.action {
                None => Some(&args.runtime),
                Some(model::ModelAction::Check(check)) => Some(&check.runtime),
                Some(model::ModelAction::Init(_)) => None,
            },
            Command::Up(args) => Some(&args.runtime),
            Command::Predict(args) => Some(&args.runtime),
            Command::Snapshot(args) => Some(&args.runtime),
            Command::Compile(args) => Some(&args.runtime),
            Command::Prepare(args) => Some(&args.runtime),
            Command::Check(_) | Command::Chats(_) => None,
        }
    }

    /// Runs the command; `Err` says why it failed (a `Stopped` one was stopped in order).
    pub async fn run(self) -> Result<()> {
        if self.serves() {
            private::keep_new_files_private();
        }
        match self {
            Command::Serve(args) => serve::run(args).await,
            Command::Registry(args) => registry::run(args).await,
            Command::Model(args) => model::run(args).await,
            Command::Up(args) => up::run(args).await,
            Command::Check(args) => check::run(args).await,
            Command::Predict(args) => predict::run(args).await,
            Command::Chats(command) => chats::run(command).await,
            Command::Snapshot(args) => snapshot::run(args).await,
            Command::Compile(args) => compile::run(&args),
            Command::Prepare(args) => prepare::run(args).await,
        }
    }

    /// Whether the command runs services, whose data (the store, tokens, snapshots, the
    /// compiled cache) is its user's alone; the client commands write files a user asked for,
    /// with the user's own umask.
    fn serves(&self) -> bool {
        match self {
            Command::Serve(_) | Command::Registry(_) | Command::Model(_) | Command::Up(_) => true,
            Command::Compile(_) | Command::Prepare(_) => true,
            Command::Check(_) | Command::Predict(_) | Command::Chats(_) => false,
            Command::Snapshot(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// The child other commands leave cold work to is started with a command line that
    /// `runtime-host prepare` reads as meant.
    #[test]
    fn the_prepare_child_is_started_with_arguments_prepare_reads() {
        use host_core::capabilities::files::Mounts;
        use host_core::runtime::preinit::child::ChildJob;
        let dir = std::env::temp_dir();
        let mounts = Mounts::parse(&[format!("{}:/model", dir.display())]).unwrap();
        let job = ChildJob {
            component: std::path::Path::new("/c/onnx_model.wasm"),
            mounts: &mounts,
            max_memory_mib: 256,
            cache_dir: std::path::Path::new("/cache"),
        };
        let args = crate::services::launch::prepare_args(&job);
        let cli = Cli::try_parse_from(std::iter::once("runtime-host".into()).chain(args)).unwrap();
        let Command::Prepare(prepare) = cli.command else {
            panic!("not the prepare command: {:?}", cli.command)
        };
        assert_eq!(prepare.component, job.component);
        assert_eq!(prepare.runtime.cache_dir.as_deref(), Some(job.cache_dir));
        assert_eq!(prepare.runtime.max_memory_mib, 256);
        assert_eq!(prepare.runtime.dirs, [format!("{}:/model", dir.display())]);
    }
}
