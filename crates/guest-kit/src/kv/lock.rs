//! A lock made of one atomic increment, for stores whose compare-and-swap cannot be trusted.
//!
//! Spin 4.0.2's Redis store reports every swap as failed, written or not, so nothing can be
//! built on its swaps; its `increment` is Redis `INCRBY`, which is atomic (and so is the
//! SQLite store's, one transaction). The lock is the counter at `guest-kit/lock/<key>`, 0 when
//! free (names and times: [`edge_api::kv_lock`]):
//!
//! - a request reads it (`increment` by 0) and, only when it reads 0, adds its own timestamp
//!   `t` (Unix ms, always > 0). It holds the lock exactly when the sum returned is `t` itself;
//!   otherwise it takes `t` back off at once. Reading first keeps waiting requests from
//!   holding the counter above 0 themselves (with 32 clients, adding blindly left the lock
//!   free about one time in a thousand);
//! - the holder takes `t` off to release, unless it has held the lock for [`RELEASE_WITHIN_MS`]
//!   or more: such a lock may already have been broken, and it is left to be broken.
//!
//! A counter left above (or below) 0 by requests that are gone (a process killed between its
//! two increments) is broken: a value that reads as one timestamp older than [`STALE_MS`] at
//! once, any other value once waiting requests have seen it unchanged for [`STALE_MS`]. To
//! break it, a request takes the value off, and the break counts only if that leaves the
//! counter at 0, that is if the counter still held the value: otherwise (another request
//! broke it first, or the counter moved meanwhile) it adds the value back at once, just as a
//! request that lost the race for the lock takes its timestamp back. So one request breaks
//! it, however many saw it, and a late one undoes its own increment rather than a holder's.
//!
//! A holder has [`HOLD_MS`] to start its writes (checked before each write), and [`STALE_MS`]
//! leaves a write started by then 7 s more to reach the store. Nothing inside a Spin guest
//! proves a holder dead sooner (no process identity, no expiry on a key, no timeout on Spin's
//! store calls), so [`STALE_MS`] (10 s) is the bound. Hosts sharing a store must keep their
//! clocks within [`STALE_MS`] of each other (and of Redis's, see below).
//!
//! The one key besides the counter is the note `guest-kit/lock/<key>/seen`, `[value, since]`:
//! the value a waiting request found and when it was first found, so that requests waiting
//! one after another can tell a value stood for [`STALE_MS`] (each waits a few seconds at
//! most). It is needed while the counter holds the noted value, and no longer once it moves:
//! a request that wrote or read the note deletes it when it next reads the counter at another
//! value (0 after breaking it). One that gives up while the value stands leaves it for the
//! requests after it. A note deleted while another request was noting a new value costs that
//! value a fresh note, so its break comes later, never sooner. (Until issue 61 breakers
//! also incremented a marker `<lock>/broken/<value>/<window>`, the first to reach 1 breaking;
//! a marker could never be deleted, as a request that read the value before the break could
//! reach it at any later time; the counter itself now tells who broke the value.)
//!
//! Every other writer of a record keeps to the same lock where both may share a store:
//! `runtime-host`'s Redis store (`crates/keyvalue-stores/src/redis/guard.rs`) swaps and writes only
//! while the record's lock reads 0, in one Lua script with the write, breaking residues by the
//! rules above on Redis's clock (reading the value and taking it off in one script, so its
//! break counts exactly when a guest's would); a write that meets a held lock waits for it to
//! be released. So a `spin up` and a `runtime-host` on one Redis never overwrite each other's
//! changes.

use super::{Backend, Store};
use edge_api::error::{ApiError, ErrorCode};
pub use edge_api::kv_lock::{HOLD_MS, ONE_TIMESTAMP_WITHIN_MS, STALE_MS};
/// A holder releases only within this long of taking the lock (see the module's comment).
const RELEASE_WITHIN_MS: i64 = STALE_MS / 2;
/// Tries to take the lock before 503 `store_contention`: with the pauses of
/// [`super::backoff`], a few seconds of waiting.
const ATTEMPTS: u32 = 192;

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

/// The note of `lock` (see the module's comment).
pub(super) fn note_key(lock: &str) -> String {
    format!("{lock}/seen")
}

impl<B: Backend> Store<B> {
    /// Runs `f` holding the lock of `key`; `f` gets the time the lock was taken (pass it to
    /// [`still_held`] before each write). The lock is released whatever `f` returns.
    pub(super) fn locked<R>(
        &self,
        key: &str,
        f: impl FnOnce(i64) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        let lock = edge_api::kv_lock::lock_key(key);
        // The value of the note this request wrote or read, while it may still be there.
        let mut noted = None;
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                super::backoff(attempt.min(8));
            }
            let value = self.increment(&lock, 0)?;
            if noted.is_some_and(|n| n != value) {
                self.forget_note(&lock, &mut noted);
            }
            if value != 0 {
                self.break_if_stale(&lock, value, &mut noted)?;
                continue;
            }
            let mine = now_ms();
            let sum = self.increment(&lock, mine)?;
            if sum != mine {
                self.increment(&lock, -mine)?;
                continue;
            }
            let result = f(mine);
            if now_ms() - mine < RELEASE_WITHIN_MS
                && let Err(e) = self.increment(&lock, -mine)
            {
                // What `f` did stands; the lock is broken once it is stale.
                eprintln!("guest-kit: could not release `{lock}`: {}", e.message);
            }
            return result;
        }
        Err(ApiError::new(
            ErrorCode::StoreContention,
            format!(
                "`{key}` was being changed by others during each of {ATTEMPTS} attempts to \
                 change it; nothing was changed: retry shortly"
            ),
        ))
    }

    /// Breaks the lock if `value` is a residue of requests that are gone (see the module's
    /// comment). A value that is not one timestamp is noted with the time it was first seen
    /// ([`note_key`]; `noted` records that this request wrote or read the note), so that
    /// requests waiting one after another can tell it has not changed for [`STALE_MS`].
    fn break_if_stale(
        &self,
        lock: &str,
        value: i64,
        noted: &mut Option<i64>,
    ) -> Result<(), ApiError> {
        let now = now_ms();
        if (now - STALE_MS..=now + STALE_MS).contains(&value) {
            return Ok(()); // a holder's timestamp, recent enough to be alive
        }
        let one_old_timestamp = (now - ONE_TIMESTAMP_WITHIN_MS..now - STALE_MS).contains(&value);
        if !one_old_timestamp {
            let note = note_key(lock);
            let since = match self.get_json::<(i64, i64)>(&note)? {
                Some((seen, since)) if seen == value => since,
                _ => {
                    self.set_json(&note, &(value, now))?;
                    now
                }
            };
            *noted = Some(value);
            if now - since < STALE_MS {
                return Ok(());
            }
        }
        if self.increment(lock, -value)? != 0 {
            // Broken by another request first, or changed since it was read: not ours to take.
            self.increment(lock, value)?;
            return Ok(());
        }
        // The note goes at the next read, which finds the counter moved on.
        eprintln!("guest-kit: broke `{lock}`, left at {value} by requests that are gone");
        Ok(())
    }

    /// Deletes the note of `lock`, which the counter has moved on from. A failure is only
    /// logged: the note is an aid to breaking residues, and a stale one is overwritten by the
    /// next request that notes a value.
    fn forget_note(&self, lock: &str, noted: &mut Option<i64>) {
        *noted = None;
        if let Err(e) = self.delete(&note_key(lock)) {
            eprintln!(
                "guest-kit: could not delete the note of `{lock}`: {}",
                e.message
            );
        }
    }
}
