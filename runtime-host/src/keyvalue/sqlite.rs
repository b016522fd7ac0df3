//! Key-value data in an embedded SQLite file, laid out exactly as Spin's default store does
//! (`spin_key_value(store, key, value)`, primary key `(store, key)`; counters as 8-byte
//! little-endian i64), so `spin up --state-dir DIR` and `runtime-host --data-dir DIR` read
//! the same `DIR/sqlite_key_value.db`.
//!
//! One connection behind a mutex serialises every operation, which is what makes increment
//! and compare-and-swap atomic across concurrent requests. WAL journaling makes each
//! committed write durable against a killed process.

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// File name Spin uses inside its state directory.
pub const DB_FILE: &str = "sqlite_key_value.db";

/// Keys returned per `list-keys` page.
const PAGE_SIZE: usize = 1000;

pub struct KvDatabase {
    conn: Mutex<Connection>,
}

impl KvDatabase {
    /// Opens (creating if needed) `<dir>/sqlite_key_value.db`.
    pub fn open_in(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating data directory {}", dir.display()))?;
        Self::open(&dir.join(DB_FILE))
    }

    pub fn open(path: &Path) -> Result<Self> {
        let conn = Connection::open(path)
            .with_context(|| format!("opening key-value database {}", path.display()))?;
        Self::init(conn).with_context(|| format!("preparing key-value database {}", path.display()))
    }

    #[cfg(test)]
    pub fn open_in_memory() -> Result<Self> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Self> {
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        // WAL: a commit is in the log before it returns, so kill -9 cannot lose it.
        // NORMAL sync is durable against process death; only power loss may drop the tail.
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
        )?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back), so a poisoned lock is still safe to use.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
            .query_row(params![store, key], |r| r.get(0))
            .optional()?)
    }

    pub fn set(&self, store: &str, key: &str, value: &[u8]) -> Result<()> {
        upsert(&self.conn(), store, key, value)
    }

    pub fn delete(&self, store: &str, key: &str) -> Result<()> {
        self.conn()
            .prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?
            .execute(params![store, key])?;
        Ok(())
    }

    pub fn exists(&self, store: &str, key: &str) -> Result<bool> {
        Ok(self
            .conn()
            .prepare_cached("SELECT 1 FROM spin_key_value WHERE store = ?1 AND key = ?2")?
            .exists(params![store, key])?)
    }

    /// One page of keys in key order, after `cursor` (exclusive). The returned cursor is
    /// `Some` when more keys may follow.
    pub fn list_keys(
        &self,
        store: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT key FROM spin_key_value WHERE store = ?1 AND key > ?2 ORDER BY key LIMIT ?3",
        )?;
        let keys = stmt
            .query_map(
                params![store, cursor.unwrap_or(""), PAGE_SIZE as i64],
                |r| r.get(0),
            )?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        let next = (keys.len() == PAGE_SIZE)
            .then(|| keys.last().cloned())
            .flatten();
        Ok((keys, next))
    }

    pub fn get_many(&self, store: &str, keys: &[String]) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?;
        keys.iter()
            .map(|k| {
                Ok((
                    k.clone(),
                    stmt.query_row(params![store, k], |r| r.get(0)).optional()?,
                ))
            })
            .collect()
    }

    pub fn set_many(&self, store: &str, entries: &[(String, Vec<u8>)]) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for (k, v) in entries {
            upsert(&tx, store, k, v)?;
        }
        tx.commit()?;
        Ok(())
    }

    pub fn delete_many(&self, store: &str, keys: &[String]) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut stmt =
                tx.prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?;
            for k in keys {
                stmt.execute(params![store, k])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Adds `delta` to the counter at `key` (absent = 0) and returns the new value.
    pub fn increment(&self, store: &str, key: &str, delta: i64) -> Result<i64> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let current: Option<Vec<u8>> = tx
            .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
            .query_row(params![store, key], |r| r.get(0))
            .optional()?;
        let current = match current {
            None => 0,
            Some(bytes) => match <[u8; 8]>::try_from(bytes.as_slice()) {
                Ok(b) => i64::from_le_bytes(b),
                Err(_) => bail!(
                    "value of `{key}` is not a counter (expected 8 bytes, found {})",
                    bytes.len()
                ),
            },
        };
        let Some(new) = current.checked_add(delta) else {
            bail!("counter `{key}` would overflow ({current} + {delta})");
        };
        upsert(&tx, store, key, &new.to_le_bytes())?;
        tx.commit()?;
        Ok(new)
    }

    /// Writes `new` only if the value is still `expected` (`None`: still absent). Returns
    /// whether the swap happened.
    pub fn compare_and_swap(
        &self,
        store: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool> {
        let conn = self.conn();
        let changed = match expected {
            Some(old) => conn
                .prepare_cached(
                    "UPDATE spin_key_value SET value = ?4
                     WHERE store = ?1 AND key = ?2 AND value = ?3",
                )?
                .execute(params![store, key, old, new])?,
            None => conn
                .prepare_cached(
                    "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                     ON CONFLICT (store, key) DO NOTHING",
                )?
                .execute(params![store, key, new])?,
        };
        Ok(changed == 1)
    }
}

fn upsert(conn: &Connection, store: &str, key: &str, value: &[u8]) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
         ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![store, key, value])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn basic_operations_and_store_isolation() {
        let db = KvDatabase::open_in_memory().unwrap();
        assert_eq!(db.get("a", "k").unwrap(), None);
        db.set("a", "k", b"v1").unwrap();
        db.set("a", "k", b"v2").unwrap();
        assert_eq!(db.get("a", "k").unwrap().as_deref(), Some(&b"v2"[..]));
        assert!(db.exists("a", "k").unwrap());
        assert!(!db.exists("b", "k").unwrap());
        db.delete("a", "k").unwrap();
        assert!(!db.exists("a", "k").unwrap());
    }

    #[test]
    fn list_keys_pages_through_everything() {
        let db = KvDatabase::open_in_memory().unwrap();
        let entries: Vec<_> = (0..2500).map(|i| (format!("k{i:05}"), vec![1])).collect();
        db.set_many("s", &entries).unwrap();
        db.set("other", "x", b"1").unwrap();
        let (mut all, mut cursor) = db.list_keys("s", None).unwrap();
        while let Some(c) = cursor {
            let (page, next) = db.list_keys("s", Some(&c)).unwrap();
            all.extend(page);
            cursor = next;
        }
        assert_eq!(all.len(), 2500);
        assert_eq!(all[0], "k00000");
        assert_eq!(all[2499], "k02499");
    }

    #[test]
    fn increment_uses_spin_encoding_and_rejects_non_counters() {
        let db = KvDatabase::open_in_memory().unwrap();
        assert_eq!(db.increment("s", "c", 5).unwrap(), 5);
        assert_eq!(db.increment("s", "c", -7).unwrap(), -2);
        assert_eq!(db.get("s", "c").unwrap().unwrap(), (-2i64).to_le_bytes());
        db.set("s", "text", b"hello").unwrap();
        assert!(db.increment("s", "text", 1).is_err());
        db.set("s", "max", &i64::MAX.to_le_bytes()).unwrap();
        assert!(db.increment("s", "max", 1).is_err());
    }

    #[test]
    fn compare_and_swap_only_from_expected_value() {
        let db = KvDatabase::open_in_memory().unwrap();
        assert!(db.compare_and_swap("s", "k", None, b"1").unwrap());
        assert!(!db.compare_and_swap("s", "k", None, b"2").unwrap());
        assert!(!db.compare_and_swap("s", "k", Some(b"0"), b"2").unwrap());
        assert!(db.compare_and_swap("s", "k", Some(b"1"), b"2").unwrap());
        db.delete("s", "k").unwrap();
        assert!(!db.compare_and_swap("s", "k", Some(b"2"), b"3").unwrap());
    }

    #[test]
    fn concurrent_increments_are_not_lost() {
        let db = Arc::new(KvDatabase::open_in_memory().unwrap());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || {
                    for _ in 0..250 {
                        db.increment("s", "n", 1).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(db.increment("s", "n", 0).unwrap(), 2000);
    }

    #[test]
    fn data_survives_reopen() {
        let dir = std::env::temp_dir().join(format!("kv-reopen-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let db = KvDatabase::open_in(&dir).unwrap();
            db.set("default", "k", b"persisted").unwrap();
        }
        let db = KvDatabase::open_in(&dir).unwrap();
        assert_eq!(
            db.get("default", "k").unwrap().as_deref(),
            Some(&b"persisted"[..])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
