//! `wasi:keyvalue@0.2.0-draft2` (store, atomics, batch) for components, over the stores
//! the runtime configuration names. The stores themselves are the crate `keyvalue-stores`
//! (the `Store` trait, SQLite, Redis, the wrappers, the runtime-config file); this module is
//! the binding: resources, the key prefix of shared stores, and errors as the interface
//! words them. The calls are async: a write waits for its commit or Redis's reply without
//! holding up the executor.
//!
//! Only the labels the host was configured with can be opened (`default` and `deployment`
//! always), as under Spin, where a component sees only the stores its manifest grants.

pub mod handles;

use crate::bindings::wasi::keyvalue::{atomics, batch, store as wit_store};
use crate::keyvalue::handles::{BucketHandle, CasHandle};
use keyvalue_stores::memory::MemoryStore;
use keyvalue_stores::sqlite::{KvDatabase, SqliteStore};
use keyvalue_stores::store::Store;
use keyvalue_stores::wrap::{SpinRedisSwap, SpinSqliteSwap, StoreWithHook};
use keyvalue_stores::{DEFAULT_LABEL, DEPLOYMENT_LABEL, config, open};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};

/// What a host shares with every request of one component: the store of each label, and
/// the prefix its keys live under (empty unless the store is shared, see [`KeyValue::scoped`]).
#[derive(Clone)]
pub struct KeyValue {
    stores: Arc<BTreeMap<String, Arc<dyn Store>>>,
    prefix: Arc<str>,
}

impl KeyValue {
    /// Opens every store `config` names (a Redis that does not answer is an error).
    pub async fn open(config: &config::StoreConfig) -> anyhow::Result<Self> {
        let stores = open::open_all(config).await?;
        let observed = stores
            .into_iter()
            .map(|(label, store)| (label, host_metrics::store::StoreObserver::around(store)))
            .collect();
        Ok(Self {
            stores: Arc::new(observed),
            prefix: Arc::from(""),
        })
    }

    /// `default` on an already open SQLite database, and `deployment` in memory.
    pub fn sqlite(db: Arc<KvDatabase>) -> Self {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::new(db, DEFAULT_LABEL));
        let deployment: Arc<dyn Store> = Arc::new(MemoryStore::default());
        let observed = host_metrics::store::StoreObserver::around;
        Self {
            stores: Arc::new(BTreeMap::from([
                (DEFAULT_LABEL.to_owned(), observed(store)),
                (DEPLOYMENT_LABEL.to_owned(), observed(deployment)),
            ])),
            prefix: Arc::from(""),
        }
    }

    /// `default` and `deployment` in memory, empty: what a component's pre-initialization
    /// gets, so that nothing it writes reaches a real store (or its snapshot's users).
    pub fn in_memory() -> Self {
        let store = || Arc::new(MemoryStore::default()) as Arc<dyn Store>;
        Self {
            stores: Arc::new(BTreeMap::from([
                (DEFAULT_LABEL.to_owned(), store()),
                (DEPLOYMENT_LABEL.to_owned(), store()),
            ])),
            prefix: Arc::from(""),
        }
    }

    /// The same stores, with every key the component uses kept under `prefix` (and listed
    /// without it). Deployments that share a store but must not share keys, such as two
    /// hosts' registries on one Redis, each get their own prefix.
    pub fn scoped(&self, prefix: &str) -> Self {
        Self {
            stores: self.stores.clone(),
            prefix: Arc::from(format!("{}{prefix}", self.prefix)),
        }
    }

    /// The same stores, their compare-and-swap behaving as Spin 4.0.2's store `like` does
    /// (`--simulate-spin-swap`, a test hook: the production swap path has no branch for it).
    pub fn with_simulated_swap(self, like: SimulatedSwap) -> Self {
        let wrap = |store: &Arc<dyn keyvalue_stores::store::Store>| match like {
            SimulatedSwap::Redis => StoreWithHook::around(store.clone(), SpinRedisSwap),
            SimulatedSwap::Sqlite => StoreWithHook::around(store.clone(), SpinSqliteSwap),
        };
        let stores = self
            .stores
            .iter()
            .map(|(label, store)| (label.clone(), wrap(store)))
            .collect();
        Self {
            stores: Arc::new(stores),
            ..self
        }
    }

    /// Whether any label is on a store other hosts may share (Redis).
    pub fn is_shared(&self) -> bool {
        self.stores.values().any(|s| s.is_shared())
    }
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
    wit_store::add_to_linker::<T, KvData>(linker, get)?;
    atomics::add_to_linker::<T, KvData>(linker, get)?;
    batch::add_to_linker::<T, KvData>(linker, get)?;
    Ok(())
}

type WResult<T> = wasmtime::Result<T>;
type KvResult<T> = Result<T, wit_store::Error>;

fn other(e: anyhow::Error) -> wit_store::Error {
    tracing::warn!(error = %format!("{e:#}"), "key-value operation failed");
    wit_store::Error::Other(format!("{e:#}"))
}

impl KvCtx<'_> {
    fn label(&self, bucket: &Resource<BucketHandle>) -> WResult<String> {
        Ok(self.table.get(bucket)?.label.clone())
    }

    /// The store of an open bucket (its label was checked when it was opened).
    fn store_of(&self, bucket: &Resource<BucketHandle>) -> WResult<&dyn Store> {
        self.store_by_label(&self.table.get(bucket)?.label)
    }

    fn store_by_label(&self, label: &str) -> WResult<&dyn Store> {
        self.kv
            .stores
            .get(label)
            .map(|s| &**s)
            .ok_or_else(|| wasmtime::Error::msg(format!("store `{label}` is not open")))
    }

    /// The key as stored: under this component's prefix.
    fn stored<'k>(&self, key: &'k str) -> Cow<'k, str> {
        if self.kv.prefix.is_empty() {
            Cow::Borrowed(key)
        } else {
            Cow::Owned(format!("{}{key}", self.kv.prefix))
        }
    }

    fn stored_all(&self, keys: &[String]) -> Vec<String> {
        keys.iter().map(|k| self.stored(k).into_owned()).collect()
    }
}

impl wit_store::Host for KvCtx<'_> {
    async fn open(&mut self, identifier: String) -> WResult<KvResult<Resource<BucketHandle>>> {
        if !self.kv.stores.contains_key(&identifier) {
            return Ok(Err(wit_store::Error::NoSuchStore));
        }
        Ok(Ok(self.table.push(BucketHandle { label: identifier })?))
    }
}

impl wit_store::HostBucket for KvCtx<'_> {
    async fn get(
        &mut self,
        b: Resource<BucketHandle>,
        key: String,
    ) -> WResult<KvResult<Option<Vec<u8>>>> {
        let key = self.stored(&key);
        Ok(self.store_of(&b)?.get(&key).await.map_err(other))
    }

    async fn set(
        &mut self,
        b: Resource<BucketHandle>,
        key: String,
        value: Vec<u8>,
    ) -> WResult<KvResult<()>> {
        let key = self.stored(&key);
        Ok(self.store_of(&b)?.set(&key, &value).await.map_err(other))
    }

    async fn delete(&mut self, b: Resource<BucketHandle>, key: String) -> WResult<KvResult<()>> {
        let key = self.stored(&key);
        Ok(self.store_of(&b)?.delete(&key).await.map_err(other))
    }

    async fn exists(&mut self, b: Resource<BucketHandle>, key: String) -> WResult<KvResult<bool>> {
        let key = self.stored(&key);
        Ok(self.store_of(&b)?.exists(&key).await.map_err(other))
    }

    async fn list_keys(
        &mut self,
        b: Resource<BucketHandle>,
        cursor: Option<String>,
    ) -> WResult<KvResult<wit_store::KeyResponse>> {
        let prefix = self.kv.prefix.clone();
        let page = self
            .store_of(&b)?
            .list_keys(&prefix, cursor.as_deref())
            .await;
        Ok(page
            .map(|(keys, cursor)| wit_store::KeyResponse {
                keys: keys
                    .into_iter()
                    .map(|k| k.strip_prefix(&*prefix).map(str::to_owned).unwrap_or(k))
                    .collect(),
                cursor,
            })
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
        let key = self.stored(&key);
        Ok(self
            .store_of(&b)?
            .increment(&key, delta)
            .await
            .map_err(other))
    }

    async fn swap(
        &mut self,
        cas: Resource<CasHandle>,
        value: Vec<u8>,
    ) -> WResult<Result<(), atomics::CasError>> {
        let CasHandle { label, cas } = self.table.delete(cas)?;
        match self.store_by_label(&label)?.swap(cas, &value).await {
            Ok(Ok(())) => Ok(Ok(())),
            // Someone changed the value first: a handle at the value that won, for the retry.
            Ok(Err(retry)) => {
                let retry = self.table.push(CasHandle { label, cas: retry })?;
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
        let key = self.stored(&key);
        match self.store_of(&b)?.begin_swap(&key).await {
            Ok(cas) => Ok(Ok(self.table.push(CasHandle { label, cas })?)),
            Err(e) => Ok(Err(other(e))),
        }
    }

    async fn current(&mut self, cas: Resource<CasHandle>) -> WResult<KvResult<Option<Vec<u8>>>> {
        Ok(Ok(self.table.get(&cas)?.cas.expected.clone()))
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
        let stored = self.stored_all(&keys);
        let values = self.store_of(&b)?.get_many(&stored).await;
        Ok(values
            .map(|values| keys.into_iter().zip(values).collect())
            .map_err(other))
    }

    async fn set_many(
        &mut self,
        b: Resource<BucketHandle>,
        entries: Vec<(String, Vec<u8>)>,
    ) -> WResult<KvResult<()>> {
        let entries: Vec<_> = entries
            .into_iter()
            .map(|(k, v)| (self.stored(&k).into_owned(), v))
            .collect();
        Ok(self.store_of(&b)?.set_many(&entries).await.map_err(other))
    }

    async fn delete_many(
        &mut self,
        b: Resource<BucketHandle>,
        keys: Vec<String>,
    ) -> WResult<KvResult<()>> {
        let keys = self.stored_all(&keys);
        Ok(self.store_of(&b)?.delete_many(&keys).await.map_err(other))
    }
}

/// Which of Spin 4.0.2's stores `--simulate-spin-swap` imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimulatedSwap {
    /// Every swap reports a conflict, written or not.
    Redis,
    /// A swap from an absent key is an unconditional upsert.
    Sqlite,
}
