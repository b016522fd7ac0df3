//! `runtime-host up`: the whole local stack in one process: the registry (with process
//! monitoring), the chat service with sample dialogs, and every model, each model deployed by
//! the v1.2 lifecycle on its own registered port. One engine serves them all (compiled code
//! and the instance pool are shared: one [`Launcher`]); each model keeps its own
//! registration, listener, key-value data, metrics and limits, and a model that fails does
//! not stop the others.
//!
//! The app port puts them all on one origin as `spin.toml` does, with the web console at `/`
//! (`services::app`), the host's metrics at `/metrics` and the admin API under `/admin/`
//! ([`admin`]).
//!
//! Ctrl-C (or SIGTERM) stops the models first (each unregisters), then the registry, chat and
//! the app port, at any moment: during start-up it stops what has started so far
//! ([`started`]), and compilation runs off the async threads so a signal is seen at once.

mod admin;
mod deploy;
mod health;
mod live;
mod oip;
mod started;
mod table;
mod watch;

use crate::services::announce::announce;
use crate::services::app;
use crate::services::chat;
use crate::services::launch::{DRAIN_GRACE, Launcher, default_component};
use crate::services::llm_api::{self, LlmApi};
use crate::services::metrics_endpoint::{self, MetricsRoute};
use crate::services::model::spec::model_specs;
use crate::services::registry::{self, RegistryOptions, check_ports};
use anyhow::{Result, bail};
use clap::Args;
use deploy::Deployer;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::http::listener::Listening;
use host_core::http::slot::ServerSlot;
use host_core::runtime::flags::{Access, RuntimeArgs};
use host_core::support::duration::{parse_duration, parse_duration_or_off};
use host_core::support::private;
use host_core::support::signals;
use host_core::support::systemd;
use host_core::support::token::Token;
use live::Live;
use started::Started;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use table::{Table, wait_for_models};

/// Instances the shared pool holds at once, across all services.
const SHARED_SLOTS: u32 = 1024;

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
    /// Default: molprop, minilm and textgen from this installation and its model directories
    /// (`<prefix>/lib/runtime-host/models`, or the repository's `models/` for a cargo build);
    /// never the working directory's.
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// How often `--models DIR` is read again: models added there are deployed, changed ones
    /// upgraded (the new version takes over once it passed its self-test), removed ones
    /// stopped. `0s` turns watching off. Only with one deployment per model (`--copies 1`).
    #[arg(long, default_value = "2s", value_parser = parse_duration_or_off)]
    pub watch_interval: Duration,
    /// Deployments of each model (for scale and load tests).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=500))]
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
    /// Longest one try of the model's self-test may run (its own deadline, apart from
    /// --deadline: it runs every test example, while other start-ups may share the cores).
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub self_test_deadline: Duration,
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
    let mut stack = Stack::new(&args).await?;
    // Bound first, so a port in use stops `up` before anything registers.
    let app_addr = SocketAddr::new(args.host, args.app_port);
    let app = Listening::bind(app_addr, "--app-port").await?;
    let outcome = stack.start(app).await;
    if outcome.is_ok() {
        systemd::ready();
        signals::wait().await;
        systemd::stopping();
    }
    // What started stops in order, whatever happened: the models unregister. A stop during
    // start-up comes back as `Stopped`, which is no failure.
    stack.started.stop().await;
    outcome
}

/// What every part of the stack shares: one launcher (one engine: compiled code and the
/// instance pool; the AI models' weights; the limits), the stores, and what has started so
/// far.
struct Stack<'a> {
    args: &'a UpArgs,
    launcher: Launcher,
    kv: KeyValue,
    started: Started,
    /// Chat's admin token and the admin API's, read before anything starts: a placeholder or
    /// an empty token file stops `up` at once, not after the models compiled.
    chat: chat::Recipe,
    admin_token: Option<Token>,
    /// The AI models' HTTP API's token (`services::llm_api`), read likewise.
    llm_api_token: Option<Token>,
}

/// A service serving, as the stack's table and the app port need it.
struct Serving {
    url: String,
    slot: Arc<ServerSlot>,
}

impl<'a> Stack<'a> {
    async fn new(args: &'a UpArgs) -> Result<Self> {
        private::private_dir(&args.runtime.data_dir)?;
        let data_dir = &args.runtime.data_dir;
        let chat = chat::Recipe::new(data_dir)?;
        let admin_token = Token::load("UP_ADMIN_TOKEN", data_dir, "admin_token")?;
        let llm_api_token = Token::load(llm_api::TOKEN_VARIABLE, data_dir, llm_api::TOKEN_FILE)?;
        Ok(Self {
            chat,
            admin_token: Some(admin_token),
            llm_api_token: Some(llm_api_token),
            launcher: Launcher::shared(&args.runtime, SHARED_SLOTS)?,
            kv: args.runtime.key_value().await?,
            started: Started::new(),
            args,
        })
    }

    /// Starts the registry, chat, the models and the app port, and prints the table;
    /// `Stopped` when a stop signal came first.
    async fn start(&mut self, app_listening: Listening) -> Result<()> {
        let registry = self.start_registry().await?;
        let (chat, token_note) = self.start_chat().await?;
        let deployer = self.deployer(&registry.url);
        let watched = self.watching();
        let specs = model_specs(self.args.models.as_deref())?;
        if specs.is_empty() && !watched {
            bail!(
                "no models in {}: put model components (.wasm) or ONNX model directories \
                 (with a model.toml) there, or let `up` watch it for models to come \
                 (--watch-interval above 0s, --copies 1)",
                self.args
                    .models
                    .as_deref()
                    .unwrap_or(Path::new(""))
                    .display()
            );
        }
        let copies = self.args.copies;
        let deployments =
            deploy::at_start(&deployer, specs, copies, watched, &mut self.started).await?;
        // The table is printed whole once everything has started, apart from the log lines
        // the start-ups write meanwhile.
        let mut table = Table::default();
        table.row("registry", &format!("{}/registry", registry.url), "ready");
        let chat_line = format!("{}/api/chats", chat.url);
        table.row("chat", &chat_line, &format!("ready ({token_note})"));
        let models = wait_for_models(deployments, &mut table).await?;
        // The web console, told which models the app serves under `/models/`.
        let names: Vec<&str> = models.serving.iter().map(|(n, _)| n.as_str()).collect();
        let vars = [("models", names.join(","))];
        let grants =
            self.launcher
                .grants(self.kv.clone(), &vars, &Access::nothing("the console"))?;
        let console = default_component("console")?;
        let console = self.launcher.launch(&console, grants, Vec::new()).await?;
        let app = Arc::new(app::router(
            &registry.slot,
            &chat.slot,
            &console.slot,
            &models.serving,
        ));
        // The host's Prometheus metrics: every deployment of this process, on one path no
        // interface uses (models are under /models/<name>/, with their JSON /metrics).
        app.answer_in_host(metrics_endpoint::PATH, Arc::new(MetricsRoute));
        let live = Live::new(
            deployer,
            app.clone(),
            self.started.model_tasks(),
            self.started.model_stop_signal(),
        );
        let origin = if watched {
            live::Origin::Directory
        } else {
            live::Origin::Api
        };
        // With one deployment per model, `live` holds those that failed; else they are
        // listed here.
        let failed_at_start = match copies {
            1 => Vec::new(),
            _ => models
                .failed
                .iter()
                .map(|f| (f.name.clone(), f.why.clone()))
                .collect(),
        };
        if copies == 1 {
            for (a, addr) in models.adopted {
                live.adopt(a, addr, origin).await;
            }
            // Listed with why, so the admin API shows them and a reload retries them.
            for failed in models.failed {
                live.record_failure(failed, origin).await;
            }
        }
        // For load balancers: ready while every configured model serves (docs/deploy.md).
        let health = health::Health {
            live: live.clone(),
            failed_at_start,
            ignore_failed: self.args.health_ignores_failed_models,
            optional: self.optional_models(),
        };
        let health = Arc::new(health);
        app.answer_in_host(app::HEALTH_PATH, health.clone());
        // The Open Inference Protocol's server routes, below each model's /v2/models/<name>.
        app.answer_unclaimed(oip::ROUTE, Arc::new(oip::Oip::new(health)));
        let app_url = app_listening.url();
        let drain = self.launcher.limits().deadline + DRAIN_GRACE;
        let stop = self.started.service_stopper();
        self.started
            .service(tokio::spawn(app_listening.serve(app.clone(), stop, drain)));
        let console_line = format!("{app_url}/");
        table.row(
            "console",
            &console_line,
            "ready (every service on one origin)",
        );
        let token = self
            .admin_token
            .take()
            .expect("the admin token is used once");
        let admin = Arc::new(admin::Admin::new(live.clone(), token));
        let admin_line = format!("{app_url}/admin/deployments");
        table.row(
            "admin API",
            &admin_line,
            &format!("ready ({})", admin.token_note()),
        );
        app.answer_in_host(admin::ROUTE, admin);
        // The AI models for OpenAI's clients and Spin's remote LLM protocol.
        let token = self.llm_api_token.take().expect("the token is used once");
        let ai = self.launcher.ai_models().clone();
        let llm = Arc::new(LlmApi::new(ai, token, self.launcher.limits().deadline));
        let llm_line = format!("{app_url}/v1/models");
        table.row("LLM API", &llm_line, &llm.table_note());
        for route in llm_api::ROUTES {
            app.answer_in_host(route, llm.clone());
        }
        table.print();
        println!(
            "  {} model(s) serving. Open {app_url}/ in a browser. Ctrl-C stops everything.\n",
            models.serving.len()
        );
        if let Some(dir) = self.args.models.clone().filter(|_| watched) {
            let every = self.args.watch_interval;
            println!(
                "  watching {} every {every:?}: models added, changed or removed there are deployed, upgraded or removed\n",
                dir.display()
            );
            tokio::spawn(watch::watch(dir, live, every, self.started.model_stopper()));
        }
        // The ONNX component's baseline code, for the first model directory to come
        // (services/tiers.rs); a cache hit where a model directory used it already.
        if let Ok(onnx) = default_component("onnx_model") {
            self.launcher.cache_baseline_code(onnx);
        }
        // Scripts and tests wait for this line.
        println!("stack ready");
        Ok(())
    }

    /// The registry, by the same recipe as `runtime-host registry`.
    async fn start_registry(&mut self) -> Result<Serving> {
        let recipe = registry::Recipe::new(&self.args.registry, self.kv.clone())?;
        let loaded = recipe
            .launch(&self.launcher, &default_component("registry")?)
            .await?;
        let listen = SocketAddr::new(self.args.host, self.args.registry_port);
        let service = recipe.bind(loaded, listen, "--registry-port").await?;
        let serving = Serving {
            url: service.local_url(),
            slot: service.slot.clone(),
        };
        let stop = self.started.service_stopper();
        self.started.service(tokio::spawn(service.run_until(stop)));
        Ok(serving)
    }

    /// Chat with its admin token and the sample dialogs; also says where the token is.
    async fn start_chat(&mut self) -> Result<(Serving, String)> {
        let recipe = &self.chat;
        let component = default_component("chat")?;
        let loaded = recipe
            .launch(&self.launcher, &component, self.kv.clone())
            .await?;
        let listen = SocketAddr::new(self.args.host, self.args.chat_port);
        let service = loaded.bind(listen, "--chat-port").await?;
        recipe.seed(&service.server).await?;
        let serving = Serving {
            url: service.local_url(),
            slot: service.slot.clone(),
        };
        let stop = self.started.service_stopper();
        self.started.service(tokio::spawn(service.run_until(stop)));
        Ok((serving, recipe.token_note()))
    }

    /// What deploying a model needs, against the registry at `registry_url`.
    fn deployer(&self, registry_url: &str) -> Deployer {
        let args = self.args;
        Deployer {
            launcher: self.launcher.clone(),
            kv: self.kv.clone(),
            host: args.host,
            heartbeat_interval: args.heartbeat_interval,
            self_test_deadline: args.self_test_deadline,
            registry_scope: args.registry.registry_scope.clone(),
            registry_url: registry_url.to_owned(),
        }
    }

    /// The models `/health` does not wait for: without `--models`, minilm while the
    /// embedding model's files are not installed, and textgen while the language model's
    /// are not (the table says how to add them; nobody asked for them).
    fn optional_models(&self) -> Vec<String> {
        let needs = [
            ("minilm", edge_api::embedding::MODEL),
            ("textgen", edge_api::language_model::MODEL),
        ];
        let ai = self.launcher.ai_models();
        needs
            .into_iter()
            .filter(|(_, model)| self.args.models.is_none() && !ai.installed(model))
            .map(|(name, _)| name.to_owned())
            .collect()
    }

    /// Whether `--models DIR` is watched for changes (one deployment per model, a non-zero
    /// `--watch-interval`).
    fn watching(&self) -> bool {
        self.args.models.is_some() && self.args.copies == 1 && !self.args.watch_interval.is_zero()
    }
}
