//! Section `library` (issue 25 §4): a file of 100,000 SMILES scored end to end by
//! `runtime-host predict` against `runtime-host up` (molprop `logp` and the solubility ONNX
//! model), beside the same molprop code in one native loop (`molprop-native --file`) and a
//! Python script over the file (RDKit; RDKit + onnxruntime for solubility,
//! `bench/peers/python/score_file.py`). Each run is timed from spawn to exit, so start-up
//! and reading and writing the files count on every side; `predict`'s peak memory is taken
//! on the whole file and on a fifth of it, to show it does not grow with the file.

use super::peers::{self, Paths};
use super::procs::{self, Finished};
use super::report::{LibraryRow, Report};
use super::section::Section;
use crate::args::BenchArgs;
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the library's molecules come from, in this order, repeated: 3,000 drug-like
/// molecules with RDKit's reference values, then the 257 of the solubility test set.
const SOURCES: [(&str, usize); 2] = [
    ("crates/chem/tests/data/rdkit-samples.tsv", 0),
    ("models/solubility/test_set.tsv", 1),
];

/// The sides of one model's comparison: which model, and the `predict` flags it needs.
const MODELS: [(&str, &[&str]); 2] = [("logp", &["--data", "property=logp"]), ("solubility", &[])];

pub const SECTION: Section = Section {
    name: "library",
    about: "a file of 100,000 SMILES through `runtime-host predict` against `up`, beside the native loop and Python scripts",
    run: |b, r| Box::pin(library(b.paths, b.args, b.rounds, r)),
    targets,
    print,
};

pub async fn library(
    paths: &Paths,
    args: &BenchArgs,
    rounds: usize,
    report: &mut Report,
) -> Result<()> {
    let rows = if args.quick { 5_000 } else { 100_000 };
    let (whole, fifth) = (
        write_library(&paths.work, rows)?,
        write_library(&paths.work, rows / 5)?,
    );
    let python = if args.no_python {
        report
            .notes
            .push("library: Python scripts skipped (--no-python)".into());
        None
    } else {
        match peers::python_env(paths, &peers::CHEMISTRY_PEERS).await {
            Ok(py) => Some(py),
            Err(why) => {
                report
                    .notes
                    .push(format!("library: Python scripts skipped: {why}"));
                None
            }
        }
    };
    let models = models_dir(paths)?;
    let (up, deployed) = peers::up(paths, "library-up", &models, &[]).await?;
    let url_of = |name: &str| {
        deployed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, addr)| format!("http://{addr}"))
            .with_context(|| format!("`up` did not deploy {name}: {deployed:?}"))
    };
    let urls = [url_of("molprop")?, url_of("solubility")?];
    let mut runs: Vec<(LibraryRow, Vec<f64>)> = Vec::new();
    let mut record = |model: &str, side: &str, rows: usize, run: Finished| {
        let key = |r: &LibraryRow| r.model == model && r.side == side && r.rows == rows;
        match runs.iter_mut().find(|(r, _)| key(r)) {
            Some((row, times)) => {
                row.peak_rss_mib = match (row.peak_rss_mib, run.peak_rss_mib) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                times.push(run.seconds);
            }
            None => runs.push((
                LibraryRow {
                    model: model.into(),
                    side: side.into(),
                    rows,
                    seconds: 0.0,
                    rows_per_s: 0.0,
                    peak_rss_mib: run.peak_rss_mib,
                },
                vec![run.seconds],
            )),
        }
    };
    // The native loop and `predict` alternate, at least three rounds, as their ratio is the
    // close one; the fifth of the file goes first and warms the deployment up. The Python
    // scripts are five times slower or more and run once.
    let rounds = if args.quick { 1 } else { rounds.max(3) };
    for round in 0..rounds {
        for ((model, flags), url) in MODELS.iter().zip(&urls) {
            eprintln!(
                "library: {rows} molecules through {model} (round {}) ...",
                round + 1
            );
            if *model == "logp" {
                let run = predict(paths, &fifth, url, flags, rows / 5).await?;
                record(model, "host", rows / 5, run);
                record(model, "native", rows, native(paths, &whole, rows).await?);
            }
            let run = predict(paths, &whole, url, flags, rows).await?;
            record(model, "host", rows, run);
            if let (0, Some(py)) = (round, &python) {
                record(
                    model,
                    "python",
                    rows,
                    script(paths, py, model, &whole, rows).await?,
                );
            }
        }
    }
    up.stop().await;
    for (mut row, mut times) in runs {
        times.sort_by(f64::total_cmp);
        let mid = times.len() / 2;
        row.seconds = if times.len() % 2 == 0 {
            (times[mid - 1] + times[mid]) / 2.0
        } else {
            times[mid]
        };
        row.rows_per_s = row.rows as f64 / row.seconds;
        report.library.push(row);
    }
    Ok(())
}

/// `library-<rows>.smi` in `work`: the molecules of [`SOURCES`] repeated up to `rows` lines,
/// each named `m<line>`.
fn write_library(work: &Path, rows: usize) -> Result<PathBuf> {
    let mut molecules = Vec::new();
    for (file, column) in SOURCES {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading {file} (run the bench from the repository root)"))?;
        let smiles = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split('\t').nth(column));
        molecules.extend(smiles.filter(|s| !s.is_empty()).map(str::to_owned));
    }
    let path = work.join(format!("library-{rows}.smi"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for (i, smiles) in molecules.iter().cycle().take(rows).enumerate() {
        writeln!(out, "{smiles} m{}", i + 1)?;
    }
    out.flush()?;
    Ok(path)
}

/// A `--models` directory holding molprop (a hard link or copy) and the solubility model (a
/// symbolic link to its directory).
fn models_dir(paths: &Paths) -> Result<PathBuf> {
    let dir = procs::fresh_dir(&paths.work, "library-models")?;
    procs::place_component(&paths.component("molprop")?, &dir.join("molprop.wasm"))?;
    let solubility = std::fs::canonicalize("models/solubility")
        .context("models/solubility (run the bench from the repository root)")?;
    std::os::unix::fs::symlink(solubility, dir.join("solubility"))?;
    Ok(dir)
}

/// `runtime-host predict LIBRARY --url URL` with its defaults; checks every row was written.
async fn predict(
    paths: &Paths,
    library: &Path,
    url: &str,
    flags: &[&str],
    rows: usize,
) -> Result<Finished> {
    let output = paths.work.join("library-predictions.csv");
    let mut args = vec![
        "predict".into(),
        library.display().to_string(),
        "--url".into(),
        url.into(),
        "--output".into(),
        output.display().to_string(),
        "--force".into(),
        "--quiet".into(),
    ];
    args.extend(flags.iter().map(|f| f.to_string()));
    let run = procs::run_to_end("predict", &paths.host, &args, &paths.log("predict")).await?;
    expect_rows(&output, rows)?;
    Ok(run)
}

/// `molprop-native --file LIBRARY logp`, which prints `N molecules in ...`.
async fn native(paths: &Paths, library: &Path, rows: usize) -> Result<Finished> {
    let args = [
        "--file".into(),
        library.display().to_string(),
        "logp".into(),
    ];
    let log = paths.log("native-file");
    let run = procs::run_to_end("molprop-native", &paths.native, &args, &log).await?;
    let scored: Option<usize> = run
        .stdout
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok());
    if scored != Some(rows) {
        bail!(
            "molprop-native scored {scored:?} of {rows} molecules: {}",
            run.stdout
        );
    }
    Ok(run)
}

/// `score_file.py MODEL LIBRARY OUT.csv` in the chemistry virtualenv.
async fn script(
    paths: &Paths,
    python: &Path,
    model: &str,
    library: &Path,
    rows: usize,
) -> Result<Finished> {
    let output = paths.work.join("library-python.csv");
    let args = [
        paths.python_app.join("score_file.py").display().to_string(),
        model.into(),
        library.display().to_string(),
        output.display().to_string(),
    ];
    let log = paths.log("python-score-file");
    let run = procs::run_to_end("score_file.py", python, &args, &log).await?;
    expect_rows(&output, rows)?;
    Ok(run)
}

/// Fails unless the CSV `output` holds a header and `rows` rows.
fn expect_rows(output: &Path, rows: usize) -> Result<()> {
    let text =
        std::fs::read_to_string(output).with_context(|| format!("reading {}", output.display()))?;
    let written = text.lines().count().saturating_sub(1);
    if written != rows {
        bail!("{} holds {written} rows, not {rows}", output.display());
    }
    Ok(())
}

/// The library row of `model` by `side` over `rows` molecules.
fn library_row<'r>(
    report: &'r Report,
    model: &str,
    side: &str,
    rows: usize,
) -> Option<&'r LibraryRow> {
    report
        .library
        .iter()
        .find(|r| r.model == model && r.side == side && r.rows == rows)
}

/// Issue 25 §4: the file through `predict` against the native loop and the Python scripts,
/// and `predict`'s memory flat in the file's size.
fn targets(r: &mut Report) {
    let Some(rows) = r.library.iter().map(|l| l.rows).max() else {
        return;
    };
    let rate = |r: &Report, model: &str, side: &str| {
        library_row(r, model, side, rows).map(|l| l.rows_per_s)
    };
    if let (Some(h), Some(n)) = (rate(r, "logp", "host"), rate(r, "logp", "native")) {
        let ratio = h / n;
        r.target(
            &format!("library logp: predict vs native, {rows}"),
            ">= 0.8x molecules/s",
            format!("{ratio:.2}x ({h:.0} vs {n:.0}/s)"),
            ratio >= 0.8,
        );
    }
    for model in ["logp", "solubility"] {
        if let (Some(h), Some(py)) = (rate(r, model, "host"), rate(r, model, "python")) {
            let ratio = h / py;
            r.target(
                &format!("library {model}: predict vs Python script"),
                ">= 5x molecules/s",
                format!("{ratio:.1}x ({h:.0} vs {py:.0}/s)"),
                ratio >= 5.0,
            );
        }
    }
    let peak = |n: usize| library_row(r, "logp", "host", n).and_then(|l| l.peak_rss_mib);
    if let (Some(small), Some(whole)) = (peak(rows / 5), peak(rows)) {
        r.target(
            "library: predict's memory, 1/5 -> whole file",
            "flat (within 1.25x)",
            format!("{small:.1} -> {whole:.1} MiB"),
            whole <= small * 1.25,
        );
    }
}

fn print(r: &Report) {
    if !r.library.is_empty() {
        println!(
            "\nscoring a SMILES file, spawn to exit (median of the rounds)\n  {:<10} {:<8} {:>8} {:>9} {:>10} {:>14}",
            "model", "side", "rows", "seconds", "rows/s", "peak RSS MiB"
        );
    }
    for r in &r.library {
        let rss = r.peak_rss_mib.map_or("-".into(), |m| format!("{m:.1}"));
        println!(
            "  {:<10} {:<8} {:>8} {:>9.2} {:>10.0} {:>14}",
            r.model, r.side, r.rows, r.seconds, r.rows_per_s, rss
        );
    }
}
