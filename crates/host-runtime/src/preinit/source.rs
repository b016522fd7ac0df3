//! A component read from disk for [`super::prepare`]: its bytes, whether it has a snapshot
//! to make and under which key, and whether the cache already holds its compiled code.

use super::wizer::INIT_INTERFACE;
use crate::cache::file;
use crate::compiled::Artifact;
use crate::component_file::{self, Links};
use crate::engine;
use crate::state::InstanceState;
use anyhow::Result;
use host_capabilities::files::Mounts;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
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
pub(super) fn snapshot_key(wasm: &[u8], mounts: &Mounts) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(SNAPSHOT_FORMAT);
    hash.update(Sha256::digest(wasm));
    mounts.hash_contents(&mut hash)?;
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// A component read from disk, with the key its snapshot has where it can have one: read
/// and hashed once, whether the caller first asks its [`Source::identity`] or not.
pub struct Source {
    pub(super) path: PathBuf,
    pub(super) wasm: Vec<u8>,
    pub(super) snapshot_key: Option<String>,
    /// What [`Source::is_compiled`] read and named, for [`super::prepare`] to use instead of doing
    /// it again: naming compiled code hashes every byte it is compiled from (a 17 MB
    /// snapshot for an ONNX model, on every warm start).
    pub(super) checked: Option<CacheLookup>,
}

/// The compiled code [`Source::is_compiled`] looked for, and the snapshot it is made from.
pub(super) struct CacheLookup {
    pub(super) engine: Engine,
    pub(super) cache_dir: PathBuf,
    pub(super) snapshot: Option<Vec<u8>>,
    pub(super) artifact: Artifact,
}

impl Source {
    /// Reads the component at `path`, to be served with `mounts`.
    pub fn read(path: &Path, mounts: &Mounts) -> Result<Self> {
        Self::read_with(path, mounts, Links::Followed)
    }

    /// [`Source::read`] of a component whoever may write a models directory chose: never
    /// through a link.
    pub fn read_untrusted(path: &Path, mounts: &Mounts) -> Result<Self> {
        Self::read_with(path, mounts, Links::Refused)
    }

    fn read_with(path: &Path, mounts: &Mounts, links: Links) -> Result<Self> {
        let wasm = component_file::read(path, links)?;
        let snapshot_key = match exports_init(&wasm) {
            true => Some(snapshot_key(&wasm, mounts)?),
            false => None,
        };
        Ok(Self {
            path: path.to_owned(),
            wasm,
            snapshot_key,
            checked: None,
        })
    }

    /// Where its snapshot is cached under `cache_dir`, if it is one to snapshot.
    fn snapshot_file(&self, cache_dir: &Path) -> Option<PathBuf> {
        self.snapshot_key
            .as_deref()
            .map(|key| cached_path(cache_dir, key))
    }

    /// Its snapshot as the cache holds it, if it has one there.
    pub(super) fn cached_snapshot(&self, cache_dir: &Path) -> Option<Vec<u8>> {
        let path = self.snapshot_file(cache_dir)?;
        let bytes = file::read_checked(&path)?;
        file::mark_used(&path);
        Some(bytes)
    }

    /// Where it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the cache in `cache_dir` holds what [`super::prepare`] would serve it from, compiled
    /// by `engine`: its snapshot's code where it has a snapshot, else its own. (A snapshot
    /// that cannot be made is served as the component is; that case never counts as cached
    /// here, so such a component starts on baseline code, from the cache, at every start.)
    /// What it read and named to tell is kept for [`super::prepare`] with the same engine and
    /// cache.
    pub fn is_compiled(&mut self, engine: &Engine, cache_dir: &Path) -> bool {
        let (snapshot, artifact) = match self.snapshot_key {
            Some(_) => {
                let Some(snapshot) = self.cached_snapshot(cache_dir) else {
                    return false;
                };
                let artifact = Artifact::of(engine, &snapshot, cache_dir);
                (Some(snapshot), artifact)
            }
            None => (None, Artifact::of(engine, &self.wasm, cache_dir)),
        };
        let cached = artifact.is_cached();
        // Kept only for a compile that loads from the cache at once: one that compiles
        // waits its turn, and should not hold a snapshot's bytes meanwhile.
        self.checked = cached.then(|| CacheLookup {
            engine: engine.clone(),
            cache_dir: cache_dir.to_owned(),
            snapshot,
            artifact,
        });
        cached
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

    /// What identifies the compiled result of [`super::prepare`], so that deployments with the same
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

/// Where the snapshot named `key` is cached.
pub(super) fn cached_path(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir.join("snapshots").join(format!("{key}.wasm"))
}

/// Compiles `bytes` (the component at `path`, or its snapshot) on a blocking thread, into
/// `artifact` when it was named already, else into the file [`Artifact::of`] names.
pub(super) async fn compile(
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
