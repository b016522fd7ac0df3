//! A section of the bench: its name (for `--only`), what it measures (for `--help`), how it
//! runs (adding its rows to the [`Report`]), the targets it holds its rows to, and how it
//! prints them. A new section is one module with a `SECTION`, added to the list in
//! `main.rs` (`SECTIONS`); its rows are a field of the report, the `--json` document.

use super::args::BenchArgs;
use super::peers::Paths;
use super::report::Report;
use anyhow::Result;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// What every section is given: where things are, the command line, the molecules, and how
/// long and how often to measure.
pub struct Bench<'a> {
    pub paths: &'a Paths,
    pub args: &'a BenchArgs,
    pub molecules: &'a [String],
    /// One measured run.
    pub duration: Duration,
    /// Runs per side and load; sides alternate run by run.
    pub rounds: usize,
}

/// A section's run, under way.
pub type Running<'a> = Pin<Box<dyn Future<Output = Result<()>> + 'a>>;

pub struct Section {
    /// Its name for `--only`.
    pub name: &'static str,
    /// What it measures, as `--help` says it.
    pub about: &'static str,
    /// Measures, adding its rows (and notes, and resident memory) to the report.
    pub run: for<'a> fn(&'a Bench<'a>, &'a mut Report) -> Running<'a>,
    /// Adds the targets its rows are held to (nothing where it has no rows).
    pub targets: fn(&mut Report),
    /// Prints its rows (nothing where it has none).
    pub print: fn(&Report),
}

/// For a section that holds its rows to no target.
pub fn no_targets(_: &mut Report) {}

/// For a section whose figures print elsewhere (in the resident memory, or as notes).
pub fn prints_nothing(_: &Report) {}

/// `--only`'s help: every section of `sections` by name, with what it measures.
pub fn only_help(sections: &[Section]) -> String {
    let sections: Vec<String> = sections
        .iter()
        .map(|s| format!("{} ({})", s.name, s.about))
        .collect();
    format!(
        "Run only these sections (comma-separated): {}. Default: all.",
        sections.join(", ")
    )
}
