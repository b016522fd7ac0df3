//! Pre-initialization: the entry point a host calls once, before snapshotting the instance, so
//! that every later instance starts with the model already loaded.
//!
//! A component opts in with [`preinit!`](crate::preinit), naming the function that loads
//! what every request needs (reading the model directory, building lookup tables). It then
//! exports `edge:model/preinit@0.1.0`, whose `initialize` runs that function. `runtime-host`
//! calls it at deploy time under Wizer (`wasmtime-wizer`) and serves the snapshot, and
//! `runtime-host snapshot` writes it as a `.wasm` for Spin; hosts that never call it (plain
//! `spin up` of the original component) serve it as before, loading on the first request.
//!
//! What the initialization may do: read its read-only mounts, compute, allocate. What it may
//! not rely on: anything of the host beyond that (no key-value store, variables or network),
//! and any handle it opened, since the snapshot keeps memory but not the host's resources.
//! [`finish`] makes the C library forget the directories it opened, so the snapshot's first
//! file access asks the new host again.

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod bindings {
    spin_sdk::wit_bindgen::generate!({
        inline: r#"
            package edge:model@0.1.0;

            /// Run once by a host that snapshots the instance afterwards.
            interface preinit {
                initialize: func();
            }

            world snapshot {
                export preinit;
            }
        "#,
        world: "snapshot",
        runtime_path: "spin_sdk::wit_bindgen::rt",
        pub_export_macro: true,
        export_macro_name: "export_preinit",
        default_bindings_module: "model_sdk::snapshot::bindings",
    });
}

/// Set by [`self_test`] when the model passed its own test examples before the snapshot.
static SELF_TESTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs `model`'s own test examples during pre-initialization. An instance started from the
/// snapshot then answers `/health` without asking the key-value store whether the
/// deployment's self-test passed: under Spin, which starts an instance per request, that
/// read was most of `/health`'s cost. The same code and the same files give the same answers
/// after the snapshot as before it; a model that fails here is tested again by `/health`,
/// which says why.
pub fn self_test<M: crate::Model>(model: &M) {
    if crate::predict::self_test(model).is_ok() {
        SELF_TESTED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether this instance comes from a snapshot whose model passed its self-test.
pub fn self_tested() -> bool {
    SELF_TESTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The export a host looks for, as Wizer names the function.
pub const INIT_FUNCTION: &str = "edge:model/preinit@0.1.0.initialize";

/// Leaves the instance fit to be snapshotted: flushes standard output and error, makes
/// the C library forget its preopened directories (their handles belong to this instance
/// only; a snapshot keeping them would fail, or worse, at its first file access), and gives
/// the blocks the allocator kept back to the system allocator (see
/// [`guest_kit::small_blocks::release_kept`]).
pub fn finish() {
    guest_kit::small_blocks::release_kept();
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(target_arch = "wasm32")]
    {
        unsafe extern "C" {
            fn __wasilibc_reset_preopens();
        }
        // SAFETY: wasi-libc's own reset for pre-initializers; nothing holds a descriptor
        // across this call (the initialization has closed its files).
        unsafe { __wasilibc_reset_preopens() };
    }
}

/// Exports the pre-initialization entry point, running `$init` (a `fn()`) and then
/// [`finish`]. Use once, in the component crate:
///
/// ```ignore
/// model_sdk::preinit!(load_model);
/// ```
#[macro_export]
macro_rules! preinit {
    ($init:path) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct Preinit;
            impl $crate::snapshot::bindings::exports::edge::model::preinit::Guest for Preinit {
                fn initialize() {
                    $init();
                    $crate::snapshot::finish();
                }
            }
            $crate::snapshot::bindings::export_preinit!(Preinit with_types_in $crate::snapshot::bindings);
        };
    };
}
