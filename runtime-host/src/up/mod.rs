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
use crate::keyvalue::{KeyValue, sqlite::KvDatabase};
use crate::llm::{AiGrant, AiModels};
use crate::model::{DeployOptions, deploy};
use crate::registry::host_prefix;
use crate::serve::{
    DRAIN_GRACE, Loaded, default_component, print_attribution, shutdown_signal, with_start_time,
};
use crate::signals::unless_stopped;
use crate::state::Grants;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

mod models;
mod started;
use models::model_specs;
use started::Started;

/// Sample dialogs loaded into a fresh chat store.
const SAMPLE_DIALOGS: &str = include_str!("../../../components/chat/samples/dialogs.json");
/// Instances the shared pool holds at once, across all services.
const SHARED_SLOTS: u32 = 1024;

/// The admin token: `$CHAT_ADMIN_TOKEN`, else the one kept in the data directory (made on
/// first run).
fn admin_token(data_dir: &Path) -> Result<String> {
    if let Ok(t) = std::env::var("CHAT_ADMIN_TOKEN")
        && !t.is_empty()
    {
        return Ok(t);
    }
    let file = data_dir.join("chat_admin_token");
    if let Ok(t) = std::fs::read_to_string(&file) {
        return Ok(t.trim().to_owned());
    }
    let token = uuid::Uuid::new_v4().simple().to_string();
    std::fs::write(&file, &token).with_context(|| format!("writing {}", file.display()))?;
    Ok(token)
}

/// Why a model that needs `name` was left out, and how to add it.
fn missing_ai_model(ai: &AiModels, name: &str) -> String {
    let why = crate::llm::not_installed(name, &ai.model_dir(name));
    tracing::warn!(model = %name, "{why}");
    format!("AI model `{name}` not installed (run `cargo xtask install-models`)")
}

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
    let data_dir = args.runtime.data_dir.clone();
    std::fs::create_dir_all(&data_dir)?;
    let limits = args.runtime.limits();
    let engine =
        crate::engine::build_shared_engine(&limits, SHARED_SLOTS, Some(&args.runtime.cache_dir()))?;
    let kv = args.runtime.key_value().await?;
    let registry_recipe = crate::registry::Recipe::new(&args.registry, kv.clone())?;
    // One copy of each AI model's weights, shared by every deployment that uses it.
    let ai = args.runtime.ai_models();
    let host = args.host;
    // Bound first, so a port in use stops `up` before anything registers.
    let app_addr = SocketAddr::new(host, args.app_port);
    let app_listener = tokio::net::TcpListener::bind(app_addr).await.with_context(|| {
        format!("cannot listen on {app_addr}: is another process using it? Choose another with --app-port")
    })?;
    let mut started = Started::new();

    // Registry.
    let reg_vars = args.runtime.variables(&registry_recipe.variables())?;
    let service_grants = |kv, vars| Grants {
        kv,
        vars,
        files: Mounts::default(),
        ai: AiGrant::new(ai.clone(), &[]).expect("no AI models granted"),
    };
    let Some(registry) = compile(
        &engine,
        default_component("registry")?,
        service_grants(registry_recipe.kv.clone(), reg_vars),
        &limits,
    )
    .await?
    else {
        started.stop().await;
        return Ok(());
    };
    let registry = registry_recipe
        .serve(registry, SocketAddr::new(host, args.registry_port))
        .await?;
    let registry_url = registry.local_url();
    let registry_server = registry.server.clone();
    started.service(tokio::spawn(registry.run_until(started.service_stopper())));

    // Chat, with the sample dialogs.
    let token = admin_token(&data_dir)?;
    let chat_vars = args
        .runtime
        .variables(&[("chat_admin_token", token.clone())])?;
    let Some(chat) = compile(
        &engine,
        default_component("chat")?,
        service_grants(kv.clone(), chat_vars),
        &limits,
    )
    .await?
    else {
        started.stop().await;
        return Ok(());
    };
    let chat = chat.bind(SocketAddr::new(host, args.chat_port)).await?;
    let chat_url = chat.local_url();
    let chat_server = chat.server.clone();
    let dialogs: Vec<serde_json::Value> = serde_json::from_str(SAMPLE_DIALOGS)?;
    let auth = format!("Bearer {token}");
    for d in dialogs {
        let (status, body) = chat
            .server
            .call_with(
                "POST",
                "/api/chats",
                serde_json::to_vec(&d)?,
                &[
                    ("authorization", &auth),
                    ("content-type", "application/json"),
                ],
            )
            .await?;
        if status != 201 && status != 409 {
            tracing::warn!(status, body = %String::from_utf8_lossy(&body), "sample dialog not loaded");
        }
    }
    started.service(tokio::spawn(chat.run_until(started.service_stopper())));

    // Models.
    let opts = DeployOptions {
        app_name: String::new(),
        registry: registry_url.clone(),
        preferred_port: None,
        host,
        heartbeat_interval: args.heartbeat_interval,
        registry_wait: Duration::from_secs(10),
        self_test_deadline: args.self_test_deadline,
    };
    // Every component is compiled before any model starts its self-test: a self-test that
    // shared the cores with a compilation took 15-18 s instead of 61 ms (issue 23). Each
    // component is compiled once, however many deployments use it.
    let mut compiled = std::collections::HashMap::new();
    let mut to_deploy = Vec::new();
    let mut skipped = Vec::new();
    for spec in model_specs(args.models.as_deref())? {
        let mut ai_models = spec.ai_models.clone();
        ai_models.extend(args.runtime.ai_models.iter().cloned());
        if let Some(missing) = ai_models.iter().find(|m| !ai.installed(m)) {
            // Everything else still starts; the model's line says how to add it.
            skipped.push((spec.name.clone(), missing_ai_model(&ai, missing)));
            continue;
        }
        let ai_grant =
            AiGrant::new(ai.clone(), &ai_models).with_context(|| format!("model {}", spec.name))?;
        let pre = match compiled.get(&spec.component) {
            Some(pre) => Clone::clone(pre),
            None => {
                let (engine, path) = (engine.clone(), spec.component.clone());
                let compiling =
                    tokio::task::spawn_blocking(move || crate::engine::load_proxy(&engine, &path));
                let Some(pre) = unless_stopped(compiling).await else {
                    started.stop().await;
                    return Ok(());
                };
                let pre = pre?.with_context(|| format!("loading model {}", spec.name))?;
                compiled.insert(spec.component.clone(), pre.clone());
                pre
            }
        };
        // `--dir` mounts go to every model, beside its own (the registry and chat read none).
        let mut mounts = spec.mounts.clone();
        mounts.extend(args.runtime.dirs.iter().cloned());
        let mounts = Mounts::parse(&mounts).with_context(|| format!("model {}", spec.name))?;
        to_deploy.push((spec, pre, ai_grant, mounts));
    }
    let mut deployments = Vec::new();
    for (spec, pre, ai_grant, mounts) in to_deploy {
        for copy in 0..args.copies {
            let name = if args.copies > 1 {
                format!("{}-{copy}", spec.name)
            } else {
                spec.name.clone()
            };
            let grants = Grants {
                kv: model_store(&args, &kv, &name)?,
                vars: args.runtime.variables(&with_start_time(&[]))?,
                files: mounts.clone(),
                ai: ai_grant.clone(),
            };
            let loaded = Loaded::from_pre(pre.clone(), grants, limits.clone(), None);
            let server = loaded.server.clone();
            let opts = DeployOptions {
                app_name: format!("runtime-host/{name}"),
                ..opts.clone()
            };
            let (task, outcome) = spawn_deployment(
                name.clone(),
                loaded,
                spec.source.clone(),
                opts,
                started.model_stopper(),
            );
            started.model(task);
            deployments.push((name, server, outcome));
        }
    }

    println!("\n  {:<24} {:<32} status", "service", "url");
    println!(
        "  {:<24} {:<32} ready",
        "registry",
        format!("{registry_url}/registry")
    );
    println!(
        "  {:<24} {:<32} ready (admin token in {}/chat_admin_token)",
        "chat",
        format!("{chat_url}/api/chats"),
        data_dir.display()
    );
    let mut serving = Vec::new();
    for (name, server, outcome) in deployments {
        match unless_stopped(outcome).await {
            None => {
                started.stop().await;
                return Ok(());
            }
            Some(Ok(Ok(addr))) => {
                serving.push((name.clone(), server));
                println!("  {:<24} {:<32} registered", name, format!("http://{addr}"));
            }
            Some(Ok(Err(why))) => println!("  {:<24} {:<32} failed: {why}", name, "-"),
            Some(Err(_)) => println!("  {:<24} {:<32} stopped", name, "-"),
        }
    }
    for (name, why) in &skipped {
        println!("  {name:<24} {:<32} not deployed: {why}", "-");
    }
    // The web console, told which models the app serves under `/models/`.
    let names: Vec<&str> = serving.iter().map(|(n, _)| n.as_str()).collect();
    let console_vars = args.runtime.variables(&[("models", names.join(","))])?;
    let Some(console) = compile(
        &engine,
        default_component("console")?,
        service_grants(kv.clone(), console_vars),
        &limits,
    )
    .await?
    else {
        started.stop().await;
        return Ok(());
    };
    let console = console.server;
    let app = AppRouter::for_stack(&registry_server, &chat_server, &console, &serving);
    let app_url = crate::serve::local_url(app_listener.local_addr()?);
    started.service(tokio::spawn(crate::server::serve(
        app_listener,
        Arc::new(app),
        started.service_stopper(),
        limits.deadline + DRAIN_GRACE,
    )));
    println!(
        "  {:<24} {:<32} ready (every service on one origin)",
        "console",
        format!("{app_url}/")
    );
    println!(
        "\n  {} model(s) serving. Open {app_url}/ in a browser. Ctrl-C stops everything.\n",
        serving.len()
    );
    // Scripts and tests wait for this line.
    println!("stack ready");

    shutdown_signal().await;
    started.stop().await;
    Ok(())
}

/// Starts one model's deployment; the receiver gets its address once it serves, or why it
/// failed (the first line of the error, for `up`'s table; the log has it whole).
fn spawn_deployment(
    name: String,
    loaded: Loaded,
    source: std::path::PathBuf,
    opts: DeployOptions,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> (
    tokio::task::JoinHandle<Result<()>>,
    tokio::sync::oneshot::Receiver<Result<SocketAddr, String>>,
) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let send = move |outcome| {
        if let Some(tx) = tx.lock().expect("not poisoned").take() {
            let _ = tx.send(outcome);
        }
    };
    let task = tokio::spawn(async move {
        let outcome = deploy(loaded, &source, opts, stop, |addr| send.clone()(Ok(addr))).await;
        if let Err(e) = &outcome {
            tracing::error!(model = %name, error = %format!("{e:#}"), "model deployment failed");
            let first = format!("{e:#}")
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
            send(Err(first));
        }
        outcome
    });
    (task, rx)
}

/// Compiles a service's component off the async threads, unless a stop signal comes first
/// (`None`).
async fn compile(
    engine: &wasmtime::Engine,
    component: std::path::PathBuf,
    grants: Grants,
    limits: &crate::limits::Limits,
) -> Result<Option<Loaded>> {
    let (engine, limits) = (engine.clone(), limits.clone());
    let compiling = tokio::task::spawn_blocking(move || {
        Loaded::load_in(&engine, &component, grants, limits, None)
    });
    match unless_stopped(compiling).await {
        None => Ok(None),
        Some(loaded) => Ok(Some(loaded??)),
    }
}

/// A model's stores. Each deployment keeps its metrics apart from the others': by default in
/// its own SQLite file under `models/<name>/`; with a runtime config, under the key prefix
/// `models/<name>/` of the configured stores (and, on a shared store, this machine's
/// `hosts/<scope>/`, as two machines may both deploy `molprop`).
fn model_store(args: &UpArgs, kv: &KeyValue, name: &str) -> Result<KeyValue> {
    if args.runtime.runtime_config_file.is_none() {
        let dir = args.runtime.data_dir.join("models").join(name);
        return Ok(KeyValue::sqlite(Arc::new(KvDatabase::open_in(&dir)?)));
    }
    let host = if kv.is_shared() {
        host_prefix(args.registry.registry_scope.as_deref())?
    } else {
        String::new()
    };
    Ok(kv.scoped(&format!("{host}models/{name}/")))
}
