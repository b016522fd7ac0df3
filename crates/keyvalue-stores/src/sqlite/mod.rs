//! Key-value data in an embedded SQLite file, laid out exactly as Spin's default store does
//! (`spin_key_value(store, key, value)`, primary key `(store, key)`; counters as 8-byte
//! little-endian i64), so `spin up --state-dir DIR` and `runtime-host --data-dir DIR` read
//! the same `DIR/sqlite_key_value.db`.
//!
//! Writes and reads take different paths, because they cost different things:
//! - every write goes through one writer ([`writer`]), which applies all the writes waiting
//!   at that moment in a single transaction and commits once (group commit). A write is
//!   acknowledged only after its commit, so it survives `kill -9`; and since one connection
//!   applies every write in order, increment and compare-and-swap stay atomic across all
//!   instances;
//! - reads run at once on a small pool of reader connections; write-ahead logging (WAL) lets
//!   them proceed while the writer commits, and each sees every write acknowledged before it.

mod store;
mod writer;

pub use store::SqliteStore;

use anyhow::{Context, Result, anyhow};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use writer::{Done, Write, Writer};

/// File name Spin uses inside its state directory.
pub const DB_FILE: &str = "sqlite_key_value.db";

/// Keys returned per `list-keys` page.
const PAGE_SIZE: usize = 1000;

/// Idle reader connections kept open; more are opened under load and closed afterwards.
const IDLE_READERS: usize = 4;

pub struct KvDatabase {
    path: PathBuf,
    readers: Mutex<Vec<Connection>>,
    writer: Writer,
}

/// Opens a connection with the settings every connection to the file shares.
fn connect(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)
        .with_context(|| format!("opening key-value database {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(conn)
}

/// Makes the database file and its -wal and -shm files (those that exist) 0600.
fn private_files(path: &Path) -> Result<()> {
    #[cfg(unix)]
    for suffix in ["", "-wal", "-shm"] {
        use std::os::unix::fs::PermissionsExt;
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = Path::new(&name);
        match std::fs::metadata(file) {
            Ok(m) if m.permissions().mode() & 0o077 != 0 => {
                std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
                    .with_context(|| format!("making {} private", file.display()))?
            }
            _ => {}
        }
    }
    Ok(())
}

impl KvDatabase {
    /// Opens (creating if needed) `<dir>/sqlite_key_value.db`.
    pub fn open_in(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating data directory {}", dir.display()))?;
        Self::open(&dir.join(DB_FILE))
    }

    pub fn open(path: &Path) -> Result<Self> {
        let conn = connect(path)?;
        // Registration ids and chat text are in here: the file is its user's alone. SQLite
        // gives the -wal and -shm files it creates the database file's mode, so this comes
        // before WAL is switched on; files an earlier run left open are tightened too.
        private_files(path)?;
        // WAL: a commit is in the log before it returns, so kill -9 cannot lose it, and
        // readers never wait for the writer. NORMAL sync is durable against process death;
        // only power loss may drop the last commits.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute(
            "CREATE TABLE IF NOT EXISTS spin_key_value (
                store TEXT NOT NULL,
                key   TEXT NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (store, key)
            )",
            [],
        )
        .with_context(|| format!("preparing key-value database {}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            readers: Mutex::new(Vec::new()),
            writer: Writer::new(conn, path),
        })
    }

    /// Runs `f` on a reader connection (an idle one, else a new one).
    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let idle = self.lock_readers().pop();
        let conn = match idle {
            Some(c) => c,
            None => connect(&self.path)?,
        };
        let result = f(&conn);
        let mut readers = self.lock_readers();
        if readers.len() < IDLE_READERS {
            readers.push(conn);
        }
        Ok(result?)
    }

    fn lock_readers(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        // A connection list cannot be left half-changed by a panic: poisoning is harmless.
        self.readers.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>> {
        self.read(|c| {
            c.prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                .query_row(params![store, key], |r| r.get(0))
                .optional()
        })
    }

    pub fn exists(&self, store: &str, key: &str) -> Result<bool> {
        self.read(|c| {
            c.prepare_cached("SELECT 1 FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                .exists(params![store, key])
        })
    }

    /// One page of the keys starting with `prefix`, in key order, after `cursor`
    /// (exclusive). The returned cursor is `Some` when more keys may follow.
    pub fn list_keys(
        &self,
        store: &str,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        // `key >= prefix` starts the index walk at the prefix; `substr` keeps only its keys.
        let keys = self.read(|c| {
            c.prepare_cached(
                "SELECT key FROM spin_key_value WHERE store = ?1 AND key >= ?2 AND key > ?3 \
                 AND substr(key, 1, length(?2)) = ?2 ORDER BY key LIMIT ?4",
            )?
            .query_map(
                params![store, prefix, cursor.unwrap_or(""), PAGE_SIZE as i64],
                |r| r.get(0),
            )?
            .collect::<rusqlite::Result<Vec<String>>>()
        })?;
        let next = (keys.len() == PAGE_SIZE)
            .then(|| keys.last().cloned())
            .flatten();
        Ok((keys, next))
    }

    /// The values of `keys`, in their order.
    pub fn get_many(&self, store: &str, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.read(|c| {
            let mut stmt =
                c.prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?;
            keys.iter()
                .map(|k| stmt.query_row(params![store, k], |r| r.get(0)).optional())
                .collect()
        })
    }

    async fn write(&self, op: Write) -> Result<Done> {
        self.writer.submit(op).await
    }

    pub async fn set(&self, store: &str, key: &str, value: &[u8]) -> Result<()> {
        self.set_many(store, &[(key.to_owned(), value.to_vec())])
            .await
    }

    pub async fn delete(&self, store: &str, key: &str) -> Result<()> {
        self.delete_many(store, &[key.to_owned()]).await
    }

    pub async fn set_many(&self, store: &str, entries: &[(String, Vec<u8>)]) -> Result<()> {
        self.write(Write::SetMany {
            store: store.to_owned(),
            entries: entries.to_vec(),
        })
        .await
        .map(drop)
    }

    pub async fn delete_many(&self, store: &str, keys: &[String]) -> Result<()> {
        self.write(Write::DeleteMany {
            store: store.to_owned(),
            keys: keys.to_vec(),
        })
        .await
        .map(drop)
    }

    /// Adds `delta` to the counter at `key` (absent = 0) and returns the new value.
    pub async fn increment(&self, store: &str, key: &str, delta: i64) -> Result<i64> {
        let op = Write::Increment {
            store: store.to_owned(),
            key: key.to_owned(),
            delta,
        };
        match self.write(op).await? {
            Done::Counter(n) => Ok(n),
            other => Err(anyhow!("store writer answered {other:?} to an increment")),
        }
    }

    /// Writes `new` only if the value is still `expected` (`None`: still absent). Returns
    /// whether the swap happened.
    pub async fn compare_and_swap(
        &self,
        store: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool> {
        let op = Write::CompareAndSwap {
            store: store.to_owned(),
            key: key.to_owned(),
            expected: expected.map(<[u8]>::to_vec),
            new: new.to_vec(),
        };
        match self.write(op).await? {
            Done::Swapped(s) => Ok(s),
            other => Err(anyhow!("store writer answered {other:?} to a swap")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A database in a fresh temporary directory, removed when the guard drops.
    struct TempDb {
        db: KvDatabase,
        dir: PathBuf,
    }

    impl std::ops::Deref for TempDb {
        type Target = KvDatabase;
        fn deref(&self) -> &KvDatabase {
            &self.db
        }
    }

    impl Drop for TempDb {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn temp_db() -> TempDb {
        let dir = std::env::temp_dir().join(format!("kv-test-{}", uuid::Uuid::new_v4().simple()));
        TempDb {
            db: KvDatabase::open_in(&dir).unwrap(),
            dir,
        }
    }

    #[tokio::test]
    async fn basic_operations_and_store_isolation() {
        let db = temp_db();
        assert_eq!(db.get("a", "k").unwrap(), None);
        db.set("a", "k", b"v1").await.unwrap();
        db.set("a", "k", b"v2").await.unwrap();
        assert_eq!(db.get("a", "k").unwrap().as_deref(), Some(&b"v2"[..]));
        assert!(db.exists("a", "k").unwrap());
        assert!(!db.exists("b", "k").unwrap());
        db.delete("a", "k").await.unwrap();
        assert!(!db.exists("a", "k").unwrap());
    }

    #[tokio::test]
    async fn list_keys_pages_through_everything() {
        let db = temp_db();
        let entries: Vec<_> = (0..2500).map(|i| (format!("k{i:05}"), vec![1])).collect();
        db.set_many("s", &entries).await.unwrap();
        db.set("other", "x", b"1").await.unwrap();
        let (mut all, mut cursor) = db.list_keys("s", "", None).unwrap();
        while let Some(c) = cursor {
            let (page, next) = db.list_keys("s", "", Some(&c)).unwrap();
            all.extend(page);
            cursor = next;
        }
        assert_eq!(all.len(), 2500);
        assert_eq!(all[0], "k00000");
        assert_eq!(all[2499], "k02499");
        // A prefix lists only its own keys, the prefix itself included.
        db.set_many("s", &[("k0".into(), vec![1]), ("j9".into(), vec![1])])
            .await
            .unwrap();
        let (page, _) = db.list_keys("s", "k0001", None).unwrap();
        assert_eq!(page.len(), 10);
        assert!(page.iter().all(|k| k.starts_with("k0001")));
        let (page, _) = db.list_keys("s", "k0", None).unwrap();
        assert_eq!(page[0], "k0");
    }

    #[tokio::test]
    async fn increment_uses_spin_encoding_and_rejects_non_counters() {
        let db = temp_db();
        assert_eq!(db.increment("s", "c", 5).await.unwrap(), 5);
        assert_eq!(db.increment("s", "c", -7).await.unwrap(), -2);
        assert_eq!(db.get("s", "c").unwrap().unwrap(), (-2i64).to_le_bytes());
        db.set("s", "text", b"hello").await.unwrap();
        assert!(db.increment("s", "text", 1).await.is_err());
        db.set("s", "max", &i64::MAX.to_le_bytes()).await.unwrap();
        assert!(db.increment("s", "max", 1).await.is_err());
        // A refused write in a batch leaves the others alone.
        assert_eq!(db.get("s", "text").unwrap().as_deref(), Some(&b"hello"[..]));
        assert_eq!(db.increment("s", "c", 0).await.unwrap(), -2);
    }

    #[tokio::test]
    async fn compare_and_swap_only_from_expected_value() {
        let db = temp_db();
        assert!(db.compare_and_swap("s", "k", None, b"1").await.unwrap());
        assert!(!db.compare_and_swap("s", "k", None, b"2").await.unwrap());
        assert!(
            !db.compare_and_swap("s", "k", Some(b"0"), b"2")
                .await
                .unwrap()
        );
        assert!(
            db.compare_and_swap("s", "k", Some(b"1"), b"2")
                .await
                .unwrap()
        );
        db.delete("s", "k").await.unwrap();
        assert!(
            !db.compare_and_swap("s", "k", Some(b"2"), b"3")
                .await
                .unwrap()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writes_group_commit_and_lose_nothing() {
        let db = Arc::new(temp_db());
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let db = db.clone();
                tokio::spawn(async move {
                    for _ in 0..50 {
                        db.increment("s", "n", 1).await.unwrap();
                        db.set("s", &format!("own{i}"), b"x").await.unwrap();
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(db.increment("s", "n", 0).await.unwrap(), 64 * 50);
        let (keys, _) = db.list_keys("s", "", Some("own")).unwrap();
        assert_eq!(keys.len(), 64);
        let commits = db.writer.commits();
        assert!(
            commits < 64 * 100,
            "writes waiting together share a commit ({commits} commits for {} writes)",
            64 * 100 + 1
        );
    }

    #[tokio::test]
    async fn data_survives_reopen() {
        let dir = std::env::temp_dir().join(format!("kv-reopen-{}", uuid::Uuid::new_v4().simple()));
        {
            let db = KvDatabase::open_in(&dir).unwrap();
            db.set("default", "k", b"persisted").await.unwrap();
        }
        let db = KvDatabase::open_in(&dir).unwrap();
        assert_eq!(
            db.get("default", "k").unwrap().as_deref(),
            Some(&b"persisted"[..])
        );
        drop(db);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
