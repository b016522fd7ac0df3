//! Cranelift's compiled functions, kept across compiles (wasmtime's incremental compilation
//! cache), in one SQLite file of the compile cache: `functions-2.sqlite`.
//!
//! Why: a pre-initialized snapshot has the code of the component it was made from, only its
//! memory differs. Every ONNX model is a snapshot of the same 8.7 MB component, and each was
//! compiled from scratch before its optimized code could serve (a new model's `prepare`,
//! snapshot made and compiled: 10.6 s on two cores). With this cache a function whose
//! Cranelift IR was compiled before (by any model, the component itself, or the instrumented
//! copy a snapshot is made with) is taken from here (3.5 s): Cranelift still translates each
//! function to find its key, and skips the rest. Keys digest the function and the compiler's
//! target and settings, so an entry is reused only where Cranelift would make the same code;
//! an entry it cannot read back (another version) is compiled again and replaced. Each entry
//! carries the SHA-256 of its code, checked on every lookup: an entry whose code does not
//! match is a miss (damaged pages of the file made molprop's code crash after three
//! predictions). Who may write the file at all is [`super::cache::dir`]'s rule.
//!
//! One store per process ([`store`]), given to every Cranelift engine ([`for_engine`]);
//! each compile says which cache directory it compiles for ([`compiling_for`]), one directory
//! at a time (a compile for another directory while one is under way shares the newer one's
//! file: a missed reuse at worst, as entries are valid anywhere). Lookups and writes have a
//! connection each, so parallel compile threads keep reading while entries are written, a
//! few megabytes at a time and the rest when the compile ends. The ONNX component's functions
//! take about 85 MB (its compiled code 28 MB); past [`MAX_BYTES`] the entries are deleted
//! inside SQLite, so other processes using the file meanwhile are not disturbed. The cache
//! is only ever an optimization: a file that cannot be opened, read or written leaves
//! compiles as slow as before (said in the log).

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;
use wasmtime::Engine;

/// The file's name in the cache directory; a new name whenever its layout changes.
const FILE: &str = "functions-2.sqlite";

/// The files of earlier layouts, removed when the cache is opened.
const OLD_FILES: [&str; 3] = [
    "functions-1.sqlite",
    "functions-1.sqlite-wal",
    "functions-1.sqlite-shm",
];

/// Past this size the entries are deleted: those of components no longer served are never
/// read again, and the compiled code itself is pruned the same way
/// ([`crate::compiled::MAX_CACHE_BYTES`]).
pub const MAX_BYTES: u64 = 1 << 30;

/// How long a write waits for another process writing the same file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Entries are written once this many bytes of them wait: the ONNX component's come to
/// about 85 MB, which should not all sit in memory until its compile ends.
const WRITE_EVERY_BYTES: usize = 8 << 20;

/// Compiled functions not yet written (key, code), and their bytes.
type Pending = (Vec<(Vec<u8>, Vec<u8>)>, usize);

/// The open file: the cache directory it belongs to, a connection for lookups and one for
/// writes.
struct Open {
    dir: PathBuf,
    read: Mutex<Connection>,
    write: Mutex<Connection>,
}

/// The process's store of compiled functions.
#[derive(Default)]
pub struct FunctionCache {
    open: Mutex<Option<Arc<Open>>>,
    /// Entries compiled since the last write, and their bytes.
    pending: Mutex<Pending>,
    /// Functions found here, and functions Cranelift compiled, since the process started.
    found: AtomicUsize,
    compiled: AtomicUsize,
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

/// The settings of the engines given the [`store`]: Winch's compiles never use it, and are
/// left out of [`compiling_for`].
static CRANELIFT_ENGINES: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn settings_of(engine: &Engine) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.finish()
}

/// Says that `engine` was configured with the [`store`].
pub fn for_engine(engine: &Engine) {
    let settings = settings_of(engine);
    let mut engines = CRANELIFT_ENGINES.lock().unwrap_or_else(|p| p.into_inner());
    if !engines.contains(&settings) {
        engines.push(settings);
    }
}

/// For a compile by `engine` into the compiled code's file `artifact`
/// (`<cache>/<layout>/<name>.cwasm`): uses the file of that cache while the returned value
/// lives, and writes what was compiled when it is dropped. `None` for Winch's engine.
pub fn compiling_for(engine: &Engine, artifact: &Path) -> Option<CompileRun> {
    let settings = settings_of(engine);
    let engines = CRANELIFT_ENGINES.lock().unwrap_or_else(|p| p.into_inner());
    if !engines.contains(&settings) {
        return None;
    }
    drop(engines);
    let dir = artifact.parent()?.parent()?;
    Some(compiling_in(dir))
}

/// Uses the file of the cache in `dir` for the compile that runs while the returned value
/// lives ([`compiling_for`]).
fn compiling_in(dir: &Path) -> CompileRun {
    let cache = store();
    cache.open(dir);
    let before = cache.counts();
    CompileRun { cache, before }
}

/// A compile under way ([`compiling_for`]).
pub struct CompileRun {
    cache: Arc<FunctionCache>,
    /// The store's counts when it began.
    before: (usize, usize),
}

impl Drop for CompileRun {
    /// Writes what was compiled and says how much came from the cache (the counts are the
    /// process's: compiles running at once add theirs).
    fn drop(&mut self) {
        self.cache.write_pending();
        let (found, compiled) = self.cache.counts();
        let (found, compiled) = (found - self.before.0, compiled - self.before.1);
        if found + compiled > 0 {
            tracing::info!(
                "{found} of {} functions from the cache of compiled functions",
                found + compiled
            );
        }
    }
}

impl FunctionCache {
    /// Functions found and functions compiled so far.
    fn counts(&self) -> (usize, usize) {
        (
            self.found.load(Ordering::Relaxed),
            self.compiled.load(Ordering::Relaxed),
        )
    }

    fn current(&self) -> Option<Arc<Open>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn lock_pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the file of the cache in `dir` (unless it is open already), its entries
    /// deleted first if it has grown past [`MAX_BYTES`].
    fn open(&self, dir: &Path) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let path = dir.join(FILE);
        let opened = match open.as_ref().filter(|o| o.dir == dir) {
            Some(o) => Ok(o.clone()),
            None => open_file(&path).map(|(read, write)| {
                Arc::new(Open {
                    dir: dir.to_owned(),
                    read: Mutex::new(read),
                    write: Mutex::new(write),
                })
            }),
        };
        *open = match opened {
            Ok(o) => {
                if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_BYTES) {
                    let write = o.write.lock().unwrap_or_else(|p| p.into_inner());
                    if let Err(e) = start_afresh(&write) {
                        tracing::warn!(file = %path.display(), "could not empty the cache of compiled functions: {e}");
                    }
                }
                Some(o)
            }
            Err(e) => {
                tracing::warn!(
                    file = %path.display(),
                    "compiled functions not kept ({e}); removing the file lets the next compile make it anew"
                );
                None
            }
        };
    }

    /// Writes the entries compiled since the last write, in one transaction.
    fn write_pending(&self) {
        let (pending, _) = std::mem::take(&mut *self.lock_pending());
        let Some(open) = self.current() else { return };
        if pending.is_empty() {
            return;
        }
        let mut conn = open.write.lock().unwrap_or_else(|p| p.into_inner());
        let written = (|| -> rusqlite::Result<()> {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                // Replacing: an entry Cranelift could not read back is compiled again.
                let mut put = tx.prepare_cached(
                    "INSERT OR REPLACE INTO functions (key, code, digest) VALUES (?1, ?2, ?3)",
                )?;
                for (key, code) in &pending {
                    put.execute((key, code, Sha256::digest(code).as_slice()))?;
                }
            }
            tx.commit()
        })();
        if let Err(e) = written {
            tracing::debug!(cache = %open.dir.display(), "compiled functions not written: {e}");
        }
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let open = self.current()?;
        let conn = open.read.lock().unwrap_or_else(|p| p.into_inner());
        let mut get = conn
            .prepare_cached("SELECT code, digest FROM functions WHERE key = ?1")
            .ok()?;
        let found: Option<(Vec<u8>, Vec<u8>)> = get
            .query_row([key], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()
            .ok()?;
        let code = found.and_then(|(code, digest)| {
            let intact = Sha256::digest(&code).as_slice() == digest.as_slice();
            if !intact {
                tracing::warn!(
                    cache = %open.dir.display(),
                    "a compiled function does not match its digest (damaged on disk?): compiled again"
                );
            }
            intact.then_some(code)
        });
        self.found
            .fetch_add(usize::from(code.is_some()), Ordering::Relaxed);
        code.map(Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        self.compiled.fetch_add(1, Ordering::Relaxed);
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

/// Opens (or makes) the file at `path`: a connection for lookups and one for writes.
fn open_file(path: &Path) -> rusqlite::Result<(Connection, Connection)> {
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
        for old in OLD_FILES {
            let _ = std::fs::remove_file(parent.join(old));
        }
    }
    // Made 0600 before SQLite opens it, whatever the umask: SQLite gives its log files the
    // database file's mode.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(path);
    }
    let connect = || -> rusqlite::Result<Connection> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        Ok(conn)
    };
    let write = connect()?;
    // WAL: processes compiling at once (a host and its `prepare` children, test hosts
    // sharing a cache) read while one writes.
    write.pragma_update(None, "journal_mode", "WAL")?;
    write.pragma_update(None, "synchronous", "NORMAL")?;
    // Once written into the file, the log is cut back rather than kept at its largest.
    write.pragma_update(None, "journal_size_limit", 16 << 20)?;
    write.execute(
        "CREATE TABLE IF NOT EXISTS functions (key BLOB PRIMARY KEY, code BLOB NOT NULL, \
         digest BLOB NOT NULL) WITHOUT ROWID",
        (),
    )?;
    Ok((connect()?, write))
}

/// Deletes every entry and gives the space back, as one writer among the file's users.
fn start_afresh(write: &Connection) -> rusqlite::Result<()> {
    write.execute_batch("BEGIN IMMEDIATE; DELETE FROM functions; COMMIT; VACUUM;")?;
    write.query_row("PRAGMA wal_checkpoint(TRUNCATE)", (), |_| Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore;

    #[test]
    fn entries_are_written_when_the_compile_ends_and_read_by_another_store_of_the_file() {
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
        // An entry compiled again (Cranelift could not read it back) replaces the old one.
        cache.insert(b"key", b"new code".to_vec());
        cache.write_pending();
        // Another process's store on the same file.
        let other = FunctionCache::default();
        other.open(dir.path());
        assert_eq!(other.get(b"key").as_deref(), Some(&b"new code"[..]));
        assert_eq!(other.get(b"other"), None);
        assert_eq!(other.counts(), (1, 0));
    }

    /// An entry whose code was changed on disk (as damaged pages would) is a miss.
    #[test]
    fn an_entry_that_does_not_match_its_digest_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FunctionCache::default();
        cache.open(dir.path());
        cache.insert(b"key", b"code".to_vec());
        cache.write_pending();
        let (_, write) = open_file(&dir.path().join(FILE)).unwrap();
        write
            .execute(
                "UPDATE functions SET code = x'00c0de' WHERE key = x'6b6579'",
                (),
            )
            .unwrap();
        assert_eq!(cache.get(b"key"), None);
    }

    #[test]
    fn a_file_past_its_limit_is_emptied_and_an_unusable_one_only_disables_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let big = vec![7u8; 1 << 20];
        let cache = FunctionCache::default();
        cache.open(dir.path());
        for i in 0..4u8 {
            cache.insert(&[i], big.clone());
        }
        cache.write_pending();
        assert_eq!(cache.get(&[0]).as_deref(), Some(&big[..]));
        let file = dir.path().join(FILE);
        let full = std::fs::metadata(&file).unwrap().len();
        assert!(full > 4 << 20, "{full}");
        // As if past the limit: emptied through SQLite while the first store keeps it open.
        start_afresh(&open_file(&file).unwrap().1).unwrap();
        assert_eq!(cache.get(&[0]), None);
        assert!(std::fs::metadata(&file).unwrap().len() < full / 2);

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
