//! The `wasi:keyvalue@0.2.0-draft2` store with JSON values and safe read-modify-write.
//!
//! Components are instantiated per request, so every piece of state lives here. Anything that
//! is read, changed and written back goes through [`Store::update`], a compare-and-swap loop:
//! two concurrent requests can never both win with stale data, under Spin or `runtime-host`.

use edge_api::error::{ApiError, ErrorCode};
use serde::{Serialize, de::DeserializeOwned};
use spin_sdk::wit::wasi::keyvalue::{atomics, batch, store};

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

fn store_err(what: &str, key: &str, e: impl std::fmt::Debug) -> ApiError {
    ApiError::new(
        ErrorCode::StoreError,
        format!("key-value store failed to {what} `{key}`: {e:?}"),
    )
}

fn decode<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::new(
            ErrorCode::StoreError,
            format!("stored record `{key}` is unreadable: {e}"),
        )
    })
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
        let found = batch::get_many(&self.bucket, keys)
            .map_err(|e| store_err("read", &keys.join(","), e))?;
        found
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .map(|(k, v)| decode(&k, &v).map(|t| (k, t)))
            .collect()
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
}
