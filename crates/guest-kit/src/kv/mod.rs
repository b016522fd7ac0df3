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
use spin_sdk::wit::wasi::keyvalue::store;

mod backend;
#[cfg(test)]
mod fakes;
mod lock;
#[cfg(test)]
mod lock_tests;
mod update;
#[cfg(test)]
mod update_tests;

use backend::Found;
pub use backend::{Backend, CasHandle, SwapError};
use update::Swaps;

thread_local! {
    /// What this instance found of each store's compare-and-swap, by label.
    static SWAPS: std::cell::RefCell<Vec<(String, Swaps)>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Set once this instance has seen the store's batch read fail where single reads work.
    static BATCH_READS_FAIL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PROBES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A key no other request uses: the clock's nanoseconds, a per-instance count and 64 random
/// bits. The clock alone was not enough: Spin starts an instance per request (the count is 0
/// in each), and two Spin processes on one Redis probed the same key in the same tick (a cold
/// CI run saw two probes' increments interleave, "1 and 2 gave 2 and 6").
fn probe_key() -> String {
    let n = PROBES.get();
    PROBES.set(n + 1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("guest-kit/swap-probe/{nanos}-{n}-{:016x}", random_bits())
}

/// 64 bits from the host's random source (`wasi:random`); natively (unit tests, whose
/// threads probe one fake store at once) std's per-thread random hash keys.
#[cfg(target_arch = "wasm32")]
fn random_bits() -> u64 {
    wasi::random::random::get_random_u64()
}

#[cfg(not(target_arch = "wasm32"))]
fn random_bits() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0u8)
}

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

/// Label of the store every component uses: Spin's default store, which each component of
/// `spin.toml` names in its `key_value_stores`.
pub const DEFAULT_LABEL: &str = "default";

/// What an [`Store::update`] closure decided to do with the record.
pub enum Change<T> {
    /// Write this value (atomically, only if nobody changed the record meanwhile).
    Put(T),
    /// Leave the record as it is.
    Keep,
}

/// A key-value store: Spin's `wasi:keyvalue` bucket in every component (the default `B`),
/// a fake in the unit tests.
pub struct Store<B = store::Bucket> {
    bucket: B,
    label: String,
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
        Ok(Store::on(bucket, label))
    }
}

impl<B: Backend> Store<B> {
    /// The store `bucket`, opened under `label` (what an instance learns of a store's
    /// compare-and-swap is kept by label).
    pub fn on(bucket: B, label: &str) -> Self {
        Self {
            bucket,
            label: label.to_owned(),
        }
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
        match self.bucket.get_many(keys) {
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
        self.bucket
            .increment(key, delta)
            .map_err(|e| store_err("increment", key, e))
    }
}
