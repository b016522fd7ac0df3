//! Section `fleet` (issue 49): chat writes and molprop predictions per second through
//! HAProxy with 1, 2 and 3 hosts of a fleet (`crates/fleet`: `runtime-host up` in network
//! namespaces on one Redis, as docs/deploy.md runs it), and the failover window of a host
//! killed under load. Needs root (namespaces), haproxy and redis-server; skipped with a
//! note otherwise. On one machine the hosts share its cores: the figures show what the
//! balancer and the shared store cost, not what more machines would add.

use super::args::BenchArgs;
use super::load::{self, Call, Figures};
use super::peers::Paths;
use super::report::{Failover, FleetRow};
use super::section::{Section, no_targets};
use anyhow::{Context, Result};
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Connections the load keeps open to HAProxy.
const CONNECTIONS: usize = 16;

pub const SECTION: Section = Section {
    name: "fleet",
    about: "chat writes and predictions through HAProxy with 1-3 hosts on one Redis, and a host killed under load; needs root",
    run: |b, r| {
        Box::pin(async move {
            match fleet(b.paths, b.args, b.duration).await? {
                Ok((rows, failover)) => (r.fleet, r.fleet_failover) = (rows, Some(failover)),
                Err(why) => r.notes.push(format!("section fleet skipped: {why}")),
            }
            Ok(())
        })
    },
    targets: no_targets,
    print: |r| print(&r.fleet, &r.fleet_failover),
};

/// The section's figures; `None` with the reason where this machine cannot run a fleet.
pub async fn fleet(
    paths: &Paths,
    args: &BenchArgs,
    duration: Duration,
) -> Result<Result<(Vec<FleetRow>, Failover), String>> {
    if let Err(why) = ::fleet::available() {
        return Ok(Err(why));
    }
    let build = ::fleet::Build {
        host_binary: paths.host.clone(),
        ai_models_dir: std::fs::canonicalize(&args.ai_models_dir)
            .with_context(|| format!("{}", args.ai_models_dir.display()))?,
        // The compile cache named in the environment (the tests' shared one, where earlier
        // tests compiled the stack already), else one of the bench's own.
        cache_dir: std::env::var_os("RUNTIME_HOST_CACHE_DIR")
            .map_or_else(|| paths.work.join("fleet-cache"), PathBuf::from),
        models: ::fleet::package_models(&paths.host),
    };
    eprintln!("fleet: three hosts, Redis and HAProxy ...");
    let mut fleet =
        tokio::task::spawn_blocking(move || ::fleet::Fleet::start(build, 3, &["--optimized-only"]))
            .await?;
    let addr: SocketAddr = format!("127.0.0.1:{}", fleet.haproxy.port).parse()?;
    let predictions: Arc<[Call]> = [Call::post_json(
        "/models/molprop/predict",
        &json!({"input_type": "text", "data": {"text": "CC(=O)Oc1ccccc1C(=O)O", "property": "logp"}}),
    )]
    .into();
    let mut rows = Vec::new();
    for hosts in 1..=3 {
        for i in 0..3 {
            let state = if i < hosts { "ready" } else { "maint" };
            fleet.haproxy.set_state(&::fleet::server(i), state);
        }
        eprintln!("fleet: {hosts} host(s) behind HAProxy ...");
        // New dialogs for each size: an append rewrites its dialog, so longer ones cost more.
        let writes = chat_writes(addr).await?;
        let w = load::run(addr, CONNECTIONS, duration, writes).await?;
        let p = load::run(addr, CONNECTIONS, duration, predictions.clone()).await?;
        rows.push(FleetRow {
            hosts,
            chat_writes: w.figures(),
            predictions: p.figures(),
        });
    }
    eprintln!("fleet: host-3 killed under load ...");
    let load = tokio::spawn(load::run(
        addr,
        CONNECTIONS,
        Duration::from_secs(3),
        predictions.clone(),
    ));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let killed = Instant::now();
    let fleet = tokio::task::spawn_blocking(move || {
        fleet.kill_host(2);
        fleet
            .haproxy
            .wait_status(&::fleet::server(2), "DOWN", Duration::from_secs(10));
        fleet
    })
    .await?;
    let window = killed.elapsed();
    let measured = load.await??;
    drop(fleet);
    Ok(Ok((
        rows,
        Failover {
            window_ms: window.as_secs_f64() * 1000.0,
            failed: measured.errors,
            answered: measured.ok,
        },
    )))
}

/// Appends to a few dialogs, made first, with the fleet's chat token.
async fn chat_writes(addr: SocketAddr) -> Result<Arc<[Call]>> {
    let client = service_client::HttpClient::new(Duration::from_secs(10));
    let mut calls = Vec::new();
    for d in 0..8 {
        let body = json!({"chatName": format!("bench {d}")}).to_string();
        let made = client
            .send(
                hyper::Method::POST,
                &format!("http://{addr}/api/chats"),
                Some(body.into_bytes()),
                Some(::fleet::CHAT_TOKEN),
            )
            .await?;
        anyhow::ensure!(made.status == 201, "making a dialog: {}", made.status);
        let dialog: serde_json::Value = serde_json::from_slice(&made.body)?;
        let id = dialog["id"].as_str().context("the new dialog's id")?;
        calls.push(
            Call::post_json(
                &format!("/api/dialog/messages?id={id}"),
                &json!({"role": "user", "content": "a message of the bench"}),
            )
            .with_token(::fleet::CHAT_TOKEN),
        );
    }
    Ok(calls.into())
}

/// The section's tables.
pub fn print(rows: &[FleetRow], failover: &Option<Failover>) {
    if rows.is_empty() {
        return;
    }
    println!(
        "\nA fleet behind HAProxy on one Redis, {CONNECTIONS} connections (requests/s, p50 / p99 ms; \
         the hosts share this machine's cores)"
    );
    println!(
        "  {:>5}  {:>26} {:>26}",
        "hosts", "chat appends", "molprop /predict logp"
    );
    for r in rows {
        let cell = |f: &Figures| {
            format!(
                "{:>8.0} {:>6.2}/{:<7.2} e{}",
                f.rps, f.p50_ms, f.p99_ms, f.errors
            )
        };
        println!(
            "  {:>5}  {:>26} {:>26}",
            r.hosts,
            cell(&r.chat_writes),
            cell(&r.predictions)
        );
    }
    if let Some(f) = failover {
        println!(
            "  host-3 SIGKILLed under load: out of rotation after {:.0} ms; {} of {} requests failed",
            f.window_ms,
            f.failed,
            f.failed + f.answered
        );
    }
}
