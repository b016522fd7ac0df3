//! Taking the snapshot: Wizer instruments the component, the initialization runs in a
//! store with the deployment's grants, and Wizer reads the initialized instance back
//! through the accessors its instrumentation exported.

use crate::compiled;
use crate::engine::build_linker;
use crate::limits::Limits;
use crate::state::{Grants, InstanceState};
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;
use wasmtime::component::{Instance, Lift, WasmList};
use wasmtime::{Engine, Store};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

/// The interface a component exports to be pre-initialized, and its one function.
pub const INIT_INTERFACE: &str = "edge:model/preinit@0.1.0";
const INIT_FUNCTION: &str = "initialize";

/// How long an initialization may run (loading a large model included).
const INIT_DEADLINE: Duration = Duration::from_secs(300);

/// Runs `wasm`'s initialization with `grants` (memory cap of `limits`) and returns the
/// snapshot: a component whose instances start where the initialization left off.
pub(super) async fn snapshot(
    engine: &Engine,
    wasm: &[u8],
    grants: &Grants,
    limits: &Limits,
    cache_dir: &Path,
) -> Result<Vec<u8>> {
    let mut wizer = Wizer::new();
    // The export stays: Rust components are not yet rewritten correctly without it
    // (wasmtime issue 13186); hosts simply never call it again.
    wizer
        .init_func(format!("{INIT_INTERFACE}.{INIT_FUNCTION}"))
        .keep_init_func(true);
    let (context, instrumented) = wizer
        .instrument_component(wasm)
        .map_err(anyhow::Error::from)
        .context("preparing the component for a snapshot")?;
    // Cached: the instrumented component is the same for every model directory it is
    // initialized with, so a new model (or a new version of one) does not compile it again.
    let component =
        tokio::task::block_in_place(|| compiled::load(engine, &instrumented, cache_dir))
            .context("compiling the component to initialize it")?;

    let (mut store, _) =
        InstanceState::store(engine, grants, limits.max_memory_bytes, INIT_DEADLINE)?;

    let instance = build_linker(engine)?
        .instantiate_async(&mut store, &component)
        .await
        .map_err(anyhow::Error::from)
        .context("instantiating the component to initialize it")?;
    let interface = instance
        .get_export_index(&mut store, None, INIT_INTERFACE)
        .with_context(|| format!("the component does not export {INIT_INTERFACE}"))?;
    let func = instance
        .get_export_index(&mut store, Some(&interface), INIT_FUNCTION)
        .with_context(|| format!("{INIT_INTERFACE} has no function {INIT_FUNCTION}"))?;
    instance
        .get_typed_func::<(), ()>(&mut store, func)
        .map_err(anyhow::Error::from)?
        .call_async(&mut store, ())
        .await
        .map_err(anyhow::Error::from)
        .context("the component's initialization failed")?;

    let mut live = InstanceReader {
        store: &mut store,
        instance,
    };
    wizer
        .snapshot_component(&context, &mut live)
        .await
        .map_err(anyhow::Error::from)
        .context("writing the snapshot")
}

/// The initialized instance, as Wizer reads it: through the accessor functions its
/// instrumentation exported (one per memory and global).
struct InstanceReader<'a> {
    store: &'a mut Store<InstanceState>,
    instance: Instance,
}

impl InstanceReader<'_> {
    /// Calls accessor `func` of exported instance `instance`, which takes nothing and
    /// returns one `R`. The accessors are Wizer's own, so a failure is a bug there: panic.
    async fn call<R: Lift + Send + Sync + 'static>(&mut self, instance: &str, func: &str) -> R {
        let found = self
            .instance
            .get_export_index(&mut *self.store, None, instance)
            .and_then(|i| {
                self.instance
                    .get_export_index(&mut *self.store, Some(&i), func)
            })
            .unwrap_or_else(|| panic!("wizer accessor {instance}#{func} is exported"));
        let typed = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, found)
            .unwrap_or_else(|e| panic!("wizer accessor {instance}#{func}: {e}"));
        typed
            .call_async(&mut *self.store, ())
            .await
            .unwrap_or_else(|e| panic!("wizer accessor {instance}#{func}: {e}"))
            .0
    }
}

impl ComponentInstanceState for InstanceReader<'_> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        let list: WasmList<u8> = self.call(instance, func).await;
        contents(list.as_le_slice(&*self.store));
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func).await
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func).await
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call::<f32>(instance, func).await.to_bits()
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call::<f64>(instance, func).await.to_bits()
    }
}
