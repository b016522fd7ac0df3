//! Compiled components, cached on disk and served from the cached file itself.
//!
//! wasmtime's own cache stores compressed artifacts and, on a hit, unpacks one into anonymous
//! memory: all of the compiled code stays resident for as long as the component is loaded
//! (the ONNX component: 24 MiB of machine code and 14 MiB of data, of which a model runs a
//! small part). Here an artifact is written uncompressed and mapped from its file
//! (`Component::deserialize_file`): the kernel pages in only what runs, processes serving
//! the same component share those pages, and a snapshot's initial memory is mapped from the
//! file rather than copied into memory first.
//!
//! A file is named by a digest of everything that decides its contents (the compiler's
//! settings, the copy-on-write image limit, the component's bytes), written whole with the
//! SHA-256 of its bytes beside it, and never changed afterwards: code that is mapped must not
//! change underneath. A file whose bytes no longer match their digest (damaged on disk), or
//! that this wasmtime refuses (written by another version) or cannot read, is compiled again
//! and replaced. Which cache directories may be used at all, and how files are written and
//! locked, is [`super::cache`]'s.
//!
//! Each new component, model version or snapshot adds a file (40 MB for a snapshot of the
//! ONNX component), so the directory is kept under [`MAX_CACHE_BYTES`]: a file's modification
//! time is set when it is used, and the least recently used go first ([`file::prune`]). Removing a
//! file another process has mapped is safe: the mapping keeps it until that process lets go.

use crate::cache::file;
use crate::cache::lock::CacheLock;
use crate::function_cache;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::hash::Hash;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The cache's subdirectory; a new name whenever what goes into a file's name changes.
pub(crate) const LAYOUT: &str = "compiled-mapped-1";

/// The most the compiled code (and, separately, the snapshots) may take on disk.
pub const MAX_CACHE_BYTES: u64 = 4 << 30;

/// Where the compiled code of one component is cached. Naming it reads every byte of the
/// component (a SHA-256 of up to tens of MB for a snapshot), so a caller that first asks
/// whether it is cached and then loads it names it once and keeps the name.
pub struct Artifact {
    path: PathBuf,
}

impl Artifact {
    /// The cache file for `wasm` compiled by `engine`, in the cache in `dir`.
    pub fn of(engine: &Engine, wasm: &[u8], dir: &Path) -> Self {
        Self {
            path: artifact_path(engine, wasm, dir),
        }
    }

    /// Whether the cache holds it, with the digest it is checked against when loaded (an
    /// earlier version's file, without one, is made again: not counted as cached, so tiering
    /// serves baseline code meanwhile instead of waiting for Cranelift).
    pub fn is_cached(&self) -> bool {
        self.path.exists() && file::has_digest(&self.path)
    }
}

/// `wasm` compiled for `engine`: from the cache in `dir` when there, else compiled now and
/// cached. When the cache cannot be written, the compiled code stays in memory.
pub fn load(engine: &Engine, wasm: &[u8], dir: &Path) -> Result<Component> {
    load_as(engine, wasm, &Artifact::of(engine, wasm, dir))
}

/// [`load`] with the artifact already named (by [`Artifact::of`] for these `wasm` bytes).
pub fn load_as(engine: &Engine, wasm: &[u8], artifact: &Artifact) -> Result<Component> {
    let path = &artifact.path;
    if let Some(component) = mapped_if_cached(engine, path) {
        return Ok(component);
    }
    // Several hosts starting on a cold cache want the same code at once: one makes it, the
    // others wait for its file (four `prepare` of one ONNX model on 2 cores: 95 s each
    // without the lock, 24 s for all four with it; tests starting hosts timed out on it).
    let _compiling = CacheLock::acquire(path);
    if let Some(component) = mapped_if_cached(engine, path) {
        return Ok(component);
    }
    let functions = function_cache::compiling_for(engine, path);
    let compiled = with_progress(path, wasm.len(), || engine.precompile_component(wasm))?;
    drop(functions);
    if let Err(e) = file::write_with_digest(path, &compiled) {
        tracing::warn!("not caching compiled code ({e:#}); it stays in memory");
        // SAFETY: `compiled` was produced by this engine's `precompile_component` just now.
        return Ok(unsafe { Component::deserialize(engine, &compiled)? });
    }
    drop(compiled);
    if let Some(layout_dir) = path.parent() {
        file::prune(layout_dir, MAX_CACHE_BYTES, path);
    }
    map(engine, path)
}

/// Runs `compile`, saying in the log that it started and, every [`PROGRESS_EVERY`], that it
/// is still going: a large component's first compile looked like a hang otherwise.
fn with_progress<T>(artifact: &Path, bytes: usize, compile: impl FnOnce() -> T) -> T {
    let what = artifact.file_name().unwrap_or_default().to_string_lossy();
    let mib = bytes as f64 / (1 << 20) as f64;
    tracing::info!(
        "compiling a component of {mib:.1} MiB for this machine (once: later starts load it \
         from the cache, {what})"
    );
    let started = std::time::Instant::now();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                finished.recv_timeout(PROGRESS_EVERY)
            {
                let secs = started.elapsed().as_secs();
                tracing::info!("still compiling the {mib:.1} MiB component: {secs} s so far");
            }
        });
        let out = compile();
        drop(done);
        out
    })
}

/// How often a compilation under way says so.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The code cached at `path`, mapped, if it is there, its bytes are those written (their
/// digest checked: hashing a 40 MB artifact takes tens of milliseconds, crashing on damaged
/// code every start took the host down), and this wasmtime can use it.
fn mapped_if_cached(engine: &Engine, path: &Path) -> Option<Component> {
    if !path.exists() || !file::matches_digest(path) {
        return None;
    }
    match map(engine, path) {
        Ok(component) => {
            file::mark_used(path);
            Some(component)
        }
        Err(e) => {
            tracing::warn!(
                artifact = %path.display(),
                "cached compiled code is unusable, compiling again: {e:#}"
            );
            None
        }
    }
}

/// Maps the artifact at `path`.
fn map(engine: &Engine, path: &Path) -> Result<Component> {
    // SAFETY: the file was written by `precompile_component` of an engine with the settings
    // its name digests (wasmtime checks the version and settings recorded in it again), is
    // never modified once renamed into place, its bytes were just checked against the digest
    // written with it, and it lives in a cache only this user can write (`cache::dir`).
    unsafe { Component::deserialize_file(engine, path) }
        .map_err(anyhow::Error::from)
        .with_context(|| format!("loading {}", path.display()))
}

/// Where `wasm` compiled by `engine` is cached under `dir`.
fn artifact_path(engine: &Engine, wasm: &[u8], dir: &Path) -> PathBuf {
    let mut hasher = DigestHasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    // Decides how the initial memory is laid out in the artifact, yet is not in the hash.
    engine
        .get_memory_guaranteed_dense_image_size()
        .hash(&mut hasher);
    let mut digest = hasher.0;
    digest.update(Sha256::digest(wasm));
    let name: String = digest
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(LAYOUT).join(format!("{name}.cwasm"))
}

/// Feeds what a `Hash` implementation writes into a SHA-256 digest, which, unlike std's
/// hashers, is the same in every build and on every machine.
struct DigestHasher(Sha256);

impl std::hash::Hasher for DigestHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        unreachable!("only the digest is read")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty component: the magic, version and layer.
    const EMPTY: &[u8] = b"\0asm\x0d\0\x01\0";

    #[test]
    fn a_component_is_compiled_once_then_mapped_from_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        load(&engine, EMPTY, dir.path()).unwrap();
        let mut files: Vec<_> = std::fs::read_dir(dir.path().join(LAYOUT))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert_eq!(
            files.len(),
            2,
            "one artifact and its digest, no temporary: {files:?}"
        );
        assert!(files[1].to_string_lossy().ends_with(".cwasm.sha256"));
        let inode = || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&files[0]).unwrap());
        let written = inode();
        load(&engine, EMPTY, dir.path()).unwrap();
        assert_eq!(
            written,
            inode(),
            "the second load maps the file, no new one is written"
        );
    }

    /// A second maker of the same code waits for the first and maps what it wrote.
    #[test]
    fn a_host_finding_the_code_being_compiled_waits_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let path = artifact_path(&engine, EMPTY, dir.path());
        let first = CacheLock::acquire(&path).expect("a lock in a writable directory");
        let waiting = std::thread::spawn({
            let (engine, dir) = (engine.clone(), dir.path().to_owned());
            move || load(&engine, EMPTY, &dir).map(|_| ())
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(
            !waiting.is_finished(),
            "the second maker waits for the lock"
        );
        let compiled = engine.precompile_component(EMPTY).unwrap();
        file::write_with_digest(&path, &compiled).unwrap();
        let inode = || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
        let written = inode();
        drop(first);
        waiting.join().unwrap().unwrap();
        assert_eq!(
            written,
            inode(),
            "the waiter mapped the file, it wrote none"
        );
    }

    #[test]
    fn an_unreadable_artifact_is_compiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let path = artifact_path(&engine, EMPTY, dir.path());
        file::write_with_digest(&path, b"not compiled code").unwrap();
        load(&engine, EMPTY, dir.path()).unwrap();
        assert_ne!(std::fs::read(&path).unwrap(), b"not compiled code");
    }

    /// Noise over the cached code (64 bytes a page) is found before it is mapped: the code
    /// is compiled again, and what is loaded runs.
    #[test]
    fn damaged_cached_code_is_compiled_again_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        load(&engine, EMPTY, dir.path()).unwrap();
        let path = artifact_path(&engine, EMPTY, dir.path());
        let good = std::fs::read(&path).unwrap();
        let mut damaged = good.clone();
        for page in damaged.chunks_mut(4096) {
            let n = page.len().min(64);
            page[..n].iter_mut().for_each(|b| *b ^= 0x5a);
        }
        std::fs::write(&path, &damaged).unwrap();
        load(&engine, EMPTY, dir.path()).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            good,
            "compiled and written again"
        );
    }

    #[test]
    fn other_settings_or_bytes_name_another_file() {
        let dir = Path::new("/cache");
        let engine = Engine::default();
        let mut config = wasmtime::Config::new();
        config.memory_guaranteed_dense_image_size(1 << 30);
        let other = Engine::new(&config).unwrap();
        let module = b"\0asm\x01\0\0\0";
        let path = artifact_path(&engine, EMPTY, dir);
        assert_eq!(path, artifact_path(&engine, EMPTY, dir));
        assert_ne!(path, artifact_path(&other, EMPTY, dir));
        assert_ne!(path, artifact_path(&engine, module, dir));
    }
}
