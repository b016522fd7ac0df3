//! `runtime-host compile`: components compiled into the cache ahead of their deployment,
//! each one's size and compile time printed (a component already cached takes
//! milliseconds). Compiled as they are, without pre-initializing them.

use anyhow::{Context, Result};
use clap::Args;
use host_core::runtime::engine::{self, Tier};
use host_core::runtime::flags::RuntimeArgs;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompileArgs {
    /// The components to compile.
    #[arg(required = true)]
    pub components: Vec<PathBuf>,
    /// Which compiler: `optimized` (Cranelift, what components are served from) or
    /// `baseline` (Winch: fast to compile, slower to run).
    #[arg(long, value_enum, default_value = "optimized")]
    pub tier: Tier,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

pub fn run(args: &CompileArgs) -> Result<()> {
    let limits = args.runtime.limits();
    let engine = match args.tier {
        Tier::Optimized => engine::build_engine(&limits)?,
        Tier::Baseline => engine::build_baseline_engine(&limits)?,
    };
    let cache_dir = args.runtime.cache_dir()?;
    for path in &args.components {
        let started = std::time::Instant::now();
        let size = std::fs::metadata(path)
            .with_context(|| format!("reading component {}", path.display()))?
            .len();
        engine::load_proxy(&engine, path, &cache_dir)?;
        println!(
            "{}: {:.1} MB, compiled in {:.2} s",
            path.display(),
            size as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
