//! Scoring a compound library, or a set of pictures or sounds, through a model:
//! `runtime-host predict`.
//!
//! The rows of a file ([`input`]), or picture and sound files ([`files`]), as [`plan`] chooses,
//! go to a deployment ([`target`]) in batches, several
//! requests at a time; the answers are written in input order ([`output`]) as they arrive,
//! with progress on standard error ([`progress`]) and an account at the end ([`summary`]).
//! The file is read as it is needed and at most `concurrency` batches are in flight, so memory
//! does not grow with the library. A stop (Ctrl-C) lets the batches in flight finish and be
//! written, so the output is valid and `--resume` continues it.

mod batches;
pub mod claim;
pub mod files;
pub mod input;
pub mod output;
pub mod plan;
pub mod progress;
pub mod sender;
pub mod summary;
pub mod target;

use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use input::Row;
use output::{Output, OutputFormat};
use sender::{Fatal, Sender};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
pub use summary::Summary;
use target::{Input, Target};

/// Flags of `runtime-host predict` that do not concern where the model runs.
#[derive(clap::Args, Debug, Clone)]
pub struct PredictArgs {
    /// The library: `.smi` (a SMILES and an optional name per line), `.csv`/`.tsv` (with a
    /// SMILES column, or feature columns for a tabular model), `.sdf` or `.jsonl`. For an
    /// image or audio model: picture or sound files, folders (their png, jpg, jpeg, gif, bmp,
    /// webp or wav, flac, ogg files) and globs (`'scans/*.png'`), or a table with
    /// --url-column.
    #[arg(required = true, num_args = 1.., value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the results (`.csv`, or `.jsonl` for JSON lines). Default: beside the
    /// input, named `<input>.predictions.csv` (a glob's: its folder's name); required for
    /// several inputs.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Output format (default: from the output file's extension).
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// The column (CSV/TSV) or field (JSON lines) holding the SMILES. Default: one named
    /// `smiles` (or `canonical_smiles`, `text`).
    #[arg(long)]
    pub column: Option<String>,
    /// The column (CSV/TSV) or field (JSON lines) holding URLs of pictures or sounds for an
    /// image or audio model to fetch (allow their host with --allow-outbound).
    #[arg(long, conflicts_with = "column", value_name = "COLUMN")]
    pub url_column: Option<String>,
    /// The column, field or SD data item naming each row. Default: `id` or `name` (the SD
    /// record's title), else the row's number.
    #[arg(long)]
    pub id_column: Option<String>,
    /// A field every request's `data` carries, `name=value` (e.g. `property=logp` for
    /// molprop); repeatable. A value that reads as JSON is sent as such.
    #[arg(long = "data", value_name = "NAME=VALUE")]
    pub data: Vec<String>,
    /// Rows per request. Default: as many as the model takes, up to 256.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub batch_size: Option<u32>,
    /// Requests in flight at once. Default: one more than the number of CPU cores.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: Option<u32>,
    /// Continue an output an interrupted run left: its rows are kept and the input is
    /// read from the first row it lacks.
    #[arg(long)]
    pub resume: bool,
    /// Replace an existing output file.
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,
    /// No progress lines (the summary is still printed).
    #[arg(long, short)]
    pub quiet: bool,
    /// Time between plain progress lines when standard error is not a terminal (a log file,
    /// a CI job); on a terminal, one line is redrawn in place.
    #[arg(long, default_value = "5", value_name = "SECONDS")]
    pub progress_every: u64,
    /// Longest one request may take.
    #[arg(long, default_value = "120", value_name = "SECONDS")]
    pub request_timeout: u64,
}

/// Rows per request when the model takes more: large enough that the request overhead is
/// small, small enough that progress moves and the work spreads over the connections.
const DEFAULT_BATCH: usize = 256;

impl PredictArgs {
    pub fn output_path(&self) -> Result<PathBuf> {
        if let Some(output) = &self.output {
            return Ok(output.clone());
        }
        let [input] = self.inputs.as_slice() else {
            bail!("several inputs: name the output file with -o");
        };
        // A glob's results are named after its folder, as the folder's own would be.
        let named = if files::is_pattern(input) {
            input.parent()
        } else {
            Some(input.as_path())
        };
        Ok(match named.and_then(|p| Some((p, p.file_name()?))) {
            Some((path, name)) => {
                let mut name = name.to_os_string();
                name.push(".predictions.csv");
                path.with_file_name(name)
            }
            None => PathBuf::from("predictions.csv"),
        })
    }

    fn shared_data(&self) -> Result<Map<String, Value>> {
        let mut data = Map::new();
        for pair in &self.data {
            let (name, value) = pair.split_once('=').with_context(|| {
                format!("--data `{pair}`: write NAME=VALUE, e.g. property=logp")
            })?;
            let value =
                serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
            data.insert(name.trim().to_owned(), value);
        }
        Ok(data)
    }
}

/// Scores `args.inputs` through the deployment at `url` until done or `stop` resolves.
pub async fn run(
    args: &PredictArgs,
    url: &str,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<Summary> {
    let started = Instant::now();
    let out_path = args.output_path()?;
    let out_format = args.format.unwrap_or_else(|| OutputFormat::of(&out_path));
    let client = service_client::HttpClient::new(Duration::from_secs(args.request_timeout));
    let target = Target::discover(&client, url).await?;
    let plan = plan::plan(args, &target)?;
    let total = plan.total;
    // Held until the run ends: a second run on this output is refused.
    let mut claimed = claim::claim(&out_path, args.resume, args.force)?;
    // A new output is put at its path with the first good answers (see `claim`).
    let mut pending = claimed.pending.take();
    let existing = if claimed.resuming {
        Some(output::existing(
            &mut claimed.file,
            &out_path,
            out_format,
            plan.keyed,
        )?)
    } else {
        None
    };
    let done_before = existing.as_ref().map_or(0, |e| e.rows.min(total));
    let mut rows = match &existing {
        Some(existing) => batches::remaining(plan.rows, existing, plan.keyed)?,
        None => plan.rows,
    };
    let input_column = plan.input_column;
    let mut known = target.output_fields.clone();
    known.push("warning".to_owned());
    let mut output = Output::open(
        claimed.file,
        out_format,
        input_column,
        known,
        existing.as_ref(),
    )?
    .with_feature_order(target.features.clone());

    // Never more than the model takes, whatever --batch-size asks.
    let batch_size = args
        .batch_size
        .map_or(DEFAULT_BATCH, |n| n as usize)
        .min(target.max_batch(plan.input))
        .max(1);
    let concurrency = args
        .concurrency
        .map_or_else(default_concurrency, |n| n as usize);
    let budget = Arc::new(AtomicUsize::new(match plan.input {
        Input::Media { urls: false, .. } => batches::MAX_MEDIA_BATCH_BYTES,
        _ => batches::MAX_BATCH_BYTES,
    }));
    let sender = Arc::new(Sender {
        client,
        target: target.clone(),
        shared: args.shared_data()?,
        input: plan.input,
        budget: budget.clone(),
    });

    let stopping = Arc::new(AtomicBool::new(false));
    let flag = stopping.clone();
    let watcher = tokio::spawn(async move {
        stop.await;
        flag.store(true, Ordering::SeqCst);
    });
    let mut read_error = None;
    let batches = batches::Batches {
        rows: &mut rows,
        size: batch_size,
        budget: &budget,
        held: None,
        stopping: &stopping,
        error: &mut read_error,
    };
    let mut answers = futures_util::stream::iter(batches)
        .map(|batch| {
            let sender = sender.clone();
            async move {
                let outcomes = sender.predict(&batch).await;
                (batch, outcomes)
            }
        })
        .buffered(concurrency);
    let mut summary = Summary {
        model: target.model.clone(),
        total,
        output: out_path.display().to_string(),
        ..Summary::default()
    };
    if let Some(existing) = &existing {
        summary.add_existing(existing);
    }
    let mut progress = progress::Progress::new(
        total,
        done_before,
        args.quiet,
        Duration::from_secs(args.progress_every.max(1)),
    );
    let mut fatal = None;
    while let Some((batch, outcomes)) = answers.next().await {
        let outcomes = match outcomes {
            Ok(o) => o,
            Err(Fatal(why)) => {
                // Stop reading; the batches in flight still finish and are written in order
                // up to this one.
                stopping.store(true, Ordering::SeqCst);
                fatal.get_or_insert(why);
                continue;
            }
        };
        if fatal.is_some() {
            continue;
        }
        if summary.rows == 0
            && let Some(why) = shared_field_refused(&sender.shared, &outcomes)
        {
            stopping.store(true, Ordering::SeqCst);
            fatal = Some(why);
            continue;
        }
        let rows: Vec<(Row, output::Outcome)> = batch.into_iter().zip(outcomes).collect();
        output
            .write(&rows)
            .with_context(|| format!("writing {}", out_path.display()))?;
        if let Some(p) = pending.take() {
            p.publish()?;
        }
        rows.iter().for_each(|(_, o)| summary.count(o));
        progress.advance(rows.len() as u64);
    }
    drop(answers);
    watcher.abort();
    progress.finish();
    summary.elapsed = started.elapsed();
    summary.dropped = output.dropped.clone();
    summary.interrupted = stopping.load(Ordering::SeqCst)
        && fatal.is_none()
        && read_error.is_none()
        && summary.resumed + summary.rows < total;
    // Nothing good came back: no output file (a new one is never put in place), and no
    // `--resume` to suggest.
    let written = summary.resumed + summary.rows;
    let next = if written == 0 && pending.is_some() {
        format!(
            "nothing was written to {}; fix it and run the command again",
            out_path.display()
        )
    } else {
        format!("{written} rows were written; continue with --resume")
    };
    if let Some(e) = read_error {
        eprint!("{summary}");
        return Err(e.context(format!("{next} (after fixing the input)")));
    }
    if let Some(why) = fatal {
        eprint!("{summary}");
        bail!("{why}\n{next}");
    }
    // An input with no rows (or a stop before the first answer) still gets its output.
    if let Some(p) = pending.take() {
        p.publish()?;
    }
    Ok(summary)
}

/// When every row of the first batch failed for the same reason and it names a `--data`
/// field, that field is wrong for every row: stop rather than fail the whole library.
fn shared_field_refused(
    shared: &Map<String, Value>,
    outcomes: &[output::Outcome],
) -> Option<String> {
    let first = outcomes.first()?.error.as_ref()?;
    let all_same = outcomes.iter().all(|o| o.error.as_ref() == Some(first));
    let names_field = shared.keys().any(|k| first.contains(&format!("data.{k}")));
    (all_same && names_field)
        .then(|| format!("every row of the first batch failed: {first}; check --data"))
}

/// One request more than there are cores, so a core of a local deployment does not wait while
/// an answer travels and is written (about 5% faster than one per core on 2 cores; 4 was no
/// faster than 3).
fn default_concurrency() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get() + 1)
        .clamp(2, 16)
}
