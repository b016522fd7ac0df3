//! The benchmark's document: every section's rows (one field each, the `--json` output),
//! the targets they were held to and the notes; the report's head and tail as printed.
//! Each section prints its own rows and judges its own targets ([`super::section`]).

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
    pub embeddings: Vec<super::embeddings::EmbeddingRow>,
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
    pub scrape: Vec<super::scrape::ScrapeRow>,
    /// A SMILES file scored end to end (`runtime-host predict` against `up`), by side.
    pub library: Vec<super::library::LibraryRow>,
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
    pub media_steps: Vec<super::media::StepRow>,
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
