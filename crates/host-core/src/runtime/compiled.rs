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
//! settings, the copy-on-write image limit, the component's bytes), written under a
//! temporary name and renamed into place, and never changed afterwards: code that is mapped
//! must not change underneath. A file that this wasmtime refuses (written by another
//! version) or cannot read is compiled again and replaced.
//!
//! Each new component, model version or snapshot adds a file (40 MB for a snapshot of the
//! ONNX component), so the directory is kept under [`MAX_CACHE_BYTES`]: a file's modification
//! time is set when it is used, and the least recently used go first ([`prune`]). Removing a
//! file another process has mapped is safe: the mapping keeps it until that process lets go.

use crate::runtime::function_cache;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::hash::Hash;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The cache's subdirectory; a new name whenever what goes into a file's name changes.
const LAYOUT: &str = "compiled-mapped-1";

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

    /// Whether the cache holds it.
    pub fn is_cached(&self) -> bool {
        self.path.exists()
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
    if let Err(e) = write_atomically(path, &compiled) {
        tracing::warn!("not caching compiled code ({e:#}); it stays in memory");
        // SAFETY: `compiled` was produced by this engine's `precompile_component` just now.
        return Ok(unsafe { Component::deserialize(engine, &compiled)? });
    }
    drop(compiled);
    if let Some(layout_dir) = path.parent() {
        prune(layout_dir, MAX_CACHE_BYTES, path);
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

/// The code cached at `path`, mapped, if it is there and this wasmtime can use it.
fn mapped_if_cached(engine: &Engine, path: &Path) -> Option<Component> {
    if !path.exists() {
        return None;
    }
    match map(engine, path) {
        Ok(component) => {
            mark_used(path);
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

/// An exclusive lock held while a cache file is being made: another process (or thread)
/// about to make the same file waits, then finds it made. Released when dropped.
///
/// The locks are a fixed set of files, `<cache>/locks/<nn>.lock` (64 of them, chosen by the
/// file's name), apart from the files [`prune`] counts: one lock file per cache file ever
/// made would pile up. Two files sharing a lock are made one after the other.
pub struct CacheLock(#[allow(dead_code)] std::fs::File);

/// How many lock files a cache has.
const LOCKS: u64 = 64;

impl CacheLock {
    /// Waits for the lock on `file` (blocking; says so in the log when another holds it).
    /// `None` where no lock file can be opened (a read-only cache, say): then each maker
    /// makes its own, as without a lock.
    pub fn acquire(file: &Path) -> Option<Self> {
        use std::os::fd::AsRawFd;
        let cache = file.parent()?.parent()?;
        let locks = cache.join("locks");
        let _ = std::fs::create_dir_all(&locks);
        let name = file.file_name()?.to_string_lossy();
        // FNV-1a: the same bucket for the same name in every process.
        let bucket = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        }) % LOCKS;
        let lock_path = locks.join(format!("{bucket:02}.lock"));
        let open = |write: bool| {
            std::fs::File::options()
                .create(write)
                .truncate(false)
                .write(write)
                .read(true)
                .open(&lock_path)
        };
        // A lock file another user made can still be locked through a read-only handle.
        let lock = open(true).or_else(|_| open(false)).ok()?;
        let flock = |how| loop {
            // SAFETY: flock on a descriptor this function owns, for as long as it is open.
            if unsafe { libc::flock(lock.as_raw_fd(), how) } == 0 {
                return Ok(());
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        };
        match flock(libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => return Some(Self(lock)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => tracing::info!(
                file = %file.display(),
                "another process is making this file; waiting for it instead of making it again"
            ),
            Err(_) => return None,
        }
        flock(libc::LOCK_EX).ok()?;
        Some(Self(lock))
    }
}

/// Sets `path`'s modification time to now: the time it was last used, for [`prune`].
pub fn mark_used(path: &Path) {
    let touched = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    if let Err(e) = touched {
        tracing::debug!(file = %path.display(), "cannot mark the cached file used: {e}");
    }
}

/// Removes the least recently used files of `dir` (by modification time) until they take
/// at most `cap` bytes, never `keep` (the one just written).
pub fn prune(dir: &Path, cap: u64, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<_> = entries
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    files.sort();
    for (_, len, path) in files {
        if total <= cap {
            break;
        }
        if path != keep && std::fs::remove_file(&path).is_ok() {
            tracing::info!(file = %path.display(), "removed from the cache (least recently used)");
            total -= len;
        }
    }
}

/// Maps the artifact at `path`.
fn map(engine: &Engine, path: &Path) -> Result<Component> {
    // SAFETY: the file was written by `precompile_component` of an engine with the settings
    // its name digests (wasmtime checks the version and settings recorded in it again), is
    // never modified once renamed into place, and lives in this host's own cache directory.
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

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// a reader sees the whole file or none: never one being written.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy());
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, bytes).with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("writing {}", path.display()))
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
        let files: Vec<_> = std::fs::read_dir(dir.path().join(LAYOUT))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "one artifact, no temporary left: {files:?}");
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
        write_atomically(&path, &compiled).unwrap();
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
        write_atomically(&path, b"not compiled code").unwrap();
        load(&engine, EMPTY, dir.path()).unwrap();
        assert_ne!(std::fs::read(&path).unwrap(), b"not compiled code");
    }

    #[test]
    fn the_least_recently_used_files_go_first_and_never_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let at = |secs| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        // Written in this order, last used at these times.
        let files = [
            ("least", 100),
            ("most", 300),
            ("second", 200),
            ("written", 50),
        ];
        for (name, used) in files {
            let path = dir.path().join(name);
            std::fs::write(&path, [0u8; 10]).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(at(used)).unwrap();
        }
        // 40 bytes, cap 25: the two least recently used go, except the one just written.
        prune(dir.path(), 25, &dir.path().join("written"));
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["most", "written"]);
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
