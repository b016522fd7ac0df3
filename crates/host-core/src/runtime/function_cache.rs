//! Cranelift's compiled functions, kept across compiles (wasmtime's incremental compilation
//! cache), in one SQLite file of the compile cache: `functions-1.sqlite`.
//!
//! Why: a pre-initialized snapshot has the code of the component it was made from, only its
//! memory differs. Every ONNX model is a snapshot of the same 8.7 MB component, and each was
//! compiled from scratch (5-7 s on two quiet cores, 12-25 s on busy ones) before its
//! optimized code could serve. With this cache a function whose Cranelift IR was compiled
//! before (by any model, the component itself, or the instrumented copy a snapshot is made
//! with) is taken from here: Cranelift still translates each function to find its key,
//! and skips the rest. Keys digest the function and the compiler's target and settings, so
//! an entry is reused only where Cranelift would make the same code; a blob it cannot read
//! back (another version) is compiled again.
//!
//! One store per process ([`store`]), given to every Cranelift engine; compiles tell it
//! which cache directory they compile for ([`compiling_in`]). New entries are written a
//! few megabytes at a time, the rest when that compile ends. The ONNX component's functions
//! take about 85 MB (its compiled code 28 MB). The cache is only ever an optimization: a file
//! that cannot be opened, read or written leaves compiles as they were (said at debug
//! level), and one grown past [`MAX_BYTES`] is started afresh.

use rusqlite::{Connection, OptionalExtension};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// The file's name in the cache directory; a new name whenever its layout changes.
const FILE: &str = "functions-1.sqlite";

/// Past this size the file is removed and started afresh: entries of components no longer
/// served are never read again, and the compiled code itself is pruned the same way
/// ([`crate::runtime::compiled::MAX_CACHE_BYTES`]).
pub const MAX_BYTES: u64 = 1 << 30;

/// How long a write waits for another process writing the same file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Entries are written once this many bytes of them wait: the ONNX component's come to
/// about 80 MB, which should not all sit in memory until its compile ends.
const WRITE_EVERY_BYTES: usize = 8 << 20;

/// Compiled functions not yet written (key, code), and their bytes.
type Pending = (Vec<(Vec<u8>, Vec<u8>)>, usize);

/// The process's store of compiled functions.
#[derive(Default)]
pub struct FunctionCache {
    /// The open file and the cache directory it belongs to.
    db: Mutex<Option<(PathBuf, Connection)>>,
    /// Entries compiled since the last write, and their bytes.
    pending: Mutex<Pending>,
}

impl std::fmt::Debug for FunctionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FunctionCache")
    }
}

/// The process's store, for [`wasmtime::Config::enable_incremental_compilation`].
pub fn store() -> Arc<FunctionCache> {
    static STORE: OnceLock<Arc<FunctionCache>> = OnceLock::new();
    STORE.get_or_init(Arc::default).clone()
}

/// Uses the file of the cache in `dir` for the compile that runs while the returned value
/// lives, and writes what it compiled there when it is dropped.
pub fn compiling_in(dir: &Path) -> Compiling {
    let cache = store();
    cache.open(dir);
    Compiling(cache)
}

/// [`compiling_in`] the cache directory of the compiled code's file `artifact`
/// (`<cache>/<layout>/<name>.cwasm`).
pub fn compiling_for(artifact: &Path) -> Option<Compiling> {
    artifact.parent()?.parent().map(compiling_in)
}

/// A compile under way ([`compiling_in`]).
pub struct Compiling(Arc<FunctionCache>);

impl Drop for Compiling {
    fn drop(&mut self) {
        self.0.write_pending();
    }
}

impl FunctionCache {
    fn lock_db(&self) -> MutexGuard<'_, Option<(PathBuf, Connection)>> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the file of the cache in `dir`, unless it is open already.
    fn open(&self, dir: &Path) {
        let mut db = self.lock_db();
        if db.as_ref().is_some_and(|(open, _)| open == dir) {
            return;
        }
        *db = match open_file(&dir.join(FILE)) {
            Ok(conn) => Some((dir.to_owned(), conn)),
            Err(e) => {
                tracing::debug!(cache = %dir.display(), "compiled functions not kept: {e}");
                None
            }
        };
    }

    /// Writes the entries compiled since the last write, in one transaction.
    fn write_pending(&self) {
        let (pending, _) = std::mem::take(&mut *self.lock_pending());
        if pending.is_empty() {
            return;
        }
        let mut db = self.lock_db();
        let Some((dir, conn)) = db.as_mut() else {
            return;
        };
        let written = (|| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            {
                let mut put = tx.prepare_cached(
                    "INSERT OR IGNORE INTO functions (key, code) VALUES (?1, ?2)",
                )?;
                for (key, code) in &pending {
                    put.execute((key, code))?;
                }
            }
            tx.commit()
        })();
        if let Err(e) = written {
            tracing::debug!(cache = %dir.display(), "compiled functions not written: {e}");
        }
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let db = self.lock_db();
        let (_, conn) = db.as_ref()?;
        let mut get = conn
            .prepare_cached("SELECT code FROM functions WHERE key = ?1")
            .ok()?;
        let code: Option<Vec<u8>> = get.query_row([key], |row| row.get(0)).optional().ok()?;
        code.map(Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let full = {
            let mut pending = self.lock_pending();
            pending.1 += key.len() + value.len();
            pending.0.push((key.to_vec(), value));
            pending.1 >= WRITE_EVERY_BYTES
        };
        if full {
            self.write_pending();
        }
        true
    }
}

/// Opens (or makes) the file at `path`, started afresh when past [`MAX_BYTES`].
fn open_file(path: &Path) -> rusqlite::Result<Connection> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_BYTES) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: processes compiling at once (a host and its `prepare` children, test hosts
    // sharing a cache) read while one writes.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Once written into the file, the log is cut back rather than kept at its largest.
    conn.pragma_update(None, "journal_size_limit", 16 << 20)?;
    conn.execute(
        "CREATE TABLE IF NOT EXISTS functions (key BLOB PRIMARY KEY, code BLOB NOT NULL) \
         WITHOUT ROWID",
        (),
    )?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore;

    #[test]
    fn entries_are_written_when_the_compile_ends_and_read_back_by_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FunctionCache::default();
        cache.open(dir.path());
        assert!(cache.insert(b"key", b"code".to_vec()));
        assert_eq!(
            cache.get(b"key"),
            None,
            "not written before the compile ends"
        );
        cache.write_pending();
        assert_eq!(cache.get(b"key").as_deref(), Some(&b"code"[..]));
        // Another process: a store of its own on the same file.
        let other = FunctionCache::default();
        other.open(dir.path());
        assert_eq!(other.get(b"key").as_deref(), Some(&b"code"[..]));
        assert_eq!(other.get(b"other"), None);
    }

    #[test]
    fn a_file_past_its_limit_starts_afresh_and_an_unusable_one_only_disables_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        {
            let cache = FunctionCache::default();
            cache.open(dir.path());
            cache.insert(b"key", b"code".to_vec());
            cache.write_pending();
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(MAX_BYTES + 1)
            .unwrap();
        let cache = FunctionCache::default();
        cache.open(dir.path());
        assert_eq!(cache.get(b"key"), None);
        assert!(std::fs::metadata(&path).unwrap().len() < MAX_BYTES);

        // A directory where the file should be: no cache, no failure.
        let blocked = tempfile::tempdir().unwrap();
        std::fs::create_dir(blocked.path().join(FILE)).unwrap();
        let cache = FunctionCache::default();
        cache.open(blocked.path());
        cache.insert(b"key", b"code".to_vec());
        cache.write_pending();
        assert_eq!(cache.get(b"key"), None);
    }
}
