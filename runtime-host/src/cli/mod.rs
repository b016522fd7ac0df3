//! Command-line interface: the commands and their flags. The flags every command that
//! runs components shares, and what they become, are in [`runtime`].

mod runtime;
pub use runtime::RuntimeArgs;

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve one component over HTTP.
    Serve(ServeArgs),
    /// Run the port registry (interface C) with process health monitoring.
    Registry(RegistryArgs),
    /// Run one model deployment (interface B) by the v1.2 startup sequence: self-test,
    /// register, then serve on the assigned port.
    Model(ModelArgs),
    /// Run the whole local stack in one process: registry, chat (with sample dialogs) and
    /// every model, each registered on its own port.
    Up(UpArgs),
    /// Check running deployments (a model; optionally a registry and a chat service) against
    /// the v1.2 specification; exit status 0 only when every MUST rule passes.
    Check(edge_check::CheckArgs),
    /// Score a library (SMILES, CSV, TSV, SD or JSON lines file) through a model: in
    /// batches, in input order, with progress; Ctrl-C leaves a valid partial output that
    /// `--resume` continues.
    Predict(PredictCommand),
    /// Import or export chat dialogs through a running chat service.
    #[command(subcommand)]
    Chats(ChatsCommand),
    /// Write a model component pre-initialized with its files (`--dir`): a `.wasm` that
    /// starts with its model loaded, for Spin hosts (no files mount needed) or any host.
    Snapshot(SnapshotArgs),
    /// Compile components into the compilation cache ahead of their deployment, printing
    /// each one's size and compile time.
    Compile(CompileArgs),
    /// Snapshot and compile one component into the cache, as `up` has it done in a child
    /// process (see prepare_child.rs).
    #[command(hide = true)]
    Prepare(PrepareArgs),
}

#[derive(Args, Debug)]
pub struct CompileArgs {
    /// The components to compile.
    #[arg(required = true)]
    pub components: Vec<PathBuf>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// The component to snapshot (where it can be) and compile.
    pub component: PathBuf,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// The model component (it must export edge:model/preinit, as `model_sdk::preinit!`
    /// makes it), e.g. target/wasm32-wasip2/release/onnx_model.wasm.
    pub component: PathBuf,
    /// Where to write the pre-initialized component, e.g. solubility.wasm.
    #[arg(long, short)]
    pub output: PathBuf,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

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

/// The registry's settings: the same flags for `runtime-host registry` and `up`.
#[derive(Args, Debug, Clone)]
pub struct RegistryOptions {
    /// Lease length in seconds: a registration not renewed by a heartbeat within it is removed.
    #[arg(long, default_value_t = 120)]
    pub ttl: u64,
    /// Assignable ports, inclusive (must not include the host's own ports, e.g. 5000).
    #[arg(long, default_value = "5100-5999")]
    pub ports: String,
    /// Most live registrations one process (or one remote machine) may hold; 0 for no
    /// limit. Keeps one caller from taking the whole port range.
    #[arg(long, default_value_t = 64)]
    pub max_per_process: u32,
    /// Time between checks that registered processes are still running.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub monitor_interval: Duration,
    /// On a shared store (Redis), the registry keeps its keys under `hosts/<SCOPE>/`:
    /// registries with the same scope are one registry (one port space; each lists every
    /// registration), other scopes are not seen. Ports belong to a machine, so each machine
    /// gets its own scope. Default: this machine's hostname.
    #[arg(long, value_name = "SCOPE")]
    pub registry_scope: Option<String>,
}

#[derive(Args, Debug)]
pub struct ModelArgs {
    /// The model component (e.g. target/wasm32-wasip2/release/molprop.wasm).
    pub component: PathBuf,
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
    /// How long to keep trying the registry at start-up.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub registry_wait: Duration,
    /// Longest one try of the model's self-test may run (its own deadline, apart from
    /// --deadline: it runs every test example, while other start-ups may share the cores).
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub self_test_deadline: Duration,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

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
    /// Default: molprop from this build and the model directories in `models/`.
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// How often `--models DIR` is read again: models added there are deployed, changed ones
    /// upgraded (the new version takes over once it passed its self-test), removed ones
    /// stopped. `0s` turns watching off. Only with one deployment per model (`--copies 1`).
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub watch_interval: Duration,
    /// Deployments of each model (for scale and load tests).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub copies: u32,
    /// Address every service binds on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    #[command(flatten)]
    pub registry: RegistryOptions,
    /// Time between each model's heartbeats.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub heartbeat_interval: Duration,
    /// Longest one try of the model's self-test may run (its own deadline, apart from
    /// --deadline: it runs every test example, while other start-ups may share the cores).
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub self_test_deadline: Duration,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

#[derive(Args, Debug)]
pub struct PredictCommand {
    #[command(flatten)]
    pub args: screen::PredictArgs,
    /// A running deployment's base URL, e.g. http://127.0.0.1:3000/models/solubility.
    #[arg(long, conflicts_with = "model")]
    pub url: Option<String>,
    /// Run the model in this process instead: a component (.wasm), a model directory (with a
    /// model.toml, served by the ONNX component) or a built component's name (molprop, minilm).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Settings of a model run in this process (--model).
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

#[derive(Subcommand, Debug)]
pub enum ChatsCommand {
    /// Load dialogs from a JSON file (an array of dialogs, as `export` writes) into a running
    /// chat service. Dialogs whose id already exists are skipped.
    Import {
        /// The JSON file.
        file: PathBuf,
        /// Base URL of the chat service.
        #[arg(long, default_value = "http://127.0.0.1:8050")]
        url: String,
        /// The service's `chat_admin_token`.
        #[arg(long, env = "CHAT_ADMIN_TOKEN", hide_env_values = true)]
        token: String,
    },
    /// Write every dialog of a running chat service as a JSON array.
    Export {
        /// Base URL of the chat service.
        #[arg(long, default_value = "http://127.0.0.1:8050")]
        url: String,
        /// Write to this file instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

/// Parses `30`, `30s`, `500ms`, `2m`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration; try 30s or 500ms"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("unknown unit `{unit}` in `{s}`; use ms, s or m")),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("`{s}` must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("3h").is_err());
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
