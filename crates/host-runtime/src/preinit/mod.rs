//! Pre-initialized snapshots: a component's initialization run once, at deploy time, and its
//! instance saved as a new component that every instance then starts from.
//!
//! A model component that exports `edge:model/preinit@0.1.0` (see `model_sdk::preinit!`)
//! loads its model there. Wizer (`wasmtime-wizer`) instruments the component, this module
//! instantiates it with the deployment's own grants (its read-only mounts above all), calls
//! `initialize`, and Wizer writes the instance's memories and globals back as data: a
//! component that starts with the model loaded. wasmtime maps that initial memory
//! copy-on-write, so instances share the model's pages and start in microseconds instead of
//! loading it: once per warm instance, or once per request with `--instance-reuse 1` (Spin's
//! model).
//!
//! The initialization gets the deployment's mounts, variables and AI models, and a key-value
//! store of its own, empty and thrown away afterwards ([`Grants::for_initialization`]): what
//! it wrote would otherwise be in the snapshot for every deployment of those files.
//!
//! Snapshots are cached on disk beside compiled code, named by the SHA-256 of the component
//! and of every file its mounts hold: changing either makes a new one, nothing else does.
//! A component without the export, or whose initialization fails (a trap, the memory cap,
//! the deadline), is served as it is, as before; the failure is logged.

pub mod child;
mod source;
mod wizer;

pub use source::Source;
use source::{CacheLookup, cached_path, compile};
pub use wizer::INIT_INTERFACE;

use crate::cache::{file, lock::CacheLock};
use crate::compiled::{self, Artifact};
use crate::engine;
use crate::limits::Limits;
use crate::state::{Grants, InstanceState};
use anyhow::{Context, Result};
use host_support::heap;
use std::path::Path;
use std::time::Instant;
use wasmtime::Engine;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// A component ready to instantiate: the snapshot of `source` where it exports the entry
/// point and its initialization succeeds, else the component itself.
pub struct ComponentPre {
    pub pre: ProxyPre<InstanceState>,
    /// The snapshot's key, when it is one.
    pub snapshot: Option<String>,
}

/// Where [`prepare`] does the cold work (a snapshot, compiling) that the cache lacks.
#[derive(Clone, Copy)]
pub enum ColdWork {
    /// In this process (in the child itself).
    Here,
    /// In a child process the command starts, which leaves no working memory behind in this
    /// process ([`child`]); here only if the child fails, or if the component has AI models
    /// (the child is not given them).
    InChild(child::ChildCommand),
}

/// Snapshots `source` where it can (for instances with `grants`, whose mounts `source` was
/// read with) and compiles it, doing what the cache lacks where `cold` says. Compiling runs
/// on a blocking thread. Dropping the future stops a child it started.
pub async fn prepare(
    engine: &Engine,
    mut source: Source,
    grants: &Grants,
    limits: &Limits,
    cache_dir: &Path,
    cold: ColdWork,
) -> Result<ComponentPre> {
    // The snapshot, read once: it tells whether anything is missing, and is what gets
    // compiled. With it, the compiled code's cache file of the snapshot or of the component
    // when named already (by `is_compiled`, or below): naming one hashes all of its bytes.
    let checked = source
        .checked
        .take()
        .filter(|c| Engine::same(&c.engine, engine) && c.cache_dir == cache_dir);
    let (mut cached, mut snapshot_artifact, mut component_artifact) = match checked {
        Some(CacheLookup {
            snapshot: Some(snapshot),
            artifact,
            ..
        }) => (Some(snapshot), Some(artifact), None),
        Some(CacheLookup { artifact, .. }) if source.snapshot_key.is_none() => {
            (None, None, Some(artifact))
        }
        _ => (source.cached_snapshot(cache_dir), None, None),
    };
    if let (ColdWork::InChild(command), true) = (cold, grants.ai.granted.is_empty()) {
        let artifact = match (&source.snapshot_key, &cached) {
            (Some(_), Some(snapshot)) => Some(
                &*snapshot_artifact
                    .get_or_insert_with(|| Artifact::of(engine, snapshot, cache_dir)),
            ),
            (Some(_), None) => None,
            (None, _) => Some(
                &*component_artifact
                    .get_or_insert_with(|| Artifact::of(engine, &source.wasm, cache_dir)),
            ),
        };
        if !artifact.is_some_and(Artifact::is_cached) {
            child::fill_cache(command, &source.path, &grants.files, limits, cache_dir).await;
            if cached.is_none() {
                cached = source.cached_snapshot(cache_dir);
            }
        }
    }
    let Source {
        path,
        wasm,
        snapshot_key,
        checked: _,
    } = source;
    if let Some(key) = snapshot_key {
        let snapshot = async {
            let bytes = match cached {
                Some(bytes) => bytes,
                None => snapshot_made(&wasm, &key, grants, limits, cache_dir).await?,
            };
            compile(engine, bytes, snapshot_artifact, &path, cache_dir).await
        };
        match snapshot.await {
            Ok(pre) => {
                return Ok(ComponentPre {
                    pre,
                    snapshot: Some(key),
                });
            }
            // E.g. a model larger than the memory cap: the component as it is says so better,
            // in the words every host uses for it.
            Err(e) => tracing::warn!(
                component = %path.display(),
                "no pre-initialized snapshot, serving the component as it is: {e:#}"
            ),
        }
    }
    let pre = compile(engine, wasm, component_artifact, &path, cache_dir).await?;
    Ok(ComponentPre {
        pre,
        snapshot: None,
    })
}

/// The snapshot of `source` (which must [`Source::can_snapshot`]) initialized with
/// `grants`: from the cache when there, else made now and cached. `runtime-host snapshot`
/// writes it out.
pub async fn snapshot_of(
    source: &Source,
    grants: &Grants,
    limits: &Limits,
    cache_dir: &Path,
) -> Result<Vec<u8>> {
    let key = source.snapshot_key.as_deref().with_context(|| {
        format!(
            "{} does not export {INIT_INTERFACE}: it has nothing to pre-initialize (a model \
             built on model-sdk exports it with `model_sdk::preinit!`)",
            source.path.display()
        )
    })?;
    match source.cached_snapshot(cache_dir) {
        Some(bytes) => Ok(bytes),
        None => snapshot_made(&source.wasm, key, grants, limits, cache_dir).await,
    }
}

/// The snapshot of `wasm` under `grants`, named `key` ([`snapshot_key`]), made now and
/// cached in `cache_dir`. `Err` says why there is none (the caller serves `wasm` as it is).
async fn snapshot_made(
    wasm: &[u8],
    key: &str,
    grants: &Grants,
    limits: &Limits,
    cache_dir: &Path,
) -> Result<Vec<u8>> {
    let path = cached_path(cache_dir, key);
    // Another process may be making the same snapshot (hosts starting on a cold cache):
    // wait for it and take what it wrote.
    let lock_path = path.clone();
    let _making = tokio::task::spawn_blocking(move || CacheLock::acquire(&lock_path))
        .await
        .ok()
        .flatten();
    if let Some(bytes) = file::read_checked(&path) {
        file::mark_used(&path);
        return Ok(bytes);
    }
    let started = Instant::now();
    let engine = engine::build_one_off_engine()?;
    let grants = grants.for_initialization();
    let bytes = wizer::snapshot(&engine, wasm, &grants, limits, cache_dir).await;
    drop(engine);
    // The compiler's and the initialization's working memory, back to the system.
    heap::release_freed();
    let bytes = bytes?;
    // The key names the files as they were before the initialization read them. Files
    // changed or removed meanwhile (a test's directory dropped while a `prepare` child its
    // exited parent left behind still ran) made a snapshot of other files, cached under that
    // key for good: every later deployment of those files served the other state.
    if source::snapshot_key(wasm, &grants.files).ok().as_deref() != Some(key) {
        anyhow::bail!(
            "the files of the component's mounts changed while its snapshot was made: not \
             cached (deploy again once they are in place)"
        );
    }
    file::write_with_digest(&path, &bytes)?;
    if let Some(dir) = path.parent() {
        file::prune(dir, compiled::MAX_CACHE_BYTES, &path);
    }
    tracing::info!(
        snapshot = %path.display(),
        bytes = bytes.len(),
        took_ms = started.elapsed().as_millis() as u64,
        "pre-initialized snapshot made"
    );
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_capabilities::files::Mounts;

    /// Copies of one component under several names share compiled code; another component
    /// does not.
    #[test]
    fn identity_follows_the_bytes_not_the_name() {
        let dir = tempfile::tempdir().unwrap();
        // An empty component, and an empty core module: the magic, version and layer.
        let component = b"\0asm\x0d\0\x01\0";
        let module = b"\0asm\x01\0\0\0";
        let [a, b, c] = ["a", "b", "c"].map(|n| dir.path().join(format!("{n}.wasm")));
        std::fs::write(&a, component).unwrap();
        std::fs::write(&b, component).unwrap();
        std::fs::write(&c, module).unwrap();
        let mounts = Mounts::parse(&[]).unwrap();
        let id = |p: &Path| Source::read(p, &mounts).unwrap().identity();
        assert_eq!(id(&a), id(&b));
        assert_ne!(id(&a), id(&c));
    }
}
