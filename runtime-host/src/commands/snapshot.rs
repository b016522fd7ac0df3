//! `runtime-host snapshot`: a model component written out pre-initialized with its files
//! (`--dir`): a `.wasm` that starts with its model loaded, for Spin hosts (no files mount
//! needed) or any host.

use anyhow::Result;
use clap::Args;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::runtime::cache::file::write_atomically;
use host_core::runtime::flags::{Access, RuntimeArgs};
use host_core::runtime::preinit::{self, Source};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// The model component (it must export edge:model/preinit, as `model_sdk::preinit!`
    /// makes it), e.g. target/wasm32-wasip2/release/onnx_model.wasm.
    pub component: PathBuf,
    /// Where to write the pre-initialized component, e.g. solubility.wasm.
    #[arg(long, short)]
    pub output: PathBuf,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

pub async fn run(args: SnapshotArgs) -> Result<()> {
    let runtime = &args.runtime;
    let whom = format!("component {}", args.component.display());
    let grants = runtime.grants(
        KeyValue::in_memory(),
        &runtime.ai_models(),
        &[],
        &Access::flags(whom),
    )?;
    let source = Source::read(&args.component, &grants.files)?;
    let limits = runtime.limits();
    let bytes = preinit::snapshot_of(&source, &grants, &limits, &runtime.cache_dir()?).await?;
    write_atomically(&args.output, &bytes)?;
    println!(
        "wrote {} ({:.1} MB), {} pre-initialized with {}: it serves without those files \
         (Spin: point the component's `source` at it, no `files` needed)",
        args.output.display(),
        bytes.len() as f64 / 1e6,
        args.component.display(),
        match runtime.dirs.as_slice() {
            [] => "no files".to_owned(),
            dirs => dirs.join(", "),
        }
    );
    Ok(())
}
