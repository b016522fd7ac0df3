//! The single writer of a key-value database: a thread that takes every write waiting at the
//! moment, applies them in arrival order inside one transaction, commits once, and only then
//! acknowledges each (group commit).
//!
//! Why a thread and not a lock: a commit is a write to the WAL file, by far the most
//! expensive step of a small write. Under concurrent requests, one commit now covers all the
//! writes that queued up while the previous commit was running, instead of one commit each.
//! Because this thread is the only writer, a read-modify-write (increment, compare-and-swap)
//! needs no further locking to be atomic.

use anyhow::{Context, Result, anyhow};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
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

/// The sending side, kept by the database. Dropping it ends the thread.
pub struct WriterHandle {
    jobs: mpsc::Sender<Job>,
    #[cfg_attr(not(test), allow(dead_code))]
    commits: Arc<AtomicU64>,
}

impl WriterHandle {
    /// Queues `op` and waits (without blocking the thread) until it is committed.
    pub async fn submit(&self, op: Write) -> Result<Done> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job { op, reply })
            .map_err(|_| anyhow!("the key-value writer has stopped"))?;
        answer
            .await
            .map_err(|_| anyhow!("the key-value writer stopped before committing"))?
    }

    /// Transactions committed so far (for tests and diagnostics).
    #[cfg(test)]
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }
}

/// Starts the writer thread on `conn`.
pub fn spawn(conn: Connection, path: &Path) -> Result<WriterHandle> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let commits = Arc::new(AtomicU64::new(0));
    let counted = commits.clone();
    let name = format!("kv-writer {}", path.display());
    std::thread::Builder::new()
        .name("kv-writer".into())
        .stack_size(256 << 10)
        .spawn(move || run(conn, queue, counted, name))
        .context("starting the key-value writer thread")?;
    Ok(WriterHandle { jobs, commits })
}

fn run(mut conn: Connection, queue: mpsc::Receiver<Job>, commits: Arc<AtomicU64>, name: String) {
    // Blocks until a job arrives; ends when every sender is gone.
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        match commit_batch(&mut conn, &batch) {
            Ok(results) => {
                commits.fetch_add(1, Ordering::Relaxed);
                for (job, result) in batch.into_iter().zip(results) {
                    let _ = job.reply.send(result);
                }
            }
            Err(e) => {
                let message = format!("{e:#}");
                tracing::error!(store = %name, error = %message, "key-value commit failed");
                for job in batch {
                    let _ = job
                        .reply
                        .send(Err(anyhow!("key-value commit failed: {message}")));
                }
            }
        }
    }
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
