//! Section `redis`: the registry and `/predict` with the store on Redis beside SQLite.
//! A private `redis-server` (Debian's package, through `local-redis`) runs on a free loopback
//! port, fsyncing its append-only file every second (Redis's default for durability; the
//! tests use every write).
//! Without `redis-server` there is nothing to measure (the caller says so in the report).

use super::load::{self, Call};
use super::peers::{self, ModelUnderTest, Paths};
use super::procs;
use super::registry;
use super::report::{Report, StoreRow};
use super::section::Section;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub const SECTION: Section = Section {
    name: "redis",
    about: "the registry and /predict with the store on Redis beside SQLite",
    run: |b, r| {
        Box::pin(async move {
            match store_backends(b.paths, b.molecules, b.duration).await? {
                Some(rows) => r.stores = rows,
                None => r.notes.push(
                    "section redis skipped: redis-server is not installed (apt-get install redis-server)"
                        .into(),
                ),
            }
            Ok(())
        })
    },
    targets,
    print,
};

/// A private redis-server and a runtime-config file naming it as `default`.
pub struct BenchRedis {
    _server: local_redis::RedisServer,
    pub config: PathBuf,
}

pub fn start_redis(paths: &Paths) -> Result<Option<BenchRedis>> {
    if !local_redis::installed() {
        return Ok(None);
    }
    let dir = procs::fresh_dir(&paths.work, "redis")?;
    let options = local_redis::Options {
        durability: local_redis::Durability::EverySecond,
        ..Default::default()
    };
    let server = local_redis::RedisServer::start(&dir, options).map_err(anyhow::Error::msg)?;
    let config = dir.join("runtime-config.redis.toml");
    std::fs::write(
        &config,
        format!(
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"{}/0\"\n",
            server.url()
        ),
    )?;
    Ok(Some(BenchRedis {
        _server: server,
        config,
    }))
}

/// One row per store; `None` when redis-server is not installed.
pub async fn store_backends(
    paths: &Paths,
    molecules: &[String],
    duration: Duration,
) -> Result<Option<Vec<StoreRow>>> {
    let Some(redis) = start_redis(paths)? else {
        return Ok(None);
    };
    let mut rows = Vec::new();
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
            &ModelUnderTest::molprop(paths)?,
            addr,
            &data,
            &flags,
        )
        .await?;
        let calls: Arc<[Call]> = super::compare::predict_calls(molecules, "logp");
        load::run(model_addr, 16, duration / 2, calls.clone()).await?;
        let predict = load::run(model_addr, 16, duration, calls)
            .await
            .context("predict load")?
            .figures();
        rows.push(StoreRow {
            store: store.to_owned(),
            registry: throughput,
            predict_rps: predict.rps,
            predict_p99_ms: predict.p99_ms,
        });
        model.stop().await;
        reg.stop().await;
    }
    drop(redis);
    Ok(Some(rows))
}

/// The registry on Redis as fast as on SQLite's target, without a duplicate.
fn targets(r: &mut Report) {
    if let Some(row) = r.stores.iter().find(|s| s.store == "redis").cloned() {
        let t = &row.registry;
        r.target(
            "registry on Redis, 32 clients",
            ">= 2,000 registrations/s, 0 dup",
            format!(
                "{:.0}/s, {} duplicates, {} errors",
                t.registrations_per_s, t.duplicate_ports, t.errors
            ),
            t.registrations_per_s >= 2000.0 && t.duplicate_ports == 0 && t.errors == 0,
        );
    }
}

fn print(r: &Report) {
    if !r.stores.is_empty() {
        println!(
            "\nkey-value store: registry (32 clients) and /predict logp (16 conns)\n  {:<7} {:>16} {:>10} {:>7} {:>14} {:>10}",
            "store", "registrations/s", "duplicates", "errors", "predict req/s", "p99 ms"
        );
    }
    for s in &r.stores {
        println!(
            "  {:<7} {:>16.0} {:>10} {:>7} {:>14.0} {:>10.2}",
            s.store,
            s.registry.registrations_per_s,
            s.registry.duplicate_ports,
            s.registry.errors,
            s.predict_rps,
            s.predict_p99_ms
        );
    }
}
