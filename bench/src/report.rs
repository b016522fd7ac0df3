//! The benchmark's document (the `--json` output): every section's rows, one field each, and
//! the types of those rows; the targets they were held to and the notes; the report's head
//! and tail as printed. Each section fills, judges and prints its own rows
//! ([`super::section`]). The rows are here rather than in their sections so the document
//! depends on no section (the sections all depend on it).

use super::load::{Figures, Tail};
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
    pub chat_list: Vec<ListRow>,
    /// Instructions per request (callgrind), by load and side.
    pub instructions: Vec<InstructionRow>,
    /// Section `spin`: solubility's snapshot under `spin up` on each store, beside the host;
    /// one row per endpoint (`property` holds its path), 16 connections.
    pub spin: Vec<PredictRow>,
    /// Section `open-loop`: `/predict` logp at 25, 50 and 75 % of native's capacity.
    pub open_loop: Vec<OpenLoopRow>,
    /// Section `fleet`: 1, 2 and 3 hosts behind HAProxy, and a host killed under load.
    pub fleet: Vec<FleetRow>,
    pub fleet_failover: Option<Failover>,
    /// Section `media`: digits and spoken-digits `/predict` by load (`property` names it).
    pub media: Vec<PredictRow>,
    /// Section `oip`: the Open Inference Protocol beside v1.2, by load (`property` names
    /// it; sides: v1.2, oip-json, oip-binary).
    pub oip: Vec<OipRow>,
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

    /// The machine and the settings, before the sections' tables.
    pub fn print_head(&self) {
        println!("\n{}\n{}\n", self.machine, self.settings);
    }

    /// After the sections' tables: resident memory (of every section's servers), the
    /// targets and the notes.
    pub fn print_tail(&self) {
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

// The types of the sections' rows (`PredictRow` above serves several).

/// One listing measured: median and slowest of its repetitions, and the answer's size.
#[derive(Debug, Clone, Serialize)]
pub struct ListRow {
    pub chats: usize,
    pub request: String,
    pub p50_ms: f64,
    pub max_ms: f64,
    pub bytes: usize,
}

/// One fleet size: chat writes and predictions through HAProxy.
#[derive(Debug, Clone, Serialize)]
pub struct FleetRow {
    pub hosts: usize,
    pub chat_writes: Figures,
    pub predictions: Figures,
}

/// A host SIGKILLed under prediction load.
#[derive(Debug, Clone, Serialize)]
pub struct Failover {
    /// From the kill until HAProxy had the host out of rotation.
    pub window_ms: f64,
    /// Requests that failed meanwhile, of those sent.
    pub failed: u64,
    pub answered: u64,
}

/// One server and one load: instructions per request.
#[derive(Debug, Clone, Serialize)]
pub struct InstructionRow {
    pub load: String,
    pub side: String,
    pub requests: u64,
    pub per_request: f64,
    /// The guest's part of `per_request` (the host only).
    pub guest_per_request: Option<f64>,
}

/// One load, measured on each side (`v1.2`, `oip-json`, `oip-binary`).
#[derive(Debug, Clone, Serialize)]
pub struct OipRow {
    /// What was asked (`molprop logp`, `minilm 4 texts`).
    pub load: String,
    pub connections: usize,
    pub sides: Vec<(String, Figures)>,
}

impl OipRow {
    pub fn side(&self, name: &str) -> Option<&Figures> {
        self.sides.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }
}

/// One load: its share of native's capacity, the rate sent, and each side's tail.
#[derive(Debug, Clone, Serialize)]
pub struct OpenLoopRow {
    pub share: f64,
    pub rate: f64,
    pub host: Tail,
    pub native: Tail,
}

/// Section `redis`: the registry and `/predict` on one store.
#[derive(Debug, Clone, Serialize)]
pub struct StoreRow {
    /// `sqlite` or `redis`.
    pub store: String,
    pub registry: Throughput,
    /// `/predict` (logp) at 16 connections.
    pub predict_rps: f64,
    pub predict_p99_ms: f64,
}

/// Section `registry`: registrations by many clients at once.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    pub clients: usize,
    /// Completed register + unregister pairs per second.
    pub registrations_per_s: f64,
    /// Both operations counted.
    pub operations_per_s: f64,
    /// Times a port was assigned while another client still held it (must be 0).
    pub duplicate_ports: u64,
    pub errors: u64,
}

/// Section `registry`: latency at a number of active registrations.
#[derive(Debug, Clone, Serialize)]
pub struct ScalePoint {
    pub active_registrations: usize,
    pub register: Figures,
    pub unregister: Figures,
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

/// One measured step: its median and spread over `runs` runs, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    pub what: String,
    pub runs: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub min_ms: f64,
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
