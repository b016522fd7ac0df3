//! Section `scrape`: what the host's Prometheus metrics cost on the request path. One
//! `runtime-host model` (molprop) with `--metrics-listen`, loaded at 16 connections with
//! `/predict` (logp) and `/health`, run by run alternately quiet and while a scraper reads
//! `/metrics` every [`EVERY`] (60 times as often as Prometheus's default of 15 s). The
//! metrics are always kept, so "quiet" is the cost of keeping them; the difference is the
//! cost of reading them.

use super::compare::predict_calls;
use super::load::Figures;
use super::load::{self, Call, Measured};
use super::peers::{self, ModelUnderTest, Paths};
use super::procs::{self, free_port};
use super::report::{Report, ScrapeRow};
use super::section::Section;
use anyhow::Result;
use service_client::HttpClient;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const EVERY: Duration = Duration::from_millis(250);
const CONNECTIONS: usize = 16;

pub const SECTION: Section = Section {
    name: "scrape",
    about: "/predict and /health while the Prometheus metrics are scraped, and not",
    run: |b, r| Box::pin(scrape_cost(b.paths, b.molecules, b.duration, b.rounds, r)),
    targets,
    print,
};

pub async fn scrape_cost(
    paths: &Paths,
    molecules: &[String],
    duration: Duration,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let (reg, reg_addr) = peers::registry(paths, "scrape-registry", "22300-22399", &[]).await?;
    let metrics_addr = format!("127.0.0.1:{}", free_port()?);
    let data = procs::fresh_dir(&paths.work, "scrape-model")?;
    let molprop = ModelUnderTest::molprop(paths)?;
    let (model, addr, _) = peers::host_model(
        paths,
        "scrape-model",
        &molprop,
        reg_addr,
        &data,
        &["--metrics-listen", &metrics_addr],
    )
    .await?;
    let url = format!("http://{metrics_addr}/metrics");
    let health: Arc<[Call]> = Arc::new([Call::get("/health")]);
    for (what, calls) in [
        ("/predict logp", predict_calls(molecules, "logp")),
        ("/health", health),
    ] {
        eprintln!("{what} at {CONNECTIONS} connections, with and without scraping ...");
        load::run(addr, CONNECTIONS, duration / 2, calls.clone()).await?;
        let (mut quiet, mut scraped) = (Measured::empty(), Measured::empty());
        let mut scrapes = 0;
        for _ in 0..rounds {
            quiet.absorb(load::run(addr, CONNECTIONS, duration, calls.clone()).await?);
            let counts = Arc::new(Scrapes::default());
            let scraper = tokio::spawn(scrape_every(url.clone(), counts.clone()));
            scraped.absorb(load::run(addr, CONNECTIONS, duration, calls.clone()).await?);
            scraper.abort();
            anyhow::ensure!(
                counts.failed.load(Ordering::Relaxed) == 0,
                "scraping {url} failed during the load"
            );
            scrapes += counts.done.load(Ordering::Relaxed);
        }
        report.scrape.push(ScrapeRow {
            what: what.into(),
            quiet: quiet.figures(),
            scraped: scraped.figures(),
            scrapes,
        });
    }
    model.stop().await;
    reg.stop().await;
    Ok(())
}

/// Scrapes that succeeded and failed.
#[derive(Default)]
struct Scrapes {
    done: AtomicUsize,
    failed: AtomicUsize,
}

/// Reads `url` every [`EVERY`] until aborted, counting in `counts`.
async fn scrape_every(url: String, counts: Arc<Scrapes>) {
    let client = HttpClient::new(Duration::from_secs(5));
    let mut ticker = tokio::time::interval(EVERY);
    loop {
        ticker.tick().await;
        let ok = matches!(client.send(hyper::Method::GET, &url, None, None).await, Ok(r) if r.status == 200);
        let counter = if ok { &counts.done } else { &counts.failed };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Being scraped costs no more than noise.
fn targets(r: &mut Report) {
    for row in r.scrape.clone() {
        let ratio = row.scraped.rps / row.quiet.rps.max(1e-9);
        r.target(
            &format!("{}: scraped every 250 ms vs not", row.what),
            ">= 0.9x req/s (noise)",
            format!("{ratio:.3}x ({} scrapes)", row.scrapes),
            ratio >= 0.9 && row.scrapes > 0,
        );
    }
}

fn print(r: &Report) {
    if !r.scrape.is_empty() {
        println!("\nmetrics scraped every 250 ms vs not (16 connections; req/s, p50 / p99 ms)");
    }
    for r in &r.scrape {
        let cell = |f: &Figures| format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms);
        println!(
            "  {:<14} quiet {}  scraped {}  ({} scrapes, {:.3}x)",
            r.what,
            cell(&r.quiet),
            cell(&r.scraped),
            r.scrapes,
            r.scraped.rps / r.quiet.rps.max(1e-9)
        );
    }
}
