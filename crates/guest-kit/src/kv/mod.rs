//! The `wasi:keyvalue@0.2.0-draft2` store with JSON values and safe read-modify-write.
//!
//! Components are instantiated per request, so every piece of state lives here. Anything that
//! is read, changed and written back goes through [`Store::update`]: two concurrent requests
//! can never both win with stale data, under Spin or `runtime-host`, on any of their stores.
//! It is a compare-and-swap loop where the store's swaps hold; where they hold only for keys
//! that exist (Spin's SQLite store), records are created under a lock; where they cannot be
//! trusted at all (Spin's Redis store), every update holds a lock made of increments
//! ([`lock`]), the one operation both of Spin's stores do atomically.

use edge_api::error::{ApiError, ErrorCode};
use serde::{Serialize, de::DeserializeOwned};
use spin_sdk::wit::wasi::keyvalue::{atomics, batch, store};

mod lock;

/// What a store's compare-and-swap can be trusted with ([`Store::swaps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Swaps {
    /// Every swap wins only over the value it read, absent included.
    All,
    /// Only swaps of a key that exists; a swap from "absent" overwrites whatever is there.
    OnExistingKeys,
    /// No swap's answer can be believed; increments are atomic.
    Untrusted,
}

thread_local! {
    /// What this instance found of the store's compare-and-swap.
    static SWAPS: std::cell::Cell<Option<Swaps>> = const { std::cell::Cell::new(None) };
    /// Set once this instance has seen the store's batch read fail where single reads work.
    static BATCH_READS_FAIL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PROBES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A key no other request uses: the clock's nanoseconds and a per-instance count.
fn probe_key() -> String {
    let n = PROBES.get();
    PROBES.set(n + 1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("guest-kit/swap-probe/{nanos}-{n}")
}

/// Label of the store every component uses (DESIGN.md).
pub const DEFAULT_LABEL: &str = "default";

/// Attempts of one [`Store::update`] before it gives up with 503 `store_contention`. Each lost
/// race but the first is followed by a pause ([`backoff`]), so a record many requests fight
/// over costs a bounded number of store round trips per request (under Spin, each attempt may
/// be a new connection to the store), never a storm of them. With 8 writers on one record (a
/// host's default instances per component) an attempt wins about one time in eight; 96 make
/// a refusal under the registry benchmark's load a rare event, while a store that can never
/// win (a broken compare-and-swap) costs at most 96 round trips and about 1.5 s.
const MAX_CAS_ATTEMPTS: u32 = 96;
/// Longest pause between two attempts.
const MAX_BACKOFF_MS: u64 = 16;

/// The pause before attempt `lost` + 1, from the third attempt on (the second follows the
/// first loss at once: most races are lost to one other writer, who is done by now): a random
/// time up to 2, 4, 8, 16 ms ("full jitter": the losers of one race do not all come back at
/// once).
fn backoff(lost: u32) {
    let cap = (1u64 << lost.clamp(1, 4)).min(MAX_BACKOFF_MS);
    // Jitter from the clock's nanoseconds: enough to spread retries, no random source needed.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let pause_us = u64::from(nanos) % (cap * 1000 + 1);
    std::thread::sleep(std::time::Duration::from_micros(pause_us));
}

/// What an [`Store::update`] closure decided to do with the record.
pub enum Change<T> {
    /// Write this value (atomically, only if nobody changed the record meanwhile).
    Put(T),
    /// Leave the record as it is.
    Keep,
}

pub struct Store {
    bucket: store::Bucket,
}

/// A failed store call. The store's own failures (`other`: Redis down, a disk error) are 503
/// `store_unavailable`, worth retrying; a store this component may not open is a deployment
/// fault, 500 `store_error`.
fn store_err(what: &str, key: &str, e: store::Error) -> ApiError {
    let (code, why) = match e {
        store::Error::Other(why) => (ErrorCode::StoreUnavailable, why),
        store::Error::NoSuchStore => (ErrorCode::StoreError, "no such store".to_owned()),
        store::Error::AccessDenied => (ErrorCode::StoreError, "access denied".to_owned()),
    };
    ApiError::new(
        code,
        format!("key-value store failed to {what} `{key}`: {why}"),
    )
}

/// A key and its value, if it has one.
type Found = (String, Option<Vec<u8>>);

/// A key and its value, or why that value could not be decoded.
pub type Decoded<T> = (String, Result<T, ApiError>);

/// Deepest nesting a stored record is decoded at. serde_json gives up near 128 levels by
/// default; records written before a write path checked nesting may go that deep (a chat
/// message's `metadata` of 125 levels sits 128 deep in its dialog), and are still data someone
/// stored. The guard keeps a hostile record from exhausting the stack.
const MAX_STORED_DEPTH: usize = 256;

fn decode<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T, ApiError> {
    let unreadable = |why: String| {
        ApiError::new(
            ErrorCode::StoreError,
            format!("stored record `{key}` is unreadable: {why}"),
        )
    };
    let depth = edge_api::json::text_depth(bytes);
    if depth > MAX_STORED_DEPTH {
        return Err(unreadable(format!(
            "it nests {depth} levels deep (at most {MAX_STORED_DEPTH} are read)"
        )));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let value = T::deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    value.map_err(|e| unreadable(e.to_string()))
}

fn encode<T: Serialize>(key: &str, value: &T) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(value).map_err(|e| ApiError::internal(format!("encoding `{key}`: {e}")))
}

impl Store {
    /// Opens the `default` store.
    pub fn open_default() -> Result<Self, ApiError> {
        Self::open(DEFAULT_LABEL)
    }

    pub fn open(label: &str) -> Result<Self, ApiError> {
        let bucket = store::open(label).map_err(|e| store_err("open store", label, e))?;
        Ok(Self { bucket })
    }

    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ApiError> {
        self.bucket.get(key).map_err(|e| store_err("read", key, e))
    }

    pub fn get_json<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ApiError> {
        self.get(key)?.map(|b| decode(key, &b)).transpose()
    }

    pub fn set(&self, key: &str, value: &[u8]) -> Result<(), ApiError> {
        self.bucket
            .set(key, value)
            .map_err(|e| store_err("write", key, e))
    }

    pub fn set_json<T: Serialize>(&self, key: &str, value: &T) -> Result<(), ApiError> {
        self.set(key, &encode(key, value)?)
    }

    pub fn delete(&self, key: &str) -> Result<(), ApiError> {
        self.bucket
            .delete(key)
            .map_err(|e| store_err("delete", key, e))
    }

    pub fn exists(&self, key: &str) -> Result<bool, ApiError> {
        self.bucket
            .exists(key)
            .map_err(|e| store_err("check", key, e))
    }

    /// Every key starting with `prefix`, following the store's cursor to the end.
    pub fn keys_with_prefix(&self, prefix: &str) -> Result<Vec<String>, ApiError> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .bucket
                .list_keys(cursor.as_deref())
                .map_err(|e| store_err("list keys", prefix, e))?;
            keys.extend(page.keys.into_iter().filter(|k| k.starts_with(prefix)));
            match page.cursor {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                _ => break,
            }
        }
        // A store may hand out a key on two pages (Redis's SCAN does while it resizes).
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }

    /// Values of many keys in one call; absent keys are skipped.
    pub fn get_many_json<T: DeserializeOwned>(
        &self,
        keys: &[String],
    ) -> Result<Vec<(String, T)>, ApiError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let found = self.get_many(keys)?;
        found
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .map(|(k, v)| decode(&k, &v).map(|t| (k, t)))
            .collect()
    }

    /// Values of many keys in one call, each decoded on its own: one unreadable record is
    /// its key's error, not the whole call's. Absent keys are skipped.
    pub fn get_many_each<T: DeserializeOwned>(
        &self,
        keys: &[String],
    ) -> Result<Vec<Decoded<T>>, ApiError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let found = self.get_many(keys)?;
        Ok(found
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .map(|(k, v)| {
                let decoded = decode(&k, &v);
                (k, decoded)
            })
            .collect())
    }

    /// Values of `keys` (absent ones as `None`), in one call where the store's batch read
    /// works. Spin 4.0.2's Redis store sends Redis `KEYS` for it, which fails: when a batch
    /// read fails but a single read works, this instance reads one key at a time.
    fn get_many(&self, keys: &[String]) -> Result<Vec<Found>, ApiError> {
        let one_by_one = || {
            keys.iter()
                .map(|k| Ok((k.clone(), self.get(k)?)))
                .collect::<Result<Vec<_>, ApiError>>()
        };
        if BATCH_READS_FAIL.get() {
            return one_by_one();
        }
        match batch::get_many(&self.bucket, keys) {
            Ok(found) => Ok(found),
            Err(e) => {
                let failed = store_err("read", &keys.join(","), e);
                if self.get(&keys[0]).is_err() {
                    return Err(failed);
                }
                BATCH_READS_FAIL.set(true);
                one_by_one()
            }
        }
    }

    /// Atomically adds `delta` to the counter at `key` (absent counts as 0); returns the sum.
    ///
    /// Read a counter with `increment(key, 0)`, never with `get`: stores keep counters in
    /// their own encoding (Spin's SQLite store and `runtime-host`: 8 bytes little-endian;
    /// Spin's Redis store: decimal text, as INCRBY does), and only `increment` reads both.
    pub fn increment(&self, key: &str, delta: i64) -> Result<i64, ApiError> {
        atomics::increment(&self.bucket, key, delta).map_err(|e| store_err("increment", key, e))
    }

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
        let lock = || atomics::Cas::new(&self.bucket, key).map_err(|e| store_err("lock", key, e));
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
            match atomics::swap(cas, &new.0) {
                Ok(()) => return Ok(new.1),
                Err(atomics::CasError::CasFailed(winner)) if lost == 0 => fresh = Some(winner),
                Err(atomics::CasError::CasFailed(_)) => {}
                Err(atomics::CasError::StoreError(e)) => return Err(store_err("write", key, e)),
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
    fn read_change_write<R>(
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

    /// Deletes `key` in turn with [`Store::update`]s of it: on a store whose swaps cannot be
    /// trusted an update holds a lock, and a plain delete in the middle of it would be undone
    /// by its write (a deleted dialog coming back with one more message).
    pub fn remove(&self, key: &str) -> Result<(), ApiError> {
        if self.swaps()? == Swaps::Untrusted {
            return self.locked(key, |_| self.delete(key));
        }
        self.delete(key)
    }

    /// What this store's compare-and-swap can be trusted with, tried once per instance on a
    /// scratch key nobody else uses: two swaps from the same absent value. Only the first
    /// may win where swaps hold ([`Swaps::All`]); Spin 4.0.2's SQLite store lets both win,
    /// as a swap from an absent key is a plain upsert there ([`Swaps::OnExistingKeys`]); its
    /// Redis store reports both as lost, written or not, so nothing can be told from its
    /// swaps ([`Swaps::Untrusted`]: updates take a lock made of increments, [`lock`]).
    fn swaps(&self) -> Result<Swaps, ApiError> {
        if let Some(known) = SWAPS.get() {
            return Ok(known);
        }
        let probe = probe_key();
        let open = || {
            let cas = atomics::Cas::new(&self.bucket, &probe)
                .map_err(|e| store_err("lock", &probe, e))?;
            cas.current().map_err(|e| store_err("read", &probe, e))?;
            Ok::<_, ApiError>(cas)
        };
        let (first, second) = (open()?, open()?);
        let first = atomics::swap(first, b"first");
        let second = atomics::swap(second, b"second");
        let written = self.get(&probe)?;
        self.delete(&probe)?;
        use atomics::CasError::{CasFailed, StoreError};
        let swaps = match (first, second, written.as_deref()) {
            (Err(StoreError(e)), _, _) | (_, Err(StoreError(e)), _) => {
                return Err(store_err("write", &probe, e));
            }
            (Ok(()), Err(CasFailed(_)), Some(b"first")) => Swaps::All,
            (Ok(()), Ok(()), Some(b"second")) => Swaps::OnExistingKeys,
            _ => {
                self.check_increments_work()?;
                Swaps::Untrusted
            }
        };
        SWAPS.set(Some(swaps));
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
