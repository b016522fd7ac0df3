//! Section `redis`: the registry and `/predict` with the store on Redis beside SQLite.
//! A private `redis-server` (Debian's package) runs on a free loopback port, fsyncing its
//! append-only file every second (Redis's default for durability; the tests use `always`).
//! Without `redis-server` the section is skipped with a note.

use super::load::{self, Call};
use super::peers::{self, ModelUnderTest, Paths};
use super::procs::{self, Proc, free_port};
use super::registry::{self, Throughput};
use super::report::Report;
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize)]
pub struct StoreRow {
    /// `sqlite` or `redis`.
    pub store: String,
    pub registry: Throughput,
    /// `/predict` (logp) at 16 connections.
    pub predict_rps: f64,
    pub predict_p99_ms: f64,
}

/// A private redis-server and a runtime-config file naming it as `default`.
struct BenchRedis {
    proc: Proc,
    config: PathBuf,
}

async fn start_redis(paths: &Paths) -> Result<Option<BenchRedis>> {
    if std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .is_err()
    {
        return Ok(None);
    }
    let dir = procs::fresh_dir(&paths.work, "redis")?;
    let port = free_port()?;
    let args: Vec<String> = [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--dir",
        &dir.display().to_string(),
        "--appendonly",
        "yes",
        "--save",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let proc = Proc::spawn(
        "redis",
        Path::new("redis-server"),
        &args,
        &paths.work.join("redis.log"),
    )?;
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if started.elapsed() > Duration::from_secs(10) {
            bail!("redis-server did not listen on port {port} within 10 s");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let config = dir.join("runtime-config.redis.toml");
    std::fs::write(
        &config,
        format!(
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://127.0.0.1:{port}/0\"\n"
        ),
    )?;
    Ok(Some(BenchRedis { proc, config }))
}

pub async fn store_backends(
    paths: &Paths,
    molecules: &[String],
    duration: Duration,
    report: &mut Report,
) -> Result<()> {
    let Some(redis) = start_redis(paths).await? else {
        report.notes.push(
            "section redis skipped: redis-server is not installed (apt-get install redis-server)"
                .into(),
        );
        return Ok(());
    };
    let on_redis = [
        "--runtime-config-file".to_owned(),
        redis.config.display().to_string(),
    ];
    for (store, flags) in [("sqlite", &[][..]), ("redis", &on_redis[..])] {
        eprintln!("store {store}: registry throughput, 32 clients ...");
        let name = format!("store-{store}-registry");
        let (reg, addr) = peers::registry(paths, &name, "30000-30899", flags).await?;
        let throughput = registry::throughput(addr, 32, duration * 2).await?;
        eprintln!("store {store}: /predict logp at 16 connections ...");
        let data = procs::fresh_dir(&paths.work, &format!("store-{store}-model"))?;
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let (model, model_addr, _) = peers::host_model(
            paths,
            &format!("store-{store}-model"),
            &ModelUnderTest::molprop()?,
            addr,
            &data,
            &flags,
        )
        .await?;
        let calls: Arc<[Call]> = super::predict_calls(molecules, "logp");
        load::run(model_addr, 16, duration / 2, calls.clone()).await?;
        let predict = load::run(model_addr, 16, duration, calls)
            .await
            .context("predict load")?
            .figures();
        report.stores.push(StoreRow {
            store: store.to_owned(),
            registry: throughput,
            predict_rps: predict.rps,
            predict_p99_ms: predict.p99_ms,
        });
        model.stop().await;
        reg.stop().await;
    }
    redis.proc.stop().await;
    Ok(())
}
