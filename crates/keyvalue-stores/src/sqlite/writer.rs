//! The single writer of a key-value database: every write is queued, and whoever holds the
//! connection takes every write waiting at that moment, applies them in arrival order inside
//! one transaction, commits once, and only then acknowledges each (group commit).
//!
//! A commit is a write to the WAL file, by far the most expensive step of a small write.
//! Under concurrent requests, one commit covers all the writes that queued up while the
//! previous commit ran, instead of one commit each. The caller that finds the connection free
//! commits on its own thread: no hand-off to another thread and back, which profiling showed
//! to cost more than the commit itself. Since one connection applies every write, in order,
//! a read-modify-write (increment, compare-and-swap) needs no further locking to be atomic.

use anyhow::{Result, anyhow};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::oneshot;

/// Most writes applied in one transaction, so one commit stays short.
const MAX_BATCH: usize = 512;

/// A write, as the host's key-value interface asks for it.
#[derive(Debug)]
pub enum Write {
    SetMany {
        store: String,
        entries: Vec<(String, Vec<u8>)>,
    },
    DeleteMany {
        store: String,
        keys: Vec<String>,
    },
    Increment {
        store: String,
        key: String,
        delta: i64,
    },
    CompareAndSwap {
        store: String,
        key: String,
        expected: Option<Vec<u8>>,
        new: Vec<u8>,
    },
}

/// What a committed write reports back.
#[derive(Debug)]
pub enum Done {
    Written,
    Counter(i64),
    Swapped(bool),
}

struct Job {
    op: Write,
    reply: oneshot::Sender<Result<Done>>,
}

/// The database's single writer: a queue of writes and the connection that commits them.
pub struct Writer {
    queue: Mutex<Vec<Job>>,
    conn: Mutex<Connection>,
    name: String,
    #[cfg_attr(not(test), allow(dead_code))]
    commits: AtomicU64,
}

impl Writer {
    pub fn new(conn: Connection, path: &Path) -> Self {
        Self {
            queue: Mutex::new(Vec::new()),
            conn: Mutex::new(conn),
            name: path.display().to_string(),
            commits: AtomicU64::new(0),
        }
    }

    /// Queues `op` and returns once it is committed, with its outcome.
    pub async fn submit(&self, op: Write) -> Result<Done> {
        let (reply, answer) = oneshot::channel();
        lock(&self.queue).push(Job { op, reply });
        self.commit_waiting();
        answer
            .await
            .map_err(|_| anyhow!("the key-value writer stopped before committing"))?
    }

    /// Commits everything queued, unless another caller is committing right now: that one
    /// takes our write into its next batch. After releasing the connection, the queue is
    /// looked at again, so a write queued during a commit is never left behind.
    fn commit_waiting(&self) {
        loop {
            {
                let Ok(mut conn) = self.conn.try_lock() else {
                    return;
                };
                let batch: Vec<Job> = {
                    let mut queue = lock(&self.queue);
                    let n = queue.len().min(MAX_BATCH);
                    queue.drain(..n).collect()
                };
                if !batch.is_empty() {
                    self.commit(&mut conn, batch);
                }
            }
            if lock(&self.queue).is_empty() {
                return;
            }
        }
    }

    fn commit(&self, conn: &mut Connection, batch: Vec<Job>) {
        match commit_batch(conn, &batch) {
            Ok(results) => {
                self.commits.fetch_add(1, Ordering::Relaxed);
                for (job, result) in batch.into_iter().zip(results) {
                    let _ = job.reply.send(result);
                }
            }
            Err(e) => {
                let message = format!("{e:#}");
                tracing::error!(store = %self.name, error = %message, "key-value commit failed");
                for job in batch {
                    let _ = job
                        .reply
                        .send(Err(anyhow!("key-value commit failed: {message}")));
                }
            }
        }
    }

    /// Transactions committed so far (for tests and diagnostics).
    #[cfg(test)]
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }
}

/// A queue or connection cannot be left half-changed by a panic: poisoning is harmless.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Applies `batch` in one transaction. The outer error means nothing was committed; an inner
/// error is one write refused (a counter that is not one), which wrote nothing.
fn commit_batch(conn: &mut Connection, batch: &[Job]) -> Result<Vec<Result<Done>>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut results = Vec::with_capacity(batch.len());
    for job in batch {
        results.push(apply(&tx, &job.op)?);
    }
    tx.commit()?;
    Ok(results)
}

/// One write. `Err` is a database failure (the batch is abandoned); `Ok(Err)` a refusal.
fn apply(conn: &Connection, op: &Write) -> rusqlite::Result<Result<Done>> {
    match op {
        Write::SetMany { store, entries } => {
            let mut stmt = conn.prepare_cached(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
            )?;
            for (k, v) in entries {
                stmt.execute(params![store, k, v])?;
            }
            Ok(Ok(Done::Written))
        }
        Write::DeleteMany { store, keys } => {
            let mut stmt =
                conn.prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?;
            for k in keys {
                stmt.execute(params![store, k])?;
            }
            Ok(Ok(Done::Written))
        }
        Write::Increment { store, key, delta } => increment(conn, store, key, *delta),
        Write::CompareAndSwap {
            store,
            key,
            expected,
            new,
        } => {
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
            Ok(Ok(Done::Swapped(changed == 1)))
        }
    }
}

/// Counters are 8-byte little-endian i64, as in Spin's SQLite store. Read and write happen
/// inside the writer's transaction, so no other write can come between them.
fn increment(
    conn: &Connection,
    store: &str,
    key: &str,
    delta: i64,
) -> rusqlite::Result<Result<Done>> {
    let current: Option<Vec<u8>> = conn
        .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
        .query_row(params![store, key], |r| r.get(0))
        .optional()?;
    let refused = |why: String| Ok(Err(anyhow!(why)));
    let current = match current {
        None => 0,
        Some(bytes) => match <[u8; 8]>::try_from(bytes.as_slice()) {
            Ok(b) => i64::from_le_bytes(b),
            Err(_) => {
                return refused(format!(
                    "value of `{key}` is not a counter (expected 8 bytes, found {})",
                    bytes.len()
                ));
            }
        },
    };
    let Some(new) = current.checked_add(delta) else {
        return refused(format!(
            "counter `{key}` would overflow ({current} + {delta})"
        ));
    };
    conn.prepare_cached(
        "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
         ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![store, key, new.to_le_bytes()])?;
    Ok(Ok(Done::Counter(new)))
}
