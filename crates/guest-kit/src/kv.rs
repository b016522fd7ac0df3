//! The `wasi:keyvalue@0.2.0-draft2` store with JSON values and safe read-modify-write.
//!
//! Components are instantiated per request, so every piece of state lives here. Anything that
//! is read, changed and written back goes through [`Store::update`], a compare-and-swap loop:
//! two concurrent requests can never both win with stale data, under Spin or `runtime-host`.

use edge_api::error::{ApiError, ErrorCode};
use serde::{Serialize, de::DeserializeOwned};
use spin_sdk::wit::wasi::keyvalue::{atomics, batch, store};

thread_local! {
    /// Set once this instance has seen the store's compare-and-swap work.
    static SWAP_CHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
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
        let found = batch::get_many(&self.bucket, keys)
            .map_err(|e| store_err("read", &keys.join(","), e))?;
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
        let found = batch::get_many(&self.bucket, keys)
            .map_err(|e| store_err("read", &keys.join(","), e))?;
        Ok(found
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .map(|(k, v)| {
                let decoded = decode(&k, &v);
                (k, decoded)
            })
            .collect())
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
        self.check_swap_works()?;
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

    /// Whether this store's compare-and-swap tells the truth, tried once per instance on a
    /// scratch key nobody else writes: a swap there must succeed and be seen. Spin 4.0.2's
    /// Redis store reports every swap as failed although the value was written; on such a
    /// store every update would be retried until it gives up, so it is refused at once, with
    /// the cause and the way out.
    fn check_swap_works(&self) -> Result<(), ApiError> {
        if SWAP_CHECKED.get() {
            return Ok(());
        }
        let probe = probe_key();
        let cas =
            atomics::Cas::new(&self.bucket, &probe).map_err(|e| store_err("lock", &probe, e))?;
        let swapped = atomics::swap(cas, b"probe");
        let written = self.get(&probe)?;
        self.delete(&probe)?;
        match (swapped, written.as_deref()) {
            (Ok(()), Some(b"probe")) => {
                SWAP_CHECKED.set(true);
                Ok(())
            }
            (Err(atomics::CasError::StoreError(e)), None) => Err(store_err("write", &probe, e)),
            (result, written) => Err(ApiError::new(
                ErrorCode::StoreCasBroken,
                format!(
                    "this key-value store's compare-and-swap is broken: a swap on an unused key \
                     reported {} and the key then held {}, so no record can be updated safely. \
                     Spin 4.0.2's Redis store does this (it ends each swap with `UNWATCH <key>`, \
                     which Redis refuses). Use the SQLite store (no runtime config), \
                     runtime-host with the same runtime config, or a Spin release with the fix",
                    match result {
                        Ok(()) => "success".to_owned(),
                        Err(atomics::CasError::CasFailed(_)) => "a conflict".to_owned(),
                        Err(atomics::CasError::StoreError(e)) => format!("an error ({e:?})"),
                    },
                    match written {
                        Some(b"probe") => "the value written".to_owned(),
                        Some(other) => format!("{} other bytes", other.len()),
                        None => "nothing".to_owned(),
                    }
                ),
            )),
        }
    }
}
