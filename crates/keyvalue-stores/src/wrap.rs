//! Behaviours that apply to any [`Store`], as wrappers around one: a wrapper changes how
//! compare-and-swap runs (its [`SwapHook`]) and passes every other call straight through.
//! The hooks: [`super::turns::Turns`] (a host's requests take turns at a record, on Redis)
//! and [`SpinRedisSwap`] and [`SpinSqliteSwap`] (test hooks imitating Spin 4.0.2's stores).

use super::store::{Cas, Store, Swap};
use anyhow::Result;
use std::sync::Arc;

/// How a wrapper runs compare-and-swap on the store it wraps.
#[async_trait::async_trait]
pub trait SwapHook: Send + Sync + 'static {
    async fn begin(&self, inner: &dyn Store, key: &str) -> Result<Cas> {
        inner.begin_swap(key).await
    }

    async fn finish(&self, inner: &dyn Store, cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        inner.swap(cas, new).await
    }

    /// Whether plain writes ignore guest-kit's lock, as Spin's own stores' do: true for the
    /// hooks imitating them, whose guests hold that lock while they write.
    fn writes_ignore_locks(&self) -> bool {
        false
    }
}

/// `inner`, with its compare-and-swap run through `hook`.
pub struct StoreWithHook<H> {
    inner: Arc<dyn Store>,
    hook: H,
}

impl<H: SwapHook> StoreWithHook<H> {
    pub fn around(inner: Arc<dyn Store>, hook: H) -> Arc<dyn Store> {
        Arc::new(Self { inner, hook })
    }
}

#[async_trait::async_trait]
impl<H: SwapHook> Store for StoreWithHook<H> {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key).await
    }
    async fn exists(&self, key: &str) -> Result<bool> {
        self.inner.exists(key).await
    }
    async fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        if self.hook.writes_ignore_locks() {
            return self.inner.set_ignoring_lock(key, value).await;
        }
        self.inner.set(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        if self.hook.writes_ignore_locks() {
            return self.inner.delete_ignoring_lock(key).await;
        }
        self.inner.delete(key).await
    }
    async fn set_ignoring_lock(&self, key: &str, value: &[u8]) -> Result<()> {
        self.inner.set_ignoring_lock(key, value).await
    }
    async fn delete_ignoring_lock(&self, key: &str) -> Result<()> {
        self.inner.delete_ignoring_lock(key).await
    }
    async fn list_keys(
        &self,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        self.inner.list_keys(prefix, cursor).await
    }
    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.inner.get_many(keys).await
    }
    async fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<()> {
        self.inner.set_many(entries).await
    }
    async fn delete_many(&self, keys: &[String]) -> Result<()> {
        self.inner.delete_many(keys).await
    }
    async fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        self.inner.increment(key, delta).await
    }
    async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<Swap> {
        self.inner.compare_and_swap(key, expected, new).await
    }
    fn is_shared(&self) -> bool {
        self.inner.is_shared()
    }
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn begin_swap(&self, key: &str) -> Result<Cas> {
        self.hook.begin(&*self.inner, key).await
    }
    async fn swap(&self, cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        self.hook.finish(&*self.inner, cas, new).await
    }
}

/// Every swap writes and then reports a conflict, as Spin 4.0.2's Redis store does (its
/// `UNWATCH <key>` fails after EXEC). Installed only by `--simulate-spin-swap redis`, for
/// tests that components stay correct on such a store.
pub struct SpinRedisSwap;

#[async_trait::async_trait]
impl SwapHook for SpinRedisSwap {
    fn writes_ignore_locks(&self) -> bool {
        true
    }

    async fn finish(&self, inner: &dyn Store, cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        let key = cas.key.clone();
        Ok(match inner.swap(cas, new).await? {
            Ok(()) => Err(Cas {
                key,
                expected: Some(new.to_vec()),
                held: None,
            }),
            conflict => conflict,
        })
    }
}

/// A swap from an absent key writes whatever is there by then and wins, as Spin 4.0.2's
/// SQLite store does (`INSERT ... ON CONFLICT DO UPDATE`); other swaps hold. Installed only
/// by `--simulate-spin-swap sqlite`.
pub struct SpinSqliteSwap;

#[async_trait::async_trait]
impl SwapHook for SpinSqliteSwap {
    fn writes_ignore_locks(&self) -> bool {
        true
    }

    async fn finish(&self, inner: &dyn Store, cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        if cas.expected.is_none() {
            let key = cas.key.clone();
            drop(cas);
            inner.set_ignoring_lock(&key, new).await?;
            return Ok(Ok(()));
        }
        inner.swap(cas, new).await
    }
}
