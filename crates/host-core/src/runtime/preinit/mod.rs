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
mod wizer;

pub use wizer::INIT_INTERFACE;

use crate::capabilities::files::Mounts;
use crate::runtime::compiled::{self, Artifact};
use crate::runtime::engine;
use crate::runtime::limits::Limits;
use crate::runtime::state::{Grants, InstanceState};
use crate::support::heap;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;
use wasmtime::Engine;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// Bumped when what a snapshot holds changes for the same inputs (this module, wizer).
const SNAPSHOT_FORMAT: &str = "preinit-1";

/// Whether `wasm` is a component exporting [`INIT_INTERFACE`]: read from its export section,
/// without compiling it.
fn exports_init(wasm: &[u8]) -> bool {
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload {
            Ok(wasmparser::Payload::ModuleSection { .. })
            | Ok(wasmparser::Payload::ComponentSection { .. }) => depth += 1,
            Ok(wasmparser::Payload::End(_)) => depth = depth.saturating_sub(1),
            Ok(wasmparser::Payload::ComponentExportSection(exports))
                if depth == 0
                    && exports
                        .clone()
                        .into_iter()
                        .flatten()
                        .any(|e| e.name.name == INIT_INTERFACE) =>
            {
                return true;
            }
            Err(_) => return false,
            _ => {}
        }
    }
    false
}

/// A snapshot's identity: the component's bytes and what its mounts hold.
fn snapshot_key(wasm: &[u8], mounts: &Mounts) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(SNAPSHOT_FORMAT);
    hash.update(Sha256::digest(wasm));
    mounts.hash_contents(&mut hash)?;
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// A component read from disk, with the key its snapshot has where it can have one: read
/// and hashed once, whether the caller first asks its [`Source::identity`] or not.
pub struct Source {
    path: PathBuf,
    wasm: Vec<u8>,
    snapshot_key: Option<String>,
}

impl Source {
    /// Reads the component at `path`, to be served with `mounts`.
    pub fn read(path: &Path, mounts: &Mounts) -> Result<Self> {
        let wasm =
            std::fs::read(path).with_context(|| format!("reading component {}", path.display()))?;
        let snapshot_key = match exports_init(&wasm) {
            true => Some(snapshot_key(&wasm, mounts)?),
            false => None,
        };
        Ok(Self {
            path: path.to_owned(),
            wasm,
            snapshot_key,
        })
    }

    /// Where its snapshot is cached under `cache_dir`, if it is one to snapshot.
    fn snapshot_file(&self, cache_dir: &Path) -> Option<PathBuf> {
        self.snapshot_key
            .as_deref()
            .map(|key| cached_path(cache_dir, key))
    }

    /// Its snapshot as the cache holds it, if it has one there.
    fn cached_snapshot(&self, cache_dir: &Path) -> Option<Vec<u8>> {
        let path = self.snapshot_file(cache_dir)?;
        let bytes = std::fs::read(&path).ok()?;
        compiled::mark_used(&path);
        Some(bytes)
    }

    /// Where it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the cache in `cache_dir` holds what [`prepare`] would serve it from, compiled
    /// by `engine`: its snapshot's code where it has a snapshot, else its own. (A snapshot
    /// that cannot be made is served as the component is; that case never counts as cached
    /// here, so such a component starts on baseline code, from the cache, at every start.)
    pub fn is_compiled(&self, engine: &Engine, cache_dir: &Path) -> bool {
        match self.snapshot_key {
            Some(_) => self
                .snapshot_file(cache_dir)
                .and_then(|file| std::fs::read(file).ok())
                .is_some_and(|snapshot| Artifact::of(engine, &snapshot, cache_dir).is_cached()),
            None => Artifact::of(engine, &self.wasm, cache_dir).is_cached(),
        }
    }

    /// The component compiled by `engine` as it is, without a snapshot (cached in
    /// `cache_dir` under that engine's settings), on a blocking thread.
    pub async fn compile_plain(
        &self,
        engine: &Engine,
        cache_dir: &Path,
    ) -> Result<ProxyPre<InstanceState>> {
        compile(engine, self.wasm.clone(), None, &self.path, cache_dir).await
    }

    /// Whether it exports [`INIT_INTERFACE`]: whether it has a snapshot to make.
    pub fn can_snapshot(&self) -> bool {
        self.snapshot_key.is_some()
    }

    /// What identifies the compiled result of [`prepare`], so that deployments with the same
    /// component and the same files share compiled code: the snapshot key where there will
    /// be one, else the component's bytes. Not its path: copies of one component under
    /// several names (one per model, as `up --models` directories hold them) each had
    /// their own copy of the compiled code, measured 2.3 MB per molprop deployment.
    pub fn identity(&self) -> String {
        match &self.snapshot_key {
            Some(key) => format!("snapshot:{key}"),
            None => {
                let digest = Sha256::digest(&self.wasm);
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                format!("component:{hex}")
            }
        }
    }
}

/// A component ready to instantiate: the snapshot of `source` where it exports the entry
/// point and its initialization succeeds, else the component itself.
pub struct Prepared {
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
    source: Source,
    grants: &Grants,
    limits: &Limits,
    cache_dir: &Path,
    cold: ColdWork,
) -> Result<Prepared> {
    // Read once: it tells whether anything is missing, and is what gets compiled.
    let mut cached = source.cached_snapshot(cache_dir);
    // The compiled code's cache file of the snapshot or of the component, when named here
    // already: naming one hashes all of its bytes.
    let (mut snapshot_artifact, mut component_artifact) = (None, None);
    if let (ColdWork::InChild(command), true) = (cold, grants.ai.granted.is_empty()) {
        let artifact = match (&source.snapshot_key, &cached) {
            (Some(_), Some(snapshot)) => {
                Some(&*snapshot_artifact.insert(Artifact::of(engine, snapshot, cache_dir)))
            }
            (Some(_), None) => None,
            (None, _) => {
                Some(&*component_artifact.insert(Artifact::of(engine, &source.wasm, cache_dir)))
            }
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
                return Ok(Prepared {
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
    Ok(Prepared {
        pre,
        snapshot: None,
    })
}

/// Compiles `bytes` (the component at `path`, or its snapshot) on a blocking thread, into
/// `artifact` when it was named already, else into the file [`Artifact::of`] names.
async fn compile(
    engine: &Engine,
    bytes: Vec<u8>,
    artifact: Option<Artifact>,
    path: &Path,
    cache_dir: &Path,
) -> Result<ProxyPre<InstanceState>> {
    let (engine, path, cache_dir) = (engine.clone(), path.to_owned(), cache_dir.to_owned());
    tokio::task::spawn_blocking(move || {
        let artifact = artifact.unwrap_or_else(|| Artifact::of(&engine, &bytes, &cache_dir));
        engine::proxy_from_artifact(&engine, &bytes, &artifact, &path)
    })
    .await?
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

/// Where the snapshot named `key` is cached.
fn cached_path(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir.join("snapshots").join(format!("{key}.wasm"))
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
    let _making = tokio::task::spawn_blocking(move || compiled::CacheLock::acquire(&lock_path))
        .await
        .ok()
        .flatten();
    if let Ok(bytes) = std::fs::read(&path) {
        compiled::mark_used(&path);
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
    compiled::write_atomically(&path, &bytes)?;
    if let Some(dir) = path.parent() {
        compiled::prune(dir, compiled::MAX_CACHE_BYTES, &path);
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
