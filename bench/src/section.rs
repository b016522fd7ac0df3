//! A section of the bench: its name (for `--only`), what it measures (for `--help`), how it
//! runs (adding its rows to the [`Report`]), the targets it holds its rows to, and how it
//! prints them. A new section is one module with a `SECTION`, added to [`SECTIONS`]; its
//! rows are a field of the report, which is the `--json` document.

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

/// Every section, in the order they run, print and list their targets.
pub const SECTIONS: [Section; 18] = [
    super::predict::SECTION,
    super::onnx::SECTION,
    super::spin::SECTION,
    super::embeddings::SECTION,
    super::oip::SECTION,
    super::media::SECTION,
    super::llm::SECTION,
    super::startup::SECTION,
    super::open_loop::SECTION,
    super::fleet::SECTION,
    super::registry::SECTION,
    super::redis::SECTION,
    super::chats::SECTION,
    super::scrape::SECTION,
    super::library::SECTION,
    super::component::SECTION,
    super::memory::SECTION,
    super::instructions::SECTION,
];

/// For a section that holds its rows to no target.
pub fn no_targets(_: &mut Report) {}

/// For a section whose figures print elsewhere (in the resident memory, or as notes).
pub fn prints_nothing(_: &Report) {}

/// `--only`'s help: every section by name, with what it measures.
pub fn only_help() -> String {
    let sections: Vec<String> = SECTIONS
        .iter()
        .map(|s| format!("{} ({})", s.name, s.about))
        .collect();
    format!(
        "Run only these sections (comma-separated): {}. Default: all.",
        sections.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::SECTIONS;

    #[test]
    fn every_section_has_its_own_name_and_says_what_it_measures() {
        let mut names: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SECTIONS.len(), "two sections share a name");
        for s in &SECTIONS {
            assert!(!s.about.is_empty(), "{} says nothing about itself", s.name);
            assert!(super::only_help().contains(&format!("{} (", s.name)));
        }
    }
}
