//! A lock made of one atomic increment, for stores whose compare-and-swap cannot be trusted.
//!
//! Spin 4.0.2's Redis store reports every swap as failed, written or not, so nothing can be
//! built on its swaps; its `increment` is Redis `INCRBY`, which is atomic (and so is the
//! SQLite store's, one transaction). The lock is the counter at `guest-kit/lock/<key>`:
//!
//! - to take it, add your own timestamp `t` (Unix ms, always > 0): the counter held 0, so the
//!   lock was free and is now yours, exactly when the sum returned is `t` itself;
//! - losers take their `t` back off at once, and the holder takes its `t` off to release;
//! - a loser also learns what the counter held before its own `t`: one timestamp when a
//!   single other request holds it or is about to take its `t` back. A holder that died (its
//!   process killed between taking and releasing) leaves its timestamp there for good: a
//!   value older than [`STALE_MS`] is taken off by the one request whose increment of
//!   `guest-kit/lock/<key>/broken/<value>` returned 1, so exactly one request breaks a lock.
//!   A holder taken for dead that releases after all leaves the counter below zero, which
//!   is put right the same way.
//!
//! What runs under the lock has [`HOLD_MS`] to finish writing (checked before it writes), far
//! below [`STALE_MS`]: a lock is broken only from a holder that is gone or stopped for long.

use super::Store;
use edge_api::error::{ApiError, ErrorCode};

/// After this long a held lock is taken for one whose holder is gone.
pub const STALE_MS: i64 = 10_000;
/// What the holder has, from taking the lock, to finish its writes.
pub const HOLD_MS: u64 = 3_000;
/// Tries to take the lock before 503 `store_contention`: with the pauses of
/// [`super::update::backoff`], about 1.5 s of waiting.
const ATTEMPTS: u32 = 96;

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_millis() as i64)
        .max(1)
}

/// Whether the lock taken at `taken_ms` may still write.
pub fn still_held(taken_ms: i64) -> Result<(), ApiError> {
    if now_ms() - taken_ms > HOLD_MS as i64 {
        return Err(ApiError::new(
            ErrorCode::StoreContention,
            "the store was too slow to finish this change in time; nothing was written: retry",
        ));
    }
    Ok(())
}

impl Store {
    /// Runs `f` holding the lock of `key`; `f` gets the time the lock was taken (pass it to
    /// [`still_held`] before each write). The lock is released whatever `f` returns.
    pub(super) fn locked<R>(
        &self,
        key: &str,
        f: impl FnOnce(i64) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        let lock = format!("guest-kit/lock/{key}");
        for attempt in 0..ATTEMPTS {
            if attempt > 1 {
                super::update::backoff(attempt);
            }
            let mine = now_ms();
            let sum = self.increment(&lock, mine)?;
            if sum == mine {
                let result = f(mine);
                let released = self.increment(&lock, -mine);
                return match (result, released) {
                    (Ok(r), Ok(_)) => Ok(r),
                    (Err(e), _) | (Ok(_), Err(e)) => Err(e),
                };
            }
            self.increment(&lock, -mine)?;
            let before = sum - mine;
            // A residue: a dead holder's timestamp, or less than nothing (a holder that was
            // broken for being slow released after all).
            if before < 0 || (before > 0 && before <= now_ms() - STALE_MS) {
                self.break_lock(&lock, before)?;
            }
        }
        Err(ApiError::new(
            ErrorCode::StoreContention,
            format!(
                "`{key}` was being changed by others during each of {ATTEMPTS} attempts to \
                 change it; nothing was changed: retry shortly"
            ),
        ))
    }

    /// Takes a residue `stale` off `lock` (a dead holder's timestamp, or a negative left by
    /// a late release), unless another request did.
    fn break_lock(&self, lock: &str, stale: i64) -> Result<(), ApiError> {
        if self.increment(&format!("{lock}/broken/{stale}"), 1)? == 1 {
            eprintln!(
                "guest-kit: breaking `{lock}`, held since {stale} ms by a request that is gone"
            );
            self.increment(lock, -stale)?;
        }
        Ok(())
    }
}
