//! The bench's command line.

use clap::Parser;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Measures the product beside its alternatives on this machine and prints the figures against the targets (`cargo xtask bench` builds everything first and runs it from the repository root)."
)]
pub struct BenchArgs {
    /// Seconds per measured run.
    #[arg(long, default_value_t = 2.0)]
    pub duration: f64,
    /// Runs per side and load; sides alternate run by run.
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
    /// Very short runs (0.3 s, one round): checks that everything works, not figures.
    #[arg(long)]
    pub quick: bool,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// The molecule mix: a TSV whose first column is SMILES (one header row).
    #[arg(long, default_value = "../shared/testdata/molprop-reference.tsv")]
    pub molecules: PathBuf,
    /// The natively compiled molprop server.
    #[arg(long, default_value = "target/release/molprop-native")]
    pub native: PathBuf,
    /// The Python peer's directory (app.py, requirements.txt).
    #[arg(long, default_value = "bench/peers/python")]
    pub python_app: PathBuf,
    /// The Python interpreter used to create the peer's virtualenv.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// Skip the Python peers.
    #[arg(long)]
    pub no_python: bool,
    /// Where the embedding model's files are (`cargo xtask install-models` puts them here);
    /// without them the embeddings section is skipped.
    #[arg(long, default_value = ".data/ai-models")]
    pub ai_models_dir: PathBuf,
    /// Run only these sections (comma-separated; `main.rs` gives the list, with what each
    /// measures, as this option's help). Default: all.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// The `runtime-host` binary to measure (default: the one beside this program).
    #[arg(long)]
    pub host: Option<PathBuf>,
    /// Where the built components are (default: `wasm32-wasip2/release` of the target
    /// directory this program was built into).
    #[arg(long)]
    pub components: Option<PathBuf>,
    /// Scratch directory: data directories, logs of every process started, the virtualenv.
    #[arg(long, default_value = "target/bench")]
    pub work_dir: PathBuf,
}
