//! `edge-bench` (run by `cargo xtask bench`): measures the product beside its alternatives on
//! this machine and prints one table with the targets (issues 7 and 11). Every side of a
//! comparison runs in the same invocation, alternating round by round, so ratios hold on a
//! noisy machine.
//!
//! The bench is its sections ([`SECTIONS`]: `/predict`, solubility, Spin,
//! embeddings, the Open Inference Protocol, pictures and sounds, the language model,
//! start-up, the open loop, the fleet, the registry, Redis, the chat list, the metrics'
//! cost, a SMILES file, the ONNX component's costs, the memory of `up`, instructions per
//! request): this file runs those asked for, judges and prints every one, and writes the
//! figures.

mod args;
mod chats;
mod compare;
mod component;
mod embeddings;
mod fleet;
mod inputs;
mod instructions;
mod library;
mod llm;
mod load;
mod media;
mod memory;
mod oip;
mod onnx;
mod open_loop;
mod peers;
mod predict;
mod procs;
mod redis;
mod registry;
mod report;
mod scrape;
mod section;
mod spin;
mod startup;

use anyhow::{Context, Result};
use args::BenchArgs;
use clap::{CommandFactory, FromArgMatches};
use peers::Paths;
use report::Report;
use section::{Bench, Section};
use std::path::PathBuf;
use std::time::Duration;

/// Every section, in the order they run, print and list their targets.
pub const SECTIONS: [Section; 18] = [
    predict::SECTION,
    onnx::SECTION,
    spin::SECTION,
    embeddings::SECTION,
    oip::SECTION,
    media::SECTION,
    llm::SECTION,
    startup::SECTION,
    open_loop::SECTION,
    fleet::SECTION,
    registry::SECTION,
    redis::SECTION,
    chats::SECTION,
    scrape::SECTION,
    library::SECTION,
    component::SECTION,
    memory::SECTION,
    instructions::SECTION,
];

#[tokio::main]
async fn main() {
    let command =
        BenchArgs::command().mut_arg("only", |only| only.help(section::only_help(&SECTIONS)));
    let args = BenchArgs::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    if let Err(e) = run(args).await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(args: BenchArgs) -> Result<()> {
    let (duration, rounds) = if args.quick {
        (Duration::from_millis(300), 1)
    } else {
        (Duration::from_secs_f64(args.duration), args.rounds)
    };
    std::fs::create_dir_all(&args.work_dir)?;
    let paths = Paths {
        host: args.host.clone().map_or_else(beside_this_program, Ok)?,
        components: args.components.clone().map_or_else(built_components, Ok)?,
        native: args.native.clone(),
        python_app: args.python_app.clone(),
        python: args.python.clone(),
        work: std::fs::canonicalize(&args.work_dir)?,
        wrapper: Vec::new(),
    };
    let molecules = inputs::molecules(&args.molecules)?;
    let mut report = Report {
        machine: report::machine(),
        settings: format!(
            "{} s per run, {rounds} round(s) per side, {} molecules; load generator in this process, servers in their own",
            duration.as_secs_f64(),
            molecules.len()
        ),
        ..Report::default()
    };
    eprintln!("{}\n{}", report.machine, report.settings);

    let bench = Bench {
        paths: &paths,
        args: &args,
        molecules: &molecules,
        duration,
        rounds,
    };
    let wanted = |section: &str| args.only.is_empty() || args.only.iter().any(|s| s == section);
    for section in SECTIONS.iter().filter(|s| wanted(s.name)) {
        (section.run)(&bench, &mut report).await?;
    }
    for section in &SECTIONS {
        (section.targets)(&mut report);
    }

    report.print_head();
    for section in &SECTIONS {
        (section.print)(&report);
    }
    report.print_tail();
    if let Some(file) = &args.json {
        std::fs::write(file, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", file.display()))?;
        println!("\nfigures written to {}", file.display());
    }
    Ok(())
}

/// `runtime-host` in the directory of this program (cargo builds both into one).
fn beside_this_program() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let host = exe.with_file_name("runtime-host");
    anyhow::ensure!(
        host.exists(),
        "no runtime-host beside {} (build it with `cargo xtask build`, or pass --host)",
        exe.display()
    );
    Ok(host)
}

/// The components of the target directory this program was built into.
fn built_components() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let target = exe.parent().and_then(std::path::Path::parent);
    target
        .map(|t| t.join("wasm32-wasip2/release"))
        .context("this program is not in a cargo target directory; pass --components")
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
        let help = super::section::only_help(&SECTIONS);
        for s in &SECTIONS {
            assert!(!s.about.is_empty(), "{} says nothing about itself", s.name);
            assert!(
                help.contains(&format!("{} ({})", s.name, s.about)),
                "{help}"
            );
        }
    }
}
