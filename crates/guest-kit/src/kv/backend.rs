//! The store operations [`super::Store`] is built on, as a trait: implemented for Spin's
//! `wasi:keyvalue` bucket (what every component uses) and by the unit tests' fakes, which
//! misbehave as Spin's SQLite and Redis stores do (`kv/fakes.rs`), so that the lock and the
//! update loop are tested natively, without Spin.
//!
//! The operations are those of `wasi:keyvalue@0.2.0-draft2` as spin-sdk hands them out, with
//! its error type: what a store answers reaches [`super::Store`] unchanged.

use spin_sdk::wit::wasi::keyvalue::{atomics, batch, store};

/// A key and its value, if it has one.
pub type Found = (String, Option<Vec<u8>>);

/// A key-value store's operations, each one call to the store.
pub trait Backend {
    /// A compare-and-swap handle on one key ([`Backend::cas`]).
    type Cas: CasHandle;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, store::Error>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), store::Error>;
    fn delete(&self, key: &str) -> Result<(), store::Error>;
    fn exists(&self, key: &str) -> Result<bool, store::Error>;
    /// One page of the store's keys from `cursor` (`None`: the first).
    fn list_keys(&self, cursor: Option<&str>) -> Result<store::KeyResponse, store::Error>;
    /// Values of `keys` in one call (`wasi:keyvalue/batch`).
    fn get_many(&self, keys: &[String]) -> Result<Vec<Found>, store::Error>;
    /// Atomically adds `delta` to the counter at `key` (absent counts as 0); returns the sum.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, store::Error>;
    /// A compare-and-swap handle on `key`: read its [`CasHandle::current`] value, then
    /// [`CasHandle::swap`] in a new one, written only if nobody changed the key meanwhile
    /// (as far as the store keeps that promise: see [`super::update`]).
    fn cas(&self, key: &str) -> Result<Self::Cas, store::Error>;
}

/// What [`Backend::cas`] hands out.
pub trait CasHandle: Sized {
    /// The key's value now, which a later [`CasHandle::swap`] expects to find.
    fn current(&self) -> Result<Option<Vec<u8>>, store::Error>;
    /// Writes `value` if the key still holds what [`CasHandle::current`] read.
    fn swap(self, value: &[u8]) -> Result<(), SwapError<Self>>;
}

/// Why a [`CasHandle::swap`] wrote nothing (or says so).
pub enum SwapError<C> {
    /// Someone else changed the key first; the handle holds the value that won.
    Lost(C),
    /// The store itself failed.
    Store(store::Error),
}

impl Backend for store::Bucket {
    type Cas = atomics::Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, store::Error> {
        store::Bucket::get(self, key)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), store::Error> {
        store::Bucket::set(self, key, value)
    }

    fn delete(&self, key: &str) -> Result<(), store::Error> {
        store::Bucket::delete(self, key)
    }

    fn exists(&self, key: &str) -> Result<bool, store::Error> {
        store::Bucket::exists(self, key)
    }

    fn list_keys(&self, cursor: Option<&str>) -> Result<store::KeyResponse, store::Error> {
        store::Bucket::list_keys(self, cursor)
    }

    fn get_many(&self, keys: &[String]) -> Result<Vec<Found>, store::Error> {
        batch::get_many(self, keys)
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, store::Error> {
        atomics::increment(self, key, delta)
    }

    fn cas(&self, key: &str) -> Result<atomics::Cas, store::Error> {
        atomics::Cas::new(self, key)
    }
}

impl CasHandle for atomics::Cas {
    fn current(&self) -> Result<Option<Vec<u8>>, store::Error> {
        atomics::Cas::current(self)
    }

    fn swap(self, value: &[u8]) -> Result<(), SwapError<Self>> {
        atomics::swap(self, value).map_err(|e| match e {
            atomics::CasError::CasFailed(winner) => SwapError::Lost(winner),
            atomics::CasError::StoreError(e) => SwapError::Store(e),
        })
    }
}
