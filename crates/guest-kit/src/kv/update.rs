//! [`Store::update`]: read-modify-write made atomic with whatever the store offers, its
//! compare-and-swap where that holds, else the lock of [`super::lock`].

use super::SWAPS;
use super::{Backend, CasHandle, SwapError};
use super::{Change, Store, backoff, decode, encode, lock, probe_key, store_err};
use edge_api::error::{ApiError, ErrorCode};
use serde::{Serialize, de::DeserializeOwned};

/// What a store's compare-and-swap can be trusted with ([`Store::swaps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Swaps {
    /// Every swap wins only over the value it read, absent included.
    All,
    /// Only swaps of a key that exists; a swap from "absent" overwrites whatever is there.
    OnExistingKeys,
    /// No swap's answer can be believed; increments are atomic.
    Untrusted,
}

/// Attempts of one [`Store::update`] before it gives up with 503 `store_contention`. Each lost
/// race but the first is followed by a pause ([`backoff`]), so a record many requests fight
/// over costs a bounded number of store round trips per request (under Spin, each attempt may
/// be a new connection to the store), never a storm of them. With 8 writers on one record (a
/// host's default instances per component) an attempt wins about one time in eight; 96 make
/// a refusal under the registry benchmark's load a rare event, while bounding what one
/// request can spend (at most 96 round trips and about 1.5 s). The lock of [`super::lock`]
/// is tried as many times, with the same pauses.
const MAX_CAS_ATTEMPTS: u32 = 96;

impl<B: Backend> Store<B> {
    /// Atomic read-modify-write of the JSON record at `key`.
    ///
    /// `f` sees the current value (or `None`) and returns what to do plus a result. When it
    /// asks to write and someone else changed the record in between, `f` runs again on the
    /// fresh value; so `f` must be free of side effects other than its return value.
    pub fn update<T, R, F>(&self, key: &str, mut f: F) -> Result<R, ApiError>
    where
        T: Serialize + DeserializeOwned,
        F: FnMut(Option<T>) -> Result<(Change<T>, R), ApiError>,
    {
        self.update_bytes(key, |bytes| {
            let value = bytes.map(|b| decode::<T>(key, b)).transpose()?;
            match f(value)? {
                (Change::Keep, r) => Ok((Change::Keep, r)),
                (Change::Put(new), r) => Ok((Change::Put(encode(key, &new)?), r)),
            }
        })
    }

    /// [`Store::update`] on raw bytes, for values that are not JSON.
    pub fn update_bytes<R, F>(&self, key: &str, mut f: F) -> Result<R, ApiError>
    where
        F: FnMut(Option<&[u8]>) -> Result<(Change<Vec<u8>>, R), ApiError>,
    {
        let swaps = self.swaps()?;
        if swaps == Swaps::Untrusted {
            return self.locked(key, |taken| self.read_change_write(key, taken, f));
        }
        // After a lost race the store hands back a handle holding the value that won. It is
        // used at once after the first loss; after a pause it would be stale (others write
        // meanwhile), so later attempts pause first and then read the record afresh.
        let lock = || self.bucket.cas(key).map_err(|e| store_err("lock", key, e));
        let mut fresh = Some(lock()?);
        for lost in 0..MAX_CAS_ATTEMPTS {
            let cas = match fresh.take() {
                Some(cas) => cas,
                None => {
                    backoff(lost);
                    lock()?
                }
            };
            let current = cas.current().map_err(|e| store_err("read", key, e))?;
            if current.is_none() && swaps == Swaps::OnExistingKeys {
                // A swap would write whatever is there by then: the record is created under
                // the lock instead (its creators take turns; writers of a record that exists
                // still swap). Someone else may have created it first: then swap on.
                let created = self.locked(key, |taken| match self.get(key)? {
                    Some(_) => Ok(None),
                    None => self.read_change_write(key, taken, &mut f).map(Some),
                })?;
                match created {
                    Some(result) => return Ok(result),
                    None => continue,
                }
            }
            let new = match f(current.as_deref())? {
                (Change::Keep, result) => return Ok(result),
                (Change::Put(new), result) => (new, result),
            };
            match cas.swap(&new.0) {
                Ok(()) => return Ok(new.1),
                Err(SwapError::Lost(winner)) if lost == 0 => fresh = Some(winner),
                Err(SwapError::Lost(_)) => {}
                Err(SwapError::Store(e)) => return Err(store_err("write", key, e)),
            }
        }
        Err(ApiError::new(
            ErrorCode::StoreContention,
            format!(
                "`{key}` changed under each of {MAX_CAS_ATTEMPTS} attempts to update it; \
                 nothing was changed: retry shortly"
            ),
        ))
    }

    /// One read-modify-write of `key` by the holder of its lock (taken at `taken`).
    pub(super) fn read_change_write<R>(
        &self,
        key: &str,
        taken: i64,
        mut f: impl FnMut(Option<&[u8]>) -> Result<(Change<Vec<u8>>, R), ApiError>,
    ) -> Result<R, ApiError> {
        let current = self.get(key)?;
        match f(current.as_deref())? {
            (Change::Keep, result) => Ok(result),
            (Change::Put(new), result) => {
                lock::still_held(taken)?;
                self.set(key, &new)?;
                Ok(result)
            }
        }
    }

    /// Writes `value` at `key` in turn with [`Store::update`]s of it (see [`Store::in_turn`]).
    pub fn put_json<T: Serialize>(&self, key: &str, value: &T) -> Result<(), ApiError> {
        let bytes = encode(key, value)?;
        self.in_turn(key, || self.set(key, &bytes))
    }

    /// Deletes `key` in turn with [`Store::update`]s of it (see [`Store::in_turn`]): a deleted
    /// dialog must not come back with one more message.
    pub fn remove(&self, key: &str) -> Result<(), ApiError> {
        self.in_turn(key, || self.delete(key))
    }

    /// Runs `write` (a plain write of `key`) in turn with updates of `key`: on a store whose
    /// swaps cannot be trusted an update holds a lock, and a write in the middle of it would
    /// be undone by its write, or undo it; there `write` holds the lock too, under the same
    /// rule as an update's write (within [`lock::HOLD_MS`] of taking it). Elsewhere a swap
    /// that meets the write loses and reads again, so `write` runs as it is.
    fn in_turn(
        &self,
        key: &str,
        write: impl FnOnce() -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        if self.swaps()? == Swaps::Untrusted {
            return self.locked(key, |taken| {
                lock::still_held(taken)?;
                write()
            });
        }
        write()
    }

    /// What this store's compare-and-swap can be trusted with, tried once per instance on a
    /// scratch key nobody else uses: two swaps from the same absent value. Only the first
    /// may win where swaps hold ([`Swaps::All`]); Spin 4.0.2's SQLite store lets both win,
    /// as a swap from an absent key is a plain upsert there ([`Swaps::OnExistingKeys`]); its
    /// Redis store reports both as lost, written or not, so nothing can be told from its
    /// swaps ([`Swaps::Untrusted`]: updates take a lock made of increments, [`lock`]).
    pub(super) fn swaps(&self) -> Result<Swaps, ApiError> {
        let known = SWAPS.with_borrow(|all| {
            all.iter()
                .find(|(label, _)| *label == self.label)
                .map(|(_, swaps)| *swaps)
        });
        if let Some(known) = known {
            return Ok(known);
        }
        let probe = probe_key();
        let open = || {
            let cas = self
                .bucket
                .cas(&probe)
                .map_err(|e| store_err("lock", &probe, e))?;
            cas.current().map_err(|e| store_err("read", &probe, e))?;
            Ok::<_, ApiError>(cas)
        };
        let (first, second) = (open()?, open()?);
        let first = first.swap(b"first");
        let second = second.swap(b"second");
        let written = self.get(&probe)?;
        self.delete(&probe)?;
        let swaps = match (first, second, written.as_deref()) {
            (Err(SwapError::Store(e)), _, _) | (_, Err(SwapError::Store(e)), _) => {
                return Err(store_err("write", &probe, e));
            }
            (Ok(()), Err(SwapError::Lost(_)), Some(b"first")) => Swaps::All,
            (Ok(()), Ok(()), Some(b"second")) => Swaps::OnExistingKeys,
            _ => {
                self.check_increments_work()?;
                Swaps::Untrusted
            }
        };
        SWAPS.with_borrow_mut(|all| all.push((self.label.clone(), swaps)));
        Ok(swaps)
    }

    /// The lock needs atomic increments: a store with neither trustworthy swaps nor working
    /// increments can change no record safely, and says so (503 `store_cas_broken`).
    fn check_increments_work(&self) -> Result<(), ApiError> {
        let probe = probe_key();
        let counted = (self.increment(&probe, 1), self.increment(&probe, 2));
        self.delete(&probe)?;
        match counted {
            (Ok(1), Ok(3)) => Ok(()),
            (first, second) => Err(ApiError::new(
                ErrorCode::StoreCasBroken,
                format!(
                    "this key-value store offers no atomic change: its compare-and-swap cannot \
                     be trusted and two increments of a new counter by 1 and 2 gave {} and {}. \
                     Use Spin's SQLite or Redis store, or runtime-host",
                    describe(first),
                    describe(second)
                ),
            )),
        }
    }
}

fn describe(counted: Result<i64, ApiError>) -> String {
    match counted {
        Ok(n) => n.to_string(),
        Err(e) => format!("an error ({})", e.message),
    }
}
