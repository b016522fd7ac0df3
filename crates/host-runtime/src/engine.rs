//! The wasmtime engine and how components are loaded into it.
//!
//! One engine per process: compiled code is shared, instances come from a pooling allocator
//! (fast per-request instantiation), compiled artifacts are cached on disk
//! ([`crate::compiled`]) so a restart does not recompile, and a ticker drives epoch
//! interruption, which enforces request deadlines.

use crate::compiled::{self, Artifact};
use crate::function_cache;
use crate::limits::Limits;
use crate::state::InstanceState;
use anyhow::{Context, Result};
use host_capabilities::{keyvalue, llm, variables};
use host_support::heap;
use std::path::Path;
use std::time::Duration;
use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// How often the epoch advances. A running guest is checked (and yields to other tasks) at
/// this granularity, so deadlines are exact to within one tick.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Core instances, memories and tables one component instance may use. Rust components
/// built with spin-sdk use a handful; the headroom covers composed components.
const CORE_INSTANCES_PER_COMPONENT: u32 = 50;
const MEMORIES_PER_COMPONENT: u32 = 4;

/// Per-slot bytes reset by memset rather than returned to the kernel (see the pool setup).
const KEEP_RESIDENT_MEMORY: usize = 4 << 20;
const KEEP_RESIDENT_TABLE: usize = 64 << 10;
const KEEP_RESIDENT_STACK: usize = 256 << 10;

/// Builds the engine for one service with these limits.
pub fn build_engine(limits: &Limits) -> Result<Engine> {
    build_shared_engine(limits, limits.max_concurrency as u32)
}

/// Builds an engine whose instance pool (`slots` instances at once) several services share.
pub fn build_shared_engine(limits: &Limits, slots: u32) -> Result<Engine> {
    let mut config = base_config();
    // Always map a module's initial memory copy-on-write, however sparse, up to the memory
    // cap: a pre-initialized snapshot's heap (the ONNX model, say) is spread thin, and above
    // wasmtime's default of 16 MiB its heuristic copied the whole image into every instance
    // instead (measured: 25 MB private per solubility instance, 13 molprop + 12 solubility
    // in one `up` at 730-790 MiB instead of under 200).
    config.memory_guaranteed_dense_image_size(limits.max_memory_bytes as u64);
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        .total_core_instances(slots * CORE_INSTANCES_PER_COMPONENT)
        .total_memories(slots * MEMORIES_PER_COMPONENT)
        .total_tables(slots * MEMORIES_PER_COMPONENT)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .max_tables_per_component(MEMORIES_PER_COMPONENT)
        .max_memory_size(limits.max_memory_bytes)
        // Reset the pages a request touched with memset instead of madvise: an madvise per
        // request costs page faults on the next one and TLB-shootdown interrupts to every
        // core, which profiling showed to be most of a small request's time.
        .linear_memory_keep_resident(KEEP_RESIDENT_MEMORY)
        .table_keep_resident(KEEP_RESIDENT_TABLE)
        .async_stack_keep_resident(KEEP_RESIDENT_STACK)
        // Where the kernel has PAGEMAP_SCAN (Linux 6.7+), reset only the dirty pages.
        .pagemap_scan(wasmtime::Enabled::Auto)
        // A freed slot goes back to the pool at once, never into a batch of decommits:
        // when a component's code is dropped, wasmtime clears the slots that hold its
        // memory image, but only those back in the pool. A slot still waiting in a batch
        // kept the image, and with it the whole compiled file mapped, after its model was
        // removed (issue 56: 160-190 MiB a cycle of 8 models). Instances are reused for
        // up to `--instance-reuse` requests, so slots are freed seldom and batching saved
        // little.
        .decommit_batch_size(1);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    keeping_functions(config)
}

/// An engine for one short job (running a component's initialization for a snapshot),
/// allocating instances on demand. Not the shared pooled engine: a pool slot keeps the
/// memory image of the last module it ran, and with it that module's whole compiled image,
/// so an instrumented component compiled only to be initialized once stayed resident
/// (measured: 40 MB per model kind). Everything of this engine is freed with it.
pub fn build_one_off_engine() -> Result<Engine> {
    let mut config = base_config();
    config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
    keeping_functions(config)
}

/// A Cranelift engine of `config` that reuses functions compiled before ([`function_cache`]).
fn keeping_functions(mut config: Config) -> Result<Engine> {
    config
        .enable_incremental_compilation(function_cache::store())
        .map_err(anyhow::Error::from)?;
    let engine = engine_with_ticker(&config)?;
    function_cache::for_engine(&engine);
    Ok(engine)
}

/// Which of wasmtime's compilers makes an engine's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Tier {
    /// Winch, wasmtime's single-pass baseline compiler: code in a fraction of the time,
    /// slower to run. Serves a component until its optimized code is ready.
    Baseline,
    /// Cranelift, the optimizing compiler: what every component is served from in the end.
    Optimized,
}

/// An engine whose code comes from Winch ([`Tier::Baseline`]), allocating instances on
/// demand: it serves a component only until Cranelift's code is ready, so it reserves no
/// pool of its own.
pub fn build_baseline_engine(limits: &Limits) -> Result<Engine> {
    let mut config = base_config();
    config.strategy(wasmtime::Strategy::Winch);
    config.memory_guaranteed_dense_image_size(limits.max_memory_bytes as u64);
    config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
    engine_with_ticker(&config)
}

/// What every engine of the host has: the component model, epoch interruption (with a
/// ticker).
fn base_config() -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    // `RUNTIME_HOST_PERFMAP=1`: write /tmp/perf-<pid>.map so `perf` can name guest functions.
    if std::env::var_os("RUNTIME_HOST_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config.epoch_interruption(true);
    config
}

fn engine_with_ticker(config: &Config) -> Result<Engine> {
    let engine = Engine::new(config)
        .map_err(anyhow::Error::from)
        .context("configuring wasmtime")?;
    spawn_epoch_ticker(&engine);
    Ok(engine)
}

fn spawn_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("epoch-ticker".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawning the epoch ticker thread");
}

/// The imports every component may use: WASI 0.2, wasi-http, wasi:keyvalue, wasi:config,
/// fermyon:spin/llm.
pub fn build_linker(engine: &Engine) -> Result<Linker<InstanceState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    keyvalue::add_to_linker(&mut linker, InstanceState::keyvalue)?;
    variables::add_to_linker(&mut linker, InstanceState::config)?;
    llm::add_to_linker(&mut linker, InstanceState::llm)?;
    Ok(linker)
}

/// Compiles (or loads from the cache) a component and pre-instantiates it against the
/// linker, so each request only has to instantiate.
pub fn load_proxy(
    engine: &Engine,
    path: &Path,
    cache_dir: &Path,
) -> Result<ProxyPre<InstanceState>> {
    let bytes = crate::component_file::read(path, crate::component_file::Links::Followed)?;
    proxy_from_bytes(engine, &bytes, path, cache_dir)
}

/// [`load_proxy`] of a component already read (or made: a snapshot of the one at `path`).
pub fn proxy_from_bytes(
    engine: &Engine,
    bytes: &[u8],
    path: &Path,
    cache_dir: &Path,
) -> Result<ProxyPre<InstanceState>> {
    let artifact = Artifact::of(engine, bytes, cache_dir);
    proxy_from_artifact(engine, bytes, &artifact, path)
}

/// [`proxy_from_bytes`] with the compiled code's cache file already named for `bytes`.
pub fn proxy_from_artifact(
    engine: &Engine,
    bytes: &[u8],
    artifact: &Artifact,
    path: &Path,
) -> Result<ProxyPre<InstanceState>> {
    let component = compiled::load_as(engine, bytes, artifact).with_context(|| {
        format!(
            "cannot compile {}: a WebAssembly component (wasm32-wasip2) is expected, using \
             only what this engine's compiler supports",
            path.display()
        )
    })?;
    heap::release_freed();
    let linker = build_linker(engine)?;
    let pre = linker
        .instantiate_pre(&component)
        .map_err(anyhow::Error::from)
        .with_context(|| {
            format!(
                "{} imports something this host does not provide",
                path.display()
            )
        })?;
    ProxyPre::new(pre)
        .map_err(anyhow::Error::from)
        .with_context(|| {
            format!(
                "{} does not export wasi:http/incoming-handler@0.2.x",
                path.display()
            )
        })
}
