//! Key-value store calls timed and their failures counted, by backend and operation: a
//! [`Store`] around the store, passing every call through.

use crate::{StoreLabels, global};
use anyhow::Result;
use keyvalue_stores::store::{Cas, Store, Swap};
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// `inner`, observed.
pub struct StoreObserver {
    inner: Arc<dyn Store>,
}

impl StoreObserver {
    pub fn around(inner: Arc<dyn Store>) -> Arc<dyn Store> {
        Arc::new(Self { inner })
    }

    async fn timed<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let started = Instant::now();
        let result = call.await;
        let labels = StoreLabels {
            backend: self.inner.backend(),
            operation,
        };
        let m = global();
        m.store_duration
            .get_or_create(&labels)
            .observe(started.elapsed().as_secs_f64());
        if result.is_err() {
            m.store_failures.get_or_create(&labels).inc();
        }
        result
    }
}

#[async_trait::async_trait]
impl Store for StoreObserver {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.timed("get", self.inner.get(key)).await
    }
    async fn exists(&self, key: &str) -> Result<bool> {
        self.timed("exists", self.inner.exists(key)).await
    }
    async fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.timed("set", self.inner.set(key, value)).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.timed("delete", self.inner.delete(key)).await
    }
    async fn set_ignoring_lock(&self, key: &str, value: &[u8]) -> Result<()> {
        self.timed("set", self.inner.set_ignoring_lock(key, value))
            .await
    }
    async fn delete_ignoring_lock(&self, key: &str) -> Result<()> {
        self.timed("delete", self.inner.delete_ignoring_lock(key))
            .await
    }
    async fn list_keys(
        &self,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        self.timed("list_keys", self.inner.list_keys(prefix, cursor))
            .await
    }
    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.timed("get_many", self.inner.get_many(keys)).await
    }
    async fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<()> {
        self.timed("set_many", self.inner.set_many(entries)).await
    }
    async fn delete_many(&self, keys: &[String]) -> Result<()> {
        self.timed("delete_many", self.inner.delete_many(keys))
            .await
    }
    async fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        self.timed("increment", self.inner.increment(key, delta))
            .await
    }
    async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<Swap> {
        self.timed(
            "compare_and_swap",
            self.inner.compare_and_swap(key, expected, new),
        )
        .await
    }
    fn is_shared(&self) -> bool {
        self.inner.is_shared()
    }
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn begin_swap(&self, key: &str) -> Result<Cas> {
        self.timed("begin_swap", self.inner.begin_swap(key)).await
    }
    async fn swap(&self, cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        self.timed("swap", self.inner.swap(cas, new)).await
    }
}
