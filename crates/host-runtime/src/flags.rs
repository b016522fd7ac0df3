//! The flags every command that runs components shares (limits, stores, variables, mounts,
//! AI models, the compilation cache), and what each becomes at start-up: the commands
//! flatten [`RuntimeArgs`] into their own, as Spin's layers each own their flags.

use crate::limits::{self, Limits};
use crate::state::Grants;
use anyhow::{Context, Result};
use clap::Args;
use host_capabilities::files::Mounts;
use host_capabilities::keyvalue::KeyValue;
use host_capabilities::llm::{AiGrant, AiModels};
use host_capabilities::outbound::Outbound;
use host_capabilities::variables::Variables;
use host_support::duration::parse_duration;
use keyvalue_stores::config::StoreConfig;
use std::path::PathBuf;
use std::time::Duration;

/// The `--help` heading of the switches that exist for the tests and the bench: shown, so
/// nobody meets them by surprise, and apart, so nobody takes them for the product's settings.
pub const TESTING: &str = "Testing and benchmarking (not for production)";

/// Options every command that runs components shares.
#[derive(Args, Debug, Clone)]
pub struct RuntimeArgs {
    /// Directory for persistent state: `sqlite_key_value.db` (readable by
    /// `spin up --state-dir` too) and, unless --cache-dir says otherwise, the compilation cache.
    #[arg(long, default_value = ".data")]
    pub data_dir: PathBuf,
    /// Where compiled components are cached (default: `runtime-host/` in the user's cache
    /// directory, `$XDG_CACHE_HOME` or `~/.cache`). Every host and data directory shares it:
    /// a large component (an ONNX model) compiles once per user, not once per data directory.
    #[arg(long, env = "RUNTIME_HOST_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Application variable given to the component, `name=value`; repeatable. Also read
    /// from `SPIN_VARIABLE_<NAME>` in the environment (the flag wins).
    #[arg(long = "variable", value_name = "NAME=VALUE")]
    pub variables: Vec<String>,
    /// A host directory the component may read at a guest path (read-only), as Spin's
    /// `files = [{ source, destination }]`; repeatable. E.g. `models/solubility:/model`.
    #[arg(long = "dir", value_name = "HOST_PATH:GUEST_PATH")]
    pub dirs: Vec<String>,
    /// An AI model the component may use through `fermyon:spin/llm`, as Spin's
    /// `ai_models = [...]`; repeatable. This host runs `all-minilm-l6-v2` (embeddings).
    #[arg(long = "ai-model", value_name = "NAME")]
    pub ai_models: Vec<String>,
    /// Where AI models' files are, one directory per model, as Spin's `.spin/ai-models`
    /// (default: `ai-models/` in the data directory).
    #[arg(long, env = "RUNTIME_HOST_AI_MODELS_DIR")]
    pub ai_models_dir: Option<PathBuf>,
    /// A host the component may send HTTP requests to, as an entry of Spin's
    /// `allowed_outbound_hosts`: `<scheme>://<host>[:<port>]`, e.g. `https://api.example.com`,
    /// `http://127.0.0.1:8080`, `https://*.example.com:443`; repeatable. Without it, none:
    /// every outgoing request is refused. A loopback, private, link-local or metadata address
    /// is reached only where named itself, never through a wildcard or a host name.
    #[arg(long = "allow-outbound", value_name = "URL")]
    pub allow_outbound: Vec<String>,
    /// Spin's runtime-config TOML: `[key_value_store.<label>]` with `type = "redis"` and
    /// `url`, or `type = "spin"` (SQLite) and `path`. The same file serves `spin up
    /// --runtime-config-file`. Without it, `default` is SQLite in the data directory.
    #[arg(long, value_name = "FILE", env = "RUNTIME_HOST_RUNTIME_CONFIG")]
    pub runtime_config_file: Option<PathBuf>,
    /// Make the store's compare-and-swap behave as that of Spin 4.0.2's `redis` store (every
    /// swap reports a conflict, written or not) or `sqlite` store (a swap from an absent key
    /// always writes): for testing that components stay correct on them.
    #[arg(long, value_name = "STORE", help_heading = TESTING)]
    pub simulate_spin_swap: Option<host_capabilities::keyvalue::SimulatedSwap>,
    /// Serve a component only once Cranelift's optimized code for it is ready. Without
    /// this, a component the compilation cache lacks answers at once from Winch's baseline
    /// code while Cranelift compiles it in the background, then moves to the optimized code.
    #[arg(long, conflicts_with = "baseline_only")]
    pub optimized_only: bool,
    /// Serve components from Winch's baseline code only, never moving to Cranelift's: for
    /// measuring what baseline code costs per request (the bench).
    #[arg(long, help_heading = TESTING)]
    pub baseline_only: bool,
    /// Longest a request may run, e.g. `30s`, `500ms`.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub deadline: Duration,
    /// Also serve the host's Prometheus metrics at `/metrics` on this address (its own
    /// listener, so no component route can collide; `up` serves them on its app port too).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Memory one request's component instance may use, in MiB.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_memory_mib: u32,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_body: usize,
    /// Request bodies the whole process holds while they arrive, in MiB (each counted at
    /// its declared length); a body past it is answered 503 `overloaded` and its connection
    /// closed. Requests without a body are never refused by it.
    #[arg(long, default_value_t = (limits::DEFAULT_MAX_HELD_BYTES >> 20) as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub max_held_bodies: u32,
    /// Request bodies the whole process receives at once; one more is answered 503
    /// `overloaded` and its connection closed.
    #[arg(long, default_value_t = limits::DEFAULT_MAX_RECEIVING as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_receiving: u32,
    /// Threads on which batches (requests with a body of 16 KiB or more) run, at a lower
    /// priority (nice 10), so short requests such as `/health` never queue behind them while
    /// batches still use every core left free. Default: one per core.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub batch_lanes: Option<u32>,
    /// Requests served at once; further ones get 503 `overloaded`.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_concurrency: u32,
    /// Requests one component instance serves, one after another, before it is replaced;
    /// 1 gives every request a fresh instance, as Spin does. An instance that traps, times
    /// out, hits its memory cap or answers 5xx is never reused.
    #[arg(long, default_value_t = limits::DEFAULT_INSTANCE_REUSE as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub instance_reuse: u32,
    /// How long an idle instance is kept for the next request, e.g. `5s`, `200ms`.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub instance_idle: Duration,
    /// Instances of one component alive at once (serving or idle); further requests wait
    /// for a free one within their deadline. Bounds memory for components that load a model
    /// into every instance. Default: 4 per CPU core; 0: one per request in flight.
    #[arg(long)]
    pub max_instances: Option<u32>,
}

impl RuntimeArgs {
    pub fn limits(&self) -> Limits {
        Limits {
            deadline: self.deadline,
            max_memory_bytes: (self.max_memory_mib as usize) << 20,
            max_body_bytes: self.max_body,
            max_concurrency: self.max_concurrency as usize,
            instance_reuse: self.instance_reuse as usize,
            instance_idle: self.instance_idle,
            max_instances: self
                .max_instances
                .map_or_else(limits::default_max_instances, |n| n as usize),
        }
    }

    /// The compilation cache: --cache-dir (or `RUNTIME_HOST_CACHE_DIR`), else one per user
    /// in the platform's cache directory (`$XDG_CACHE_HOME/runtime-host`, by default
    /// `~/.cache/runtime-host`, as wasmtime's own CLI keeps its cache), so every data directory
    /// and every test shares compiled components; `cache/` in the data directory only where
    /// there is no home. Made 0700 if missing; `Err` when it is not safe to run code from
    /// (someone else could write it: [`crate::cache::dir`]).
    ///
    /// A default that cannot be made (a system user's home is `/nonexistent`) falls back to
    /// `cache/` in the data directory, said in the log, as a missing home does; a directory
    /// given explicitly, or one that exists but is not safe, is never replaced by another.
    pub fn cache_dir(&self) -> Result<PathBuf> {
        let named = self.cache_dir_named();
        let explicit = self.cache_dir.is_some();
        match crate::cache::dir::trusted(&named) {
            Err(e) if !explicit && !named.exists() => {
                let fallback = self.data_dir.join("cache");
                tracing::warn!(
                    "the default compile cache cannot be made ({e:#}); caching in {} instead \
                     (set --cache-dir to choose)",
                    fallback.display()
                );
                crate::cache::dir::trusted(&fallback)
            }
            checked => checked,
        }
    }

    /// The cache directory as named, before it is checked ([`RuntimeArgs::cache_dir`]).
    fn cache_dir_named(&self) -> PathBuf {
        if let Some(dir) = &self.cache_dir {
            return dir.clone();
        }
        let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        non_empty("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| non_empty("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|base| base.join("runtime-host"))
            .unwrap_or_else(|| self.data_dir.join("cache"))
    }

    /// The process's AI models: --ai-models-dir, else `ai-models/` in the data directory.
    pub fn ai_models(&self) -> AiModels {
        AiModels::new(
            self.ai_models_dir
                .clone()
                .unwrap_or_else(|| self.data_dir.join("ai-models")),
        )
    }

    /// The key-value stores: the runtime config's labels over the embedded default.
    pub async fn key_value(&self) -> Result<KeyValue> {
        host_support::private::private_dir(&self.data_dir)?;
        let config = StoreConfig::load(self.runtime_config_file.as_deref(), &self.data_dir)?;
        let kv = KeyValue::open(&config).await?;
        Ok(match self.simulate_spin_swap {
            Some(like) => {
                tracing::warn!("--simulate-spin-swap: compare-and-swap behaves as on {like:?}");
                kv.with_simulated_swap(like)
            }
            None => kv,
        })
    }

    /// Variables from the environment and `--variable`, then `extra` (set by the command
    /// itself, so they win).
    pub fn variables(&self, extra: &[(&str, String)]) -> Result<Variables> {
        let mut assignments = self.variables.clone();
        assignments.extend(extra.iter().map(|(k, v)| format!("{k}={v}")));
        Variables::from_sources(std::env::vars(), &assignments)
    }

    /// What one component is granted, the one place grants are made: the stores `kv`; the
    /// variables of the environment and `--variable`, then `vars`; and the files, AI models
    /// and outbound hosts `access` names (with the command line's `--dir` mounts,
    /// `--ai-model`s and `--allow-outbound` hosts beside its own, unless it leaves them
    /// out), its AI models run by `ai`.
    pub fn grants(
        &self,
        kv: KeyValue,
        ai: &AiModels,
        vars: &[(&str, String)],
        access: &Access,
    ) -> Result<Grants> {
        let (mut mounts, mut ai_models) = (access.mounts.clone(), access.ai_models.clone());
        let mut outbound = access.outbound.clone();
        if access.with_flags {
            mounts.extend(self.dirs.iter().cloned());
            ai_models.extend(self.ai_models.iter().cloned());
            outbound.extend(self.allow_outbound.iter().cloned());
        }
        let grant = || -> Result<Grants> {
            Ok(Grants {
                kv,
                vars: self.variables(vars)?,
                files: Mounts::parse(&mounts)?,
                ai: AiGrant::new(ai.clone(), &ai_models)?,
                outbound: Outbound::parse(&outbound)?,
            })
        };
        grant().with_context(|| access.to_whom.clone())
    }
}

/// The files and AI models one component is to get beside its store and variables.
#[derive(Debug, Clone)]
pub struct Access {
    /// Its own mounts (`HOST_PATH:GUEST_PATH`), e.g. a model directory at `/model`.
    pub mounts: Vec<String>,
    /// Its own AI models, e.g. the embedding model minilm needs.
    pub ai_models: Vec<String>,
    /// Its own `allowed_outbound_hosts` (Spin's syntax), e.g. a model manifest's.
    pub outbound: Vec<String>,
    /// Whether the command line's `--dir` and `--ai-model` are granted too.
    pub with_flags: bool,
    /// Who it is, the context of an error (e.g. `model solubility`).
    pub to_whom: String,
}

impl Access {
    /// What the command line grants: its `--dir` mounts and `--ai-model`s.
    pub fn flags(to_whom: impl Into<String>) -> Self {
        Self::own(to_whom, Vec::new(), Vec::new())
    }

    /// `mounts` and `ai_models` of the component's own, beside the command line's.
    pub fn own(to_whom: impl Into<String>, mounts: Vec<String>, ai_models: Vec<String>) -> Self {
        Self {
            mounts,
            ai_models,
            outbound: Vec::new(),
            with_flags: true,
            to_whom: to_whom.into(),
        }
    }

    /// No files, AI models or outbound hosts, whatever the command line says: the stack's own
    /// services (registry, chat, console) read neither and call out to nothing (spin.toml
    /// declares them no `allowed_outbound_hosts`).
    pub fn nothing(to_whom: impl Into<String>) -> Self {
        Self {
            mounts: Vec::new(),
            ai_models: Vec::new(),
            outbound: Vec::new(),
            with_flags: false,
            to_whom: to_whom.into(),
        }
    }

    /// The same, with `hosts` of its own to send HTTP requests to (Spin's
    /// `allowed_outbound_hosts`).
    pub fn with_outbound(mut self, hosts: Vec<String>) -> Self {
        self.outbound = hosts;
        self
    }
}
