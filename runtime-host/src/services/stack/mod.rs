//! The whole local stack in one process (`runtime-host up`): the registry (with process
//! monitoring), the chat service with sample dialogs, and every model, each deployed by the
//! v1.2 lifecycle on its own registered port (`services::deployments`). One engine serves
//! them all (compiled code and the instance pool are shared: one [`Launcher`]); each model
//! keeps its own registration, listener, key-value data, metrics and limits, and a model that
//! fails does not stop the others.
//!
//! The app port puts them all on one origin as `spin.toml` does, with the web console at `/`
//! (`services::app`), the host's metrics at `/metrics`, `/health`, the Open Inference
//! Protocol's server routes and the admin API under `/admin/` (`services::deployments`), and
//! the AI models' HTTP API (`services::llm_api`).
//!
//! A stop at any moment stops what has started so far ([`running`]), and compilation runs off
//! the async threads so a signal is seen at once.

mod models;
pub mod running;
pub mod startup;

use crate::services::app;
use crate::services::chat;
use crate::services::deployments::admin::{self, AdminRoute};
use crate::services::deployments::at_start::deploy_at_start;
use crate::services::deployments::deployer::Deployer;
use crate::services::deployments::health::HealthRoute;
use crate::services::deployments::live::LiveSet;
use crate::services::deployments::oip::{self, OipRoute};
use crate::services::deployments::watcher;
use crate::services::launch::{DRAIN_GRACE, Launcher, default_component};
use crate::services::llm_api::{self, LlmApi};
use crate::services::metrics_endpoint::{self, MetricsRoute};
use crate::services::model::api_key::{ApiKey, ApiKeyArgs};
use crate::services::registry::{self, RegistryOptions};
use anyhow::{Result, bail};
use host_core::capabilities::keyvalue::KeyValue;
use host_core::http::listener::PortBinding;
use host_core::http::router::AppRouter;
use host_core::http::slot::ServerSlot;
use host_core::runtime::flags::{Access, RuntimeArgs};
use host_core::support::private;
use host_core::support::token::Token;
use running::RunningStack;
use startup::{ModelOutcomes, StartupTable, wait_for_models};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Instances the shared pool holds at once, across all services.
const SHARED_SLOTS: u32 = 1024;

/// What the stack is asked to run (`up`'s flags, whose help says what each means).
pub struct StackSettings {
    pub host: IpAddr,
    pub registry_port: u16,
    pub chat_port: u16,
    pub models: Option<PathBuf>,
    pub watch_interval: Duration,
    pub copies: u32,
    pub registry: RegistryOptions,
    pub health_ignores_failed_models: bool,
    pub heartbeat_interval: Duration,
    pub registry_wait: Duration,
    pub self_test_deadline: Duration,
    pub api_key: ApiKeyArgs,
    pub runtime: RuntimeArgs,
}

/// What every part of the stack shares: one launcher (one engine: compiled code and the
/// instance pool; the AI models' weights; the limits), the stores, and what has started so
/// far.
pub struct Stack<'a> {
    settings: &'a StackSettings,
    launcher: Launcher,
    kv: KeyValue,
    running: RunningStack,
    /// Chat's admin token and the admin API's, read before anything starts: a placeholder or
    /// an empty token file stops `up` at once, not after the models compiled.
    chat: chat::Recipe,
    admin_token: Option<Token>,
    /// The AI models' HTTP API's token (`services::llm_api`), read likewise.
    llm_api_token: Option<Token>,
    /// The models directory: `--models DIR`, else the installation's (if it has one).
    models_dir: Option<PathBuf>,
    /// The key of the model routes (`--api-key-file`), read likewise.
    api_key: Option<ApiKey>,
}

/// What the stack's start came to, for the command to print.
pub struct StartReport {
    pub table: StartupTable,
    pub app_url: String,
    /// Models serving.
    pub serving: usize,
    /// The models directory watched, and how often.
    pub watching: Option<(PathBuf, Duration)>,
}

/// A service serving, as the stack's table and the app port need it.
struct StackService {
    url: String,
    slot: Arc<ServerSlot>,
}

impl<'a> Stack<'a> {
    pub async fn new(settings: &'a StackSettings) -> Result<Self> {
        let data_dir = &settings.runtime.data_dir;
        private::private_dir(data_dir)?;
        let chat = chat::Recipe::new(data_dir)?;
        let admin_token = Token::load("UP_ADMIN_TOKEN", data_dir, "admin_token")?;
        let llm_api_token = Token::load(llm_api::TOKEN_VARIABLE, data_dir, llm_api::TOKEN_FILE)?;
        let api_key = settings.api_key.load()?;
        Ok(Self {
            api_key,
            chat,
            admin_token: Some(admin_token),
            llm_api_token: Some(llm_api_token),
            launcher: Launcher::shared(&settings.runtime, SHARED_SLOTS)?,
            kv: settings.runtime.key_value().await?,
            running: RunningStack::new(),
            models_dir: models::models_dir(settings.models.as_deref()),
            settings,
        })
    }

    /// Starts the registry, chat, the models and the app port on `app_listening`; `Stopped`
    /// when a stop signal came first.
    pub async fn start(&mut self, app_listening: PortBinding) -> Result<StartReport> {
        let registry = self.start_registry().await?;
        let (chat, token_note) = self.start_chat().await?;
        // The table is printed whole once everything has started, apart from the log lines
        // the start-ups write meanwhile.
        let mut table = StartupTable::default();
        table.row("registry", &format!("{}/registry", registry.url), "ready");
        let chat_line = format!("{}/api/chats", chat.url);
        table.row("chat", &chat_line, &format!("ready ({token_note})"));
        let deployer = self.deployer(&registry.url);
        let models = self.deploy_models(&deployer, &mut table).await?;
        let serving = models.serving.len();
        let app = self.app_router(&registry, &chat, &models).await?;
        let live = self.live_set(deployer, &app, models).await;
        let app_url = self.serve_app(app_listening, &app);
        let console_line = format!("{app_url}/");
        let note = "ready (every service on one origin)";
        table.row("console", &console_line, note);
        self.answer_admin(&app, &live, &app_url, &mut table);
        self.answer_llm_api(&app, &app_url, &mut table);
        if let Some(key) = &self.api_key {
            let note = format!(
                "required on every model route but the probes ({})",
                key.note()
            );
            table.row("API key", &format!("{app_url}/models/<name>/..."), &note);
        }
        let watching = self.watch_models(live);
        // The ONNX component's baseline code, for the first model directory to come
        // (services/tiers.rs); a cache hit where a model directory used it already.
        if let Ok(onnx) = default_component("onnx_model") {
            self.launcher.cache_baseline_code(onnx);
        }
        Ok(StartReport {
            table,
            app_url,
            serving,
            watching,
        })
    }

    /// Stops what has started, in order (the models first: each unregisters), whatever
    /// happened, and waits for it.
    pub async fn stop(self) {
        self.running.stop().await;
    }

    /// The registry, by the same recipe as `runtime-host registry`.
    async fn start_registry(&mut self) -> Result<StackService> {
        let recipe = registry::Recipe::new(&self.settings.registry, self.kv.clone())?;
        let loaded = recipe
            .launch(&self.launcher, &default_component("registry")?)
            .await?;
        let listen = SocketAddr::new(self.settings.host, self.settings.registry_port);
        let service = recipe.bind(loaded, listen, "--registry-port").await?;
        let serving = StackService {
            url: service.local_url(),
            slot: service.slot.clone(),
        };
        let stop = self.running.service_stopper();
        self.running.service(tokio::spawn(service.run_until(stop)));
        Ok(serving)
    }

    /// Chat with its admin token and the sample dialogs; also says where the token is.
    async fn start_chat(&mut self) -> Result<(StackService, String)> {
        let recipe = &self.chat;
        let component = default_component("chat")?;
        let loaded = recipe
            .launch(&self.launcher, &component, self.kv.clone())
            .await?;
        let listen = SocketAddr::new(self.settings.host, self.settings.chat_port);
        let service = loaded.bind(listen, "--chat-port").await?;
        recipe.seed(&service.server).await?;
        let serving = StackService {
            url: service.local_url(),
            slot: service.slot.clone(),
        };
        let stop = self.running.service_stopper();
        self.running.service(tokio::spawn(service.run_until(stop)));
        Ok((serving, recipe.token_note()))
    }

    /// Every model of `--models` (or the defaults) deployed, each with its row in `table`.
    async fn deploy_models(
        &mut self,
        deployer: &Deployer,
        table: &mut StartupTable,
    ) -> Result<ModelOutcomes> {
        let settings = self.settings;
        let watched = self.watching();
        let dir = self.models_dir.as_deref();
        let installation = settings.models.is_none();
        let data_dir = &settings.runtime.data_dir;
        let at_start = models::models_at_start(installation, dir, data_dir, settings.copies)?;
        if at_start.specs.is_empty() && at_start.left_out.is_empty() && !watched {
            bail!(
                "no models in {}: put model components (.wasm) or ONNX model directories \
                 (with a model.toml) there, or let `up` watch it for models to come \
                 (--watch-interval above 0s, --copies 1)",
                dir.unwrap_or(Path::new("")).display()
            );
        }
        let tasks = self.running.model_tasks();
        let copies = settings.copies;
        let mut deployments =
            deploy_at_start(deployer, at_start.specs, copies, watched, tasks).await?;
        deployments.left_out.extend(at_start.left_out);
        wait_for_models(deployments, table).await
    }

    /// The app port's routes: the registry's, chat's, each model's and the web console
    /// (told which models the app serves under `/models/`), and the host's metrics.
    async fn app_router(
        &self,
        registry: &StackService,
        chat: &StackService,
        models: &ModelOutcomes,
    ) -> Result<Arc<AppRouter>> {
        let names: Vec<&str> = models.serving.iter().map(|(n, _)| n.as_str()).collect();
        let vars = [("models", names.join(","))];
        let grants =
            self.launcher
                .grants(self.kv.clone(), &vars, &Access::nothing("the console"))?;
        let console = default_component("console")?;
        let console = self.launcher.launch(&console, grants, Vec::new()).await?;
        let app = app::router(&registry.slot, &chat.slot, &console.slot, &models.serving);
        let app = Arc::new(app);
        // The console's list of models, kept up to date as models come and go.
        let config = app::ConsoleConfig {
            app: Arc::downgrade(&app),
            at_start: names.iter().map(|n| (*n).to_owned()).collect(),
        };
        app.answer_in_host(app::CONSOLE_CONFIG_PATH, Arc::new(config));
        // The host's Prometheus metrics: every deployment of this process, on one path no
        // interface uses (models are under /models/<name>/, with their JSON /metrics).
        app.answer_in_host(metrics_endpoint::PATH, Arc::new(MetricsRoute));
        Ok(app)
    }

    /// The deployments while the stack runs, holding those started (with one deployment per
    /// model; with more, those that failed are only counted by `/health`), then `/health`
    /// and the Open Inference Protocol's server routes on `app`, which read them.
    async fn live_set(
        &self,
        deployer: Deployer,
        app: &Arc<AppRouter>,
        models: ModelOutcomes,
    ) -> Arc<LiveSet> {
        let tasks = self.running.model_tasks().clone();
        let live = LiveSet::new(deployer, app.clone(), tasks);
        let mut failed_at_start = Vec::new();
        if self.settings.copies == 1 {
            for (adopted, addr) in models.adopted {
                live.adopt(adopted, addr).await;
            }
            // Listed with why, so the admin API shows them and a reload retries them.
            for failed in models.failed {
                live.record_failure(failed).await;
            }
            // The admin API's deployments as they came back (one whose name a model of the
            // directory took stays in the list, not deployed, as the log said).
            live.keep_api_deployments().await;
        } else {
            let failed = models.failed.into_iter().map(|f| (f.name, f.why));
            failed_at_start.extend(failed);
        }
        // For load balancers: ready while every configured model serves (docs/deploy.md).
        let health = Arc::new(HealthRoute {
            live: live.clone(),
            failed_at_start,
            ignore_failed: self.settings.health_ignores_failed_models,
            optional: models::optional_models(
                self.settings.models.is_some(),
                self.launcher.ai_models(),
            ),
        });
        app.answer_in_host(app::HEALTH_PATH, health.clone());
        // The Open Inference Protocol's server routes, below each model's /v2/models/<name>.
        app.answer_unclaimed(oip::ROUTE, Arc::new(OipRoute::new(health)));
        // A model name nobody serves: the 404 names every model routed now.
        let unknown = app::UnknownModel {
            app: Arc::downgrade(app),
        };
        app.answer_unclaimed(app::MODELS_ROUTE, Arc::new(unknown));
        live
    }

    /// Serves `app` on `listening` until the stack stops; its URL.
    fn serve_app(&mut self, listening: PortBinding, app: &Arc<AppRouter>) -> String {
        let url = listening.url();
        let drain = self.launcher.limits().deadline + DRAIN_GRACE;
        let stop = self.running.service_stopper();
        let serving = listening.serve(app.clone(), stop, drain);
        self.running.service(tokio::spawn(serving));
        url
    }

    /// The admin API on `app`, with its row in `table`.
    fn answer_admin(
        &mut self,
        app: &AppRouter,
        live: &Arc<LiveSet>,
        app_url: &str,
        table: &mut StartupTable,
    ) {
        let token = self.admin_token.take().expect("the token is used once");
        let admin = Arc::new(AdminRoute::new(live.clone(), token));
        let status = format!("ready ({})", admin.token_note());
        table.row(
            "admin API",
            &format!("{app_url}/admin/deployments"),
            &status,
        );
        app.answer_in_host(admin::ROUTE, admin);
    }

    /// The AI models for OpenAI's clients and Spin's remote LLM protocol on `app`, with its
    /// row in `table`.
    fn answer_llm_api(&mut self, app: &AppRouter, app_url: &str, table: &mut StartupTable) {
        let token = self.llm_api_token.take().expect("the token is used once");
        let ai = self.launcher.ai_models().clone();
        let llm = Arc::new(LlmApi::new(ai, token, self.launcher.limits().deadline));
        table.row(
            "LLM API",
            &format!("{app_url}/v1/models"),
            &llm.table_note(),
        );
        for route in llm_api::ROUTES {
            app.answer_in_host(route, llm.clone());
        }
    }

    /// Starts watching the models directory when it is watched; what and how often.
    fn watch_models(&self, live: Arc<LiveSet>) -> Option<(PathBuf, Duration)> {
        let dir = self.models_dir.clone().filter(|_| self.watching())?;
        let every = self.settings.watch_interval;
        let stop = self.running.model_stopper();
        tokio::spawn(watcher::watch(dir.clone(), live, every, stop));
        Some((dir, every))
    }

    /// What deploying a model needs, against the registry at `registry_url`.
    fn deployer(&self, registry_url: &str) -> Deployer {
        let settings = self.settings;
        Deployer {
            launcher: self.launcher.clone(),
            kv: self.kv.clone(),
            host: settings.host,
            heartbeat_interval: settings.heartbeat_interval,
            registry_wait: settings.registry_wait,
            self_test_deadline: settings.self_test_deadline,
            registry_scope: settings.registry.registry_scope.clone(),
            registry_url: registry_url.to_owned(),
            api_key: self.api_key.clone(),
        }
    }

    /// Whether the models directory (`--models DIR`, else the installation's) is watched
    /// for changes (one deployment per model, a non-zero `--watch-interval`).
    fn watching(&self) -> bool {
        let settings = self.settings;
        self.models_dir.is_some() && settings.copies == 1 && !settings.watch_interval.is_zero()
    }
}
