//! `wasi:keyvalue@0.2.0-draft2` (store, atomics, batch) for components, backed by
//! [`sqlite::KvDatabase`]. The calls are async: a write waits for its commit without
//! holding up the executor thread, so the commits of concurrent requests can be shared.
//!
//! Only the store labels the host was told about (`default`) can be opened, as under Spin,
//! where a component sees only the stores its manifest grants.

pub mod sqlite;

use crate::bindings::wasi::keyvalue::{atomics, batch, store};
use sqlite::KvDatabase;
use std::sync::Arc;
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};

/// Store label every component gets.
pub const DEFAULT_LABEL: &str = "default";

/// What a host shares with every request: the database and the labels it may open.
#[derive(Clone)]
pub struct KeyValue {
    db: Arc<KvDatabase>,
    labels: Arc<[String]>,
}

impl KeyValue {
    pub fn new(db: Arc<KvDatabase>) -> Self {
        Self {
            db,
            labels: Arc::from(vec![DEFAULT_LABEL.to_owned()]),
        }
    }
}

/// An open bucket: the label it stands for.
pub struct BucketHandle {
    label: String,
}

/// A compare-and-swap handle: the value seen when it was made, which `swap` requires.
pub struct CasHandle {
    label: String,
    key: String,
    expected: Option<Vec<u8>>,
}

/// The view of a request's state these interfaces work on.
pub struct KvCtx<'a> {
    pub table: &'a mut ResourceTable,
    pub kv: &'a KeyValue,
}

struct KvData;
impl HasData for KvData {
    type Data<'a> = KvCtx<'a>;
}

pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> KvCtx<'_>,
) -> wasmtime::Result<()> {
    store::add_to_linker::<T, KvData>(linker, get)?;
    atomics::add_to_linker::<T, KvData>(linker, get)?;
    batch::add_to_linker::<T, KvData>(linker, get)?;
    Ok(())
}

type WResult<T> = wasmtime::Result<T>;
type KvResult<T> = Result<T, store::Error>;

fn other(e: anyhow::Error) -> store::Error {
    tracing::warn!(error = %format!("{e:#}"), "key-value operation failed");
    store::Error::Other(format!("{e:#}"))
}

impl KvCtx<'_> {
    fn label(&self, bucket: &Resource<BucketHandle>) -> WResult<String> {
        Ok(self.table.get(bucket)?.label.clone())
    }

    fn db(&self) -> &KvDatabase {
        &self.kv.db
    }
}

impl store::Host for KvCtx<'_> {
    async fn open(&mut self, identifier: String) -> WResult<KvResult<Resource<BucketHandle>>> {
        if !self.kv.labels.contains(&identifier) {
            return Ok(Err(store::Error::NoSuchStore));
        }
        Ok(Ok(self.table.push(BucketHandle { label: identifier })?))
    }
}

impl store::HostBucket for KvCtx<'_> {
    async fn get(
        &mut self,
        b: Resource<BucketHandle>,
        key: String,
    ) -> WResult<KvResult<Option<Vec<u8>>>> {
        let label = self.label(&b)?;
        Ok(self.db().get(&label, &key).map_err(other))
    }

    async fn set(
        &mut self,
        b: Resource<BucketHandle>,
        key: String,
        value: Vec<u8>,
    ) -> WResult<KvResult<()>> {
        let label = self.label(&b)?;
        Ok(self.db().set(&label, &key, &value).await.map_err(other))
    }

    async fn delete(&mut self, b: Resource<BucketHandle>, key: String) -> WResult<KvResult<()>> {
        let label = self.label(&b)?;
        Ok(self.db().delete(&label, &key).await.map_err(other))
    }

    async fn exists(&mut self, b: Resource<BucketHandle>, key: String) -> WResult<KvResult<bool>> {
        let label = self.label(&b)?;
        Ok(self.db().exists(&label, &key).map_err(other))
    }

    async fn list_keys(
        &mut self,
        b: Resource<BucketHandle>,
        cursor: Option<String>,
    ) -> WResult<KvResult<store::KeyResponse>> {
        let label = self.label(&b)?;
        Ok(self
            .db()
            .list_keys(&label, cursor.as_deref())
            .map(|(keys, cursor)| store::KeyResponse { keys, cursor })
            .map_err(other))
    }

    async fn drop(&mut self, b: Resource<BucketHandle>) -> WResult<()> {
        self.table.delete(b)?;
        Ok(())
    }
}

impl atomics::Host for KvCtx<'_> {
    async fn increment(
        &mut self,
        b: Resource<BucketHandle>,
        key: String,
        delta: i64,
    ) -> WResult<KvResult<i64>> {
        let label = self.label(&b)?;
        Ok(self
            .db()
            .increment(&label, &key, delta)
            .await
            .map_err(other))
    }

    async fn swap(
        &mut self,
        cas: Resource<CasHandle>,
        value: Vec<u8>,
    ) -> WResult<Result<(), atomics::CasError>> {
        let handle = self.table.delete(cas)?;
        let swapped = self
            .db()
            .compare_and_swap(
                &handle.label,
                &handle.key,
                handle.expected.as_deref(),
                &value,
            )
            .await;
        match swapped {
            Ok(true) => Ok(Ok(())),
            Ok(false) => {
                // Someone changed the value first: hand back a handle at the latest value.
                let fresh = match self.db().get(&handle.label, &handle.key) {
                    Ok(v) => v,
                    Err(e) => return Ok(Err(atomics::CasError::StoreError(other(e)))),
                };
                let retry = self.table.push(CasHandle {
                    expected: fresh,
                    ..handle
                })?;
                Ok(Err(atomics::CasError::CasFailed(retry)))
            }
            Err(e) => Ok(Err(atomics::CasError::StoreError(other(e)))),
        }
    }
}

impl atomics::HostCas for KvCtx<'_> {
    async fn new(
        &mut self,
        b: Resource<BucketHandle>,
        key: String,
    ) -> WResult<KvResult<Resource<CasHandle>>> {
        let label = self.label(&b)?;
        let expected = match self.db().get(&label, &key) {
            Ok(v) => v,
            Err(e) => return Ok(Err(other(e))),
        };
        Ok(Ok(self.table.push(CasHandle {
            label,
            key,
            expected,
        })?))
    }

    async fn current(&mut self, cas: Resource<CasHandle>) -> WResult<KvResult<Option<Vec<u8>>>> {
        Ok(Ok(self.table.get(&cas)?.expected.clone()))
    }

    async fn drop(&mut self, cas: Resource<CasHandle>) -> WResult<()> {
        self.table.delete(cas)?;
        Ok(())
    }
}

impl batch::Host for KvCtx<'_> {
    async fn get_many(
        &mut self,
        b: Resource<BucketHandle>,
        keys: Vec<String>,
    ) -> WResult<KvResult<Vec<(String, Option<Vec<u8>>)>>> {
        let label = self.label(&b)?;
        Ok(self.db().get_many(&label, &keys).map_err(other))
    }

    async fn set_many(
        &mut self,
        b: Resource<BucketHandle>,
        entries: Vec<(String, Vec<u8>)>,
    ) -> WResult<KvResult<()>> {
        let label = self.label(&b)?;
        Ok(self.db().set_many(&label, &entries).await.map_err(other))
    }

    async fn delete_many(
        &mut self,
        b: Resource<BucketHandle>,
        keys: Vec<String>,
    ) -> WResult<KvResult<()>> {
        let label = self.label(&b)?;
        Ok(self.db().delete_many(&label, &keys).await.map_err(other))
    }
}
