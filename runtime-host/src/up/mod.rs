//! `runtime-host up`: the whole local stack in one process — the registry (with process
//! monitoring), the chat service with sample dialogs, and every model, each model deployed by
//! the v1.2 lifecycle on its own registered port. One engine serves them all (compiled code
//! and the instance pool are shared); each model keeps its own registration, listener,
//! key-value data, metrics and limits, and a model that fails does not stop the others.
//!
//! The app port puts them all on one origin as `spin.toml` does, with the web console at `/`
//! ([`crate::app`]).
//!
//! Ctrl-C (or SIGTERM) stops the models first (each unregisters), then the registry, chat and
//! the app port, at any moment: during start-up it stops what has started so far
//! ([`started`]), and compilation runs off the async threads so a signal is seen at once.

use crate::app::AppRouter;
use crate::cli::UpArgs;
use crate::files::Mounts;
use crate::keyvalue::KeyValue;
use crate::limits::Limits;
use crate::llm::{AiGrant, AiModels};
use crate::preinit::ColdWork;
use crate::serve::{DRAIN_GRACE, Loaded, default_component, print_attribution, shutdown_signal};
use crate::signals::unless_stopped;
use crate::slot::ServerSlot;
use crate::state::{Grants, InstanceState};
use crate::variables::Variables;
use anyhow::{Context, Result};
use deploy::Deployments;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

pub(crate) mod admin;
mod deploy;
mod live;
pub(crate) mod models;
mod started;
pub(crate) mod versions;
mod watch;
use live::Live;
use started::Started;

/// Instances the shared pool holds at once, across all services.
const SHARED_SLOTS: u32 = 1024;

/// A stop signal came during start-up: not a failure, `up` stops what has started.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped during start-up")
    }
}

impl std::error::Error for Stopped {}

pub async fn run(args: UpArgs) -> Result<()> {
    crate::registry::check_ports(
        &args.registry.ports,
        &[
            (args.registry_port, "the registry listens on"),
            (args.chat_port, "chat listens on"),
            (args.app_port, "the app listens on"),
        ],
    )?;
    print_attribution();
    crate::metrics::exposition::listen(args.runtime.metrics_listen).await?;
    let mut stack = Stack::new(&args).await?;
    // Bound first, so a port in use stops `up` before anything registers.
    let app_addr = SocketAddr::new(args.host, args.app_port);
    let app_listener = TcpListener::bind(app_addr).await.with_context(|| {
        format!("cannot listen on {app_addr}: is another process using it? Choose another with --app-port")
    })?;
    match stack.start(app_listener).await {
        Ok(()) => shutdown_signal().await,
        Err(e) if e.is::<Stopped>() => {}
        Err(e) => {
            // What started stops in order all the same: the models unregister.
            stack.started.stop().await;
            return Err(e);
        }
    }
    stack.started.stop().await;
    Ok(())
}

/// What every part of the stack shares: one engine (compiled code and the instance pool), the
/// stores, the AI models' weights, the limits, and what has started so far.
pub struct Stack<'a> {
    args: &'a UpArgs,
    engine: wasmtime::Engine,
    kv: KeyValue,
    ai: AiModels,
    limits: Limits,
    started: Started,
}

/// A service serving, as the stack's table and the app port need it.
struct Serving {
    url: String,
    slot: Arc<ServerSlot>,
}

impl<'a> Stack<'a> {
    async fn new(args: &'a UpArgs) -> Result<Self> {
        std::fs::create_dir_all(&args.runtime.data_dir)?;
        let limits = args.runtime.limits();
        Ok(Self {
            engine: crate::engine::build_shared_engine(&limits, SHARED_SLOTS)?,
            kv: args.runtime.key_value().await?,
            // One copy of each AI model's weights, shared by every deployment that uses it.
            ai: args.runtime.ai_models(),
            limits,
            started: Started::new(),
            args,
        })
    }

    /// Starts the registry, chat, the models and the app port, and prints the table;
    /// [`Stopped`] when a stop signal came first.
    async fn start(&mut self, app_listener: TcpListener) -> Result<()> {
        let registry = self.start_registry().await?;
        let chat = self.start_chat().await?;
        let deployer = self.deployer(&registry.url);
        let deployments = self.deploy_models(&deployer).await?;
        println!("\n  {:<24} {:<32} status", "service", "url");
        let registry_line = format!("{}/registry", registry.url);
        println!("  {:<24} {registry_line:<32} ready", "registry");
        let chat_line = format!("{}/api/chats", chat.0.url);
        println!("  {:<24} {chat_line:<32} ready ({})", "chat", chat.1);
        let (models, adopted) = wait_for_models(deployments).await?;
        // The web console, told which models the app serves under `/models/`.
        let names: Vec<&str> = models.iter().map(|(n, _)| n.as_str()).collect();
        let console_vars = self.variables(&[("models", names.join(","))])?;
        let console = self.load("console", self.kv.clone(), console_vars).await?;
        let app = Arc::new(AppRouter::for_stack(
            &registry.slot,
            &chat.0.slot,
            &console.slot,
            &models,
        ));
        let app_url = crate::serve::local_url(app_listener.local_addr()?);
        self.started.service(tokio::spawn(crate::listener::serve(
            app_listener,
            app.clone(),
            self.started.service_stopper(),
            self.limits.deadline + DRAIN_GRACE,
        )));
        let console_line = format!("{app_url}/");
        println!(
            "  {:<24} {console_line:<32} ready (every service on one origin)",
            "console"
        );
        println!(
            "\n  {} model(s) serving. Open {app_url}/ in a browser. Ctrl-C stops everything.\n",
            models.len()
        );
        let live = Live::new(
            deployer,
            app.clone(),
            self.started.model_tasks(),
            self.started.model_stop_signal(),
        );
        let watched = self.watching();
        let origin = if watched {
            live::Origin::Directory
        } else {
            live::Origin::Api
        };
        if self.args.copies == 1 {
            for (a, addr) in adopted {
                live.adopt(a, addr, origin).await;
            }
        }
        let token = crate::token::Token::load(
            "UP_ADMIN_TOKEN",
            &self.args.runtime.data_dir,
            "admin_token",
        )?;
        let admin = Arc::new(admin::Admin::new(live.clone(), token));
        println!(
            "  {:<24} {:<32} ready ({})\n",
            "admin API",
            format!("{app_url}/admin/deployments"),
            admin.token_note()
        );
        app.set_admin(admin);
        if let Some(dir) = self.args.models.clone().filter(|_| watched) {
            let every = self.args.watch_interval;
            println!(
                "  watching {} every {every:?}: models added, changed or removed there are deployed, upgraded or removed\n",
                dir.display()
            );
            tokio::spawn(watch::watch(dir, live, every, self.started.model_stopper()));
        }
        // Scripts and tests wait for this line.
        println!("stack ready");
        Ok(())
    }

    /// The registry, by the same recipe as `runtime-host registry`.
    async fn start_registry(&mut self) -> Result<Serving> {
        let recipe = crate::registry::Recipe::new(&self.args.registry, self.kv.clone())?;
        let vars = self.variables(&recipe.variables())?;
        let loaded = self.load("registry", recipe.kv.clone(), vars).await?;
        let listen = SocketAddr::new(self.args.host, self.args.registry_port);
        let service = recipe.serve(loaded, listen).await?;
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
        let recipe = crate::chat::Recipe::new(&self.args.runtime.data_dir)?;
        let vars = self.variables(&recipe.variables())?;
        let loaded = self.load("chat", self.kv.clone(), vars).await?;
        let service = loaded
            .bind(SocketAddr::new(self.args.host, self.args.chat_port))
            .await?;
        recipe.seed(&service.server).await?;
        let serving = Serving {
            url: service.local_url(),
            slot: service.slot.clone(),
        };
        let stop = self.started.service_stopper();
        self.started.service(tokio::spawn(service.run_until(stop)));
        Ok((serving, recipe.token_note()))
    }

    /// Whether `--models DIR` is watched for changes (one deployment per model, a non-zero
    /// `--watch-interval`).
    fn watching(&self) -> bool {
        self.args.models.is_some() && self.args.copies == 1 && !self.args.watch_interval.is_zero()
    }

    fn variables(&self, extra: &[(&str, String)]) -> Result<Variables> {
        self.args.runtime.variables(extra)
    }

    /// Compiles one of the stack's own services off the async threads; [`Stopped`] if a stop
    /// signal comes first. Services read no files and use no AI model.
    async fn load(&self, component: &str, kv: KeyValue, vars: Variables) -> Result<Loaded> {
        let grants = Grants {
            kv,
            vars,
            files: Mounts::default(),
            ai: AiGrant::new(self.ai.clone(), &[]).expect("no AI models granted"),
        };
        let component = default_component(component)?;
        let source = crate::preinit::Source::read(&component, &grants.files)?;
        let (engine, limits) = (&self.engine, &self.limits);
        let pre = prepare(engine, limits, &self.args.runtime, source, &grants).await??;
        let name = crate::serve::metrics_name(&component);
        Ok(Loaded::from_pre(
            &name,
            pre,
            grants,
            self.limits.clone(),
            None,
        ))
    }
}

/// `source` compiled (and pre-initialized where it can be) for `engine`, a child process
/// doing what the cache lacks (see [`crate::preinit`]); [`Stopped`] if a stop signal comes
/// first.
async fn prepare(
    engine: &wasmtime::Engine,
    limits: &Limits,
    runtime: &crate::cli::RuntimeArgs,
    source: crate::preinit::Source,
    grants: &Grants,
) -> Result<Result<ProxyPre<InstanceState>>, Stopped> {
    let cache_dir = runtime.cache_dir();
    let cold = ColdWork::InChild;
    let preparing = crate::preinit::prepare(engine, source, grants, limits, &cache_dir, cold);
    let prepared = unless_stopped(preparing).await.ok_or(Stopped)?;
    Ok(prepared.map(|p| p.pre))
}

/// Waits for each model to register or fail, printing its line; gives back those serving.
/// Those serving come back with what a watched directory needs to manage them.
async fn wait_for_models(
    deployments: Deployments,
) -> Result<(
    Vec<(String, Arc<ServerSlot>)>,
    Vec<(live::Adopted, SocketAddr)>,
)> {
    let mut serving = Vec::new();
    let mut adopted = Vec::new();
    for starting in deployments.starting {
        let name = starting.name;
        match unless_stopped(starting.outcome).await.ok_or(Stopped)? {
            Ok(Ok(addr)) => {
                println!("  {:<24} {:<32} registered", name, format!("http://{addr}"));
                serving.push((name, starting.slot));
                adopted.extend(starting.adopt.map(|a| (a, addr)));
            }
            Ok(Err(why)) => println!("  {:<24} {:<32} failed: {why}", name, "-"),
            Err(_) => println!("  {:<24} {:<32} stopped", name, "-"),
        }
    }
    for (name, why) in &deployments.skipped {
        println!("  {name:<24} {:<32} not deployed: {why}", "-");
    }
    Ok((serving, adopted))
}
