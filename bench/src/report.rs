//! The benchmark's figures, the targets they are held to (issue 7), and how both print.

use super::load::Figures;
use super::redis::StoreRow;
use super::registry::{ScalePoint, Throughput};
use serde::Serialize;

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub machine: String,
    pub settings: String,
    pub predict: Vec<PredictRow>,
    /// Embeddings (minilm), per load.
    pub embeddings: Vec<EmbeddingRow>,
    /// `/health` at 64 connections, per side.
    pub health: Vec<(String, Figures)>,
    pub registry: Option<Throughput>,
    pub registry_scale: Vec<ScalePoint>,
    /// The registry and `/predict` with the store on SQLite and on Redis.
    pub stores: Vec<StoreRow>,
    pub startup_cold_ms: Option<f64>,
    pub startup_warm_ms: Option<f64>,
    /// Resident memory, MiB, by what was measured.
    pub memory_mib: Vec<(String, f64)>,
    /// Resident memory of `runtime-host up`, MiB: (which models, how many, MiB).
    pub up_rss_mib: Vec<(String, usize, f64)>,
    /// `/predict` and `/health` quiet and while the metrics are scraped.
    pub scrape: Vec<ScrapeRow>,
    /// A SMILES file scored end to end (`runtime-host predict` against `up`), by side.
    pub library: Vec<LibraryRow>,
    /// `GET /api/chats` with many chats stored.
    pub chat_list: Vec<super::chats::ListRow>,
    /// Instructions per request (callgrind), by load and side.
    pub instructions: Vec<super::instructions::InstructionRow>,
    /// Section `spin`: solubility's snapshot under `spin up` on each store, beside the host;
    /// one row per endpoint (`property` holds its path), 16 connections.
    pub spin: Vec<PredictRow>,
    /// Section `open-loop`: `/predict` logp at 25, 50 and 75 % of native's capacity.
    pub open_loop: Vec<super::open_loop::OpenLoopRow>,
    /// Section `fleet`: 1, 2 and 3 hosts behind HAProxy, and a host killed under load.
    pub fleet: Vec<super::fleet::FleetRow>,
    pub fleet_failover: Option<super::fleet::Failover>,
    /// Section `media`: digits and spoken-digits `/predict` by load (`property` names it).
    pub media: Vec<PredictRow>,
    /// Section `oip`: the Open Inference Protocol beside v1.2, by load (`property` names
    /// it; sides: v1.2, oip-json, oip-binary).
    pub oip: Vec<super::oip::OipRow>,
    /// Section `llm`: the language model beside llama-cpp-python.
    pub llm: Option<super::llm::figures::LlmReport>,
    /// Section `media`: steps timed without the load generator.
    pub media_steps: Vec<StepRow>,
    pub targets: Vec<Target>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PredictRow {
    pub property: String,
    pub connections: usize,
    /// (side, figures): host, native, python.
    pub sides: Vec<(String, Figures)>,
}

impl PredictRow {
    pub fn side(&self, name: &str) -> Option<&Figures> {
        self.sides.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }
}

/// One load of the scrape section: the same requests, quiet and while `/metrics` is read.
#[derive(Debug, Clone, Serialize)]
pub struct ScrapeRow {
    pub what: String,
    pub quiet: Figures,
    pub scraped: Figures,
    /// Scrapes made during the scraped runs.
    pub scrapes: usize,
}

/// One side of the library section: `model` (logp, solubility) over a file of `rows`
/// SMILES by `side` (host: `runtime-host predict` against `up`; native: `molprop-native
/// --file`; python: `score_file.py`); the median time of its runs, spawn to exit.
#[derive(Debug, Clone, Serialize)]
pub struct LibraryRow {
    pub model: String,
    pub side: String,
    pub rows: usize,
    pub seconds: f64,
    pub rows_per_s: f64,
    /// The process's peak resident memory (VmHWM).
    pub peak_rss_mib: Option<f64>,
}

impl Report {
    /// The library row of `model` by `side` over `rows` molecules.
    pub fn library_row(&self, model: &str, side: &str, rows: usize) -> Option<&LibraryRow> {
        self.library
            .iter()
            .find(|r| r.model == model && r.side == side && r.rows == rows)
    }
}

/// One load of the embeddings section: requests of `texts_per_request` sentences.
#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingRow {
    pub texts_per_request: usize,
    pub connections: usize,
    /// (side, figures of requests): host, python.
    pub sides: Vec<(String, Figures)>,
}

impl EmbeddingRow {
    /// Sentences embedded per second by `side`.
    pub fn per_second(&self, side: &str) -> Option<f64> {
        self.sides
            .iter()
            .find(|(n, _)| n == side)
            .map(|(_, f)| f.rps * self.texts_per_request as f64)
    }

    fn side(&self, name: &str) -> Option<&Figures> {
        self.sides.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub name: String,
    pub goal: String,
    pub measured: String,
    pub met: bool,
}

impl Report {
    pub fn target(&mut self, name: &str, goal: &str, measured: String, met: bool) {
        self.targets.push(Target {
            name: name.into(),
            goal: goal.into(),
            measured,
            met,
        });
    }

    /// Solubility under `spin up` (issue 27), where the bench found a `spin` to run.
    fn print_spin(&self) {
        let spin_rows: Vec<&PredictRow> = self
            .predict
            .iter()
            .filter(|r| r.side("spin-snapshot").is_some() || r.side("spin-generic").is_some())
            .collect();
        if spin_rows.is_empty() {
            return;
        }
        println!(
            "\nsolubility under `spin up` (requests/s, p50 / p99 ms; a fresh instance per request)"
        );
        println!(
            "  {:>5}  {:>24} {:>24} {:>24}",
            "conns", "spin, generic + mount", "spin, snapshot", "host --instance-reuse 1"
        );
        for row in spin_rows {
            let cell = |side: &str| {
                row.side(side).map_or("-".to_owned(), |f| {
                    format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
                })
            };
            println!(
                "  {:>5}  {:>24} {:>24} {:>24}",
                row.connections,
                cell("spin-generic"),
                cell("spin-snapshot"),
                cell("host-reuse1")
            );
        }
    }

    /// Section `spin` (issue 47 §3).
    fn print_spin_stores(&self) {
        if self.spin.is_empty() {
            return;
        }
        println!(
            "\nsolubility snapshot under `spin up`, 16 connections (requests/s, p50 / p99 ms)"
        );
        println!(
            "  {:<9} {:>24} {:>24} {:>24} {:>24}",
            "endpoint",
            "spin, SQLite store",
            "spin, Redis store",
            "spin, counters in memory",
            "runtime-host model"
        );
        for row in &self.spin {
            let cell = |side: &str| {
                row.side(side).map_or("-".to_owned(), |f| {
                    format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
                })
            };
            println!(
                "  {:<9} {:>24} {:>24} {:>24} {:>24}",
                row.property,
                cell("spin-sqlite"),
                cell("spin-redis"),
                cell("spin-memory"),
                cell("host")
            );
        }
    }

    pub fn print(&self) {
        println!("\n{}\n{}\n", self.machine, self.settings);
        println!("/predict (requests/s, p50 / p99 ms): molprop logp and all; solubility logS");
        println!(
            "  {:<6} {:>5}  {:>24} {:>24} {:>24} {:>24} {:>24}  {:>11} {:>11} {:>13}",
            "prop",
            "conns",
            "runtime-host",
            "host --instance-reuse 1",
            "host, Winch's code",
            "native",
            "python",
            "host/native",
            "host/python",
            "Winch/host"
        );
        for row in &self.predict {
            let cell = |side: &str| {
                row.side(side).map_or("-".to_owned(), |f| {
                    format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
                })
            };
            let ratio = |one: &str, other: &str| match (row.side(one), row.side(other)) {
                (Some(h), Some(o)) if o.rps > 0.0 => format!("{:.2}x", h.rps / o.rps),
                _ => "-".into(),
            };
            println!(
                "  {:<6} {:>5}  {:>24} {:>24} {:>24} {:>24} {:>24}  {:>11} {:>11} {:>13}",
                row.property,
                row.connections,
                cell("host"),
                cell("host-reuse1"),
                cell("host-baseline"),
                cell("native"),
                cell("python"),
                ratio("host", "native"),
                ratio("host", "python"),
                ratio("host-baseline", "host")
            );
        }
        self.print_spin();
        self.print_spin_stores();
        super::fleet::print(&self.fleet, &self.fleet_failover);
        super::open_loop::print(&self.open_loop);
        super::oip::print(&self.oip);
        if !self.embeddings.is_empty() {
            println!("\nembeddings (sentences/s, request p50 / p99 ms): minilm");
            println!(
                "  {:>5} {:>5}  {:>24} {:>24}  {:>11}",
                "texts", "conns", "runtime-host", "python", "host/python"
            );
        }
        for row in &self.embeddings {
            let cell = |side: &str| match (row.per_second(side), row.side(side)) {
                (Some(n), Some(f)) => format!("{n:>8.0} {:>6.2}/{:<7.2}", f.p50_ms, f.p99_ms),
                _ => "-".to_owned(),
            };
            let ratio = match (row.per_second("host"), row.per_second("python")) {
                (Some(h), Some(p)) if p > 0.0 => format!("{:.2}x", h / p),
                _ => "-".into(),
            };
            println!(
                "  {:>5} {:>5}  {:>24} {:>24}  {:>11}",
                row.texts_per_request,
                row.connections,
                cell("host"),
                cell("python"),
                ratio
            );
        }
        println!("\n/health at 64 connections (requests/s, p50 / p99 ms)");
        for (side, f) in &self.health {
            println!(
                "  {side:<12} {:>8.0} {:>6.2} / {:.2}",
                f.rps, f.p50_ms, f.p99_ms
            );
        }
        if let Some(t) = &self.registry {
            println!(
                "\nregistry, {} clients: {:.0} registrations/s ({:.0} operations/s), {} duplicate ports, {} errors",
                t.clients, t.registrations_per_s, t.operations_per_s, t.duplicate_ports, t.errors
            );
        }
        for p in &self.registry_scale {
            println!(
                "  {:>5} active: register p50 {:.2} ms p99 {:.2} ms; unregister p50 {:.2} ms p99 {:.2} ms",
                p.active_registrations,
                p.register.p50_ms,
                p.register.p99_ms,
                p.unregister.p50_ms,
                p.unregister.p99_ms
            );
        }
        if !self.stores.is_empty() {
            println!(
                "\nkey-value store: registry (32 clients) and /predict logp (16 conns)\n  {:<7} {:>16} {:>10} {:>7} {:>14} {:>10}",
                "store", "registrations/s", "duplicates", "errors", "predict req/s", "p99 ms"
            );
        }
        for s in &self.stores {
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
        if let (Some(c), Some(w)) = (self.startup_cold_ms, self.startup_warm_ms) {
            println!(
                "\nstart-up, exec of `runtime-host model` to registered and healthy: cold {c:.0} ms, warm {w:.0} ms (median)"
            );
        }
        if let Some(first) = self.chat_list.first() {
            println!("\nchat list with {} chats stored", first.chats);
        }
        for c in &self.chat_list {
            println!(
                "  GET {:<22} p50 {:>7.2} ms, max {:>7.2} ms, {:>9} bytes",
                c.request, c.p50_ms, c.max_ms, c.bytes
            );
        }
        if !self.scrape.is_empty() {
            println!("\nmetrics scraped every 250 ms vs not (16 connections; req/s, p50 / p99 ms)");
        }
        for r in &self.scrape {
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
        if !self.library.is_empty() {
            println!(
                "\nscoring a SMILES file, spawn to exit (median of the rounds)\n  {:<10} {:<8} {:>8} {:>9} {:>10} {:>14}",
                "model", "side", "rows", "seconds", "rows/s", "peak RSS MiB"
            );
        }
        for r in &self.library {
            let rss = r.peak_rss_mib.map_or("-".into(), |m| format!("{m:.1}"));
            println!(
                "  {:<10} {:<8} {:>8} {:>9.2} {:>10.0} {:>14}",
                r.model, r.side, r.rows, r.seconds, r.rows_per_s, rss
            );
        }
        super::instructions::print(&self.instructions);
        println!("\nresident memory (VmRSS)");
        for (what, mib) in &self.memory_mib {
            println!("  {what:<44} {mib:>7.1} MiB");
        }
        println!("\ntargets");
        for t in &self.targets {
            let mark = if t.met { "MET " } else { "MISS" };
            println!("  {mark}  {:<40} {:<26} {}", t.name, t.goal, t.measured);
        }
        for n in &self.notes {
            println!("note: {n}");
        }
    }
}

/// The machine the figures come from: its cores and CPU model.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("machine: {cores} cores, {cpu}")
}

/// One measured step: its median and spread over `runs` runs, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    pub what: String,
    pub runs: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub min_ms: f64,
}
