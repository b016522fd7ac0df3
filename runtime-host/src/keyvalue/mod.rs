//! `wasi:keyvalue@0.2.0-draft2` (store, atomics, batch) for components, over the stores
//! the runtime configuration names ([`config`]): SQLite ([`sqlite`], the embedded default) or
//! Redis ([`redis`], shared by several hosts), one [`backend::Backend`] per label. The calls
//! are async: a write waits for its commit or Redis's reply without holding up the executor.
//!
//! Only the labels the host was configured with can be opened (`default` always), as under
//! Spin, where a component sees only the stores its manifest grants.

pub mod backend;
pub mod config;
pub mod redis;
pub mod sqlite;
mod turns;

use crate::bindings::wasi::keyvalue::{atomics, batch, store};
use backend::Backend;
use config::StoreConfig;
use redis::Swap;
use sqlite::KvDatabase;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use turns::{Turn, Turns};
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};

/// Store label every component gets.
pub const DEFAULT_LABEL: &str = "default";

/// What a host shares with every request of one component: the store of each label, and
/// the prefix its keys live under (empty unless the store is shared, see [`KeyValue::scoped`]).
#[derive(Clone)]
pub struct KeyValue {
    stores: Arc<BTreeMap<String, Backend>>,
    prefix: Arc<str>,
    /// Report every swap as lost, after writing it (`--simulate-broken-swap`).
    broken_swap: bool,
    /// This host's requests take turns at a record they update (see [`turns`]).
    turns: Arc<Turns>,
}

impl KeyValue {
    /// Opens every store `config` names (a Redis that does not answer is an error).
    pub async fn open(config: &StoreConfig) -> anyhow::Result<Self> {
        Ok(Self {
            stores: Arc::new(backend::open_all(config).await?),
            prefix: Arc::from(""),
            broken_swap: false,
            turns: Arc::default(),
        })
    }

    /// Only `default`, on an already open SQLite database.
    pub fn sqlite(db: Arc<KvDatabase>) -> Self {
        let mut stores = BTreeMap::new();
        stores.insert(
            DEFAULT_LABEL.to_owned(),
            Backend::Sqlite {
                db,
                label: DEFAULT_LABEL.to_owned(),
            },
        );
        Self {
            stores: Arc::new(stores),
            prefix: Arc::from(""),
            broken_swap: false,
            turns: Arc::default(),
        }
    }

    /// The same stores, with every key the component uses kept under `prefix` (and listed
    /// without it). Deployments that share a store but must not share keys, such as two
    /// hosts' registries on one Redis, each get their own prefix.
    pub fn scoped(&self, prefix: &str) -> Self {
        Self {
            stores: self.stores.clone(),
            prefix: Arc::from(format!("{}{prefix}", self.prefix)),
            broken_swap: self.broken_swap,
            turns: self.turns.clone(),
        }
    }

    /// The same stores, but every compare-and-swap writes and then reports a conflict, as
    /// Spin 4.0.2's Redis store does (its `UNWATCH <key>` fails after EXEC). Only for testing
    /// that components detect such a store instead of retrying without end.
    pub fn with_broken_swap(self) -> Self {
        Self {
            broken_swap: true,
            ..self
        }
    }

    /// This request's turn at `key`, on a store where turns pay (Redis, see [`turns`]);
    /// `None` elsewhere, or when the wait ran out.
    async fn take_turn(&self, store: &Backend, label: &str, key: &str) -> Option<Turn> {
        if store.keeps_call_order() {
            self.turns.take(label, key).await
        } else {
            None
        }
    }

    /// Whether any label is on a store other hosts may share (Redis).
    pub fn is_shared(&self) -> bool {
        self.stores.values().any(|b| matches!(b, Backend::Redis(_)))
    }
}

/// An open bucket: the label it stands for.
pub struct BucketHandle {
    label: String,
}

/// A compare-and-swap handle: the value seen when it was made, which `swap` requires, and
/// the request's turn at the key (passed on when the handle goes).
pub struct CasHandle {
    label: String,
    key: String,
    expected: Option<Vec<u8>>,
    turn: Option<Turn>,
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

    /// The store of an open bucket (its label was checked when it was opened).
    fn store_of(&self, bucket: &Resource<BucketHandle>) -> WResult<&Backend> {
        self.store_by_label(&self.table.get(bucket)?.label)
    }

    fn store_by_label(&self, label: &str) -> WResult<&Backend> {
        self.kv
            .stores
            .get(label)
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

impl store::Host for KvCtx<'_> {
    async fn open(&mut self, identifier: String) -> WResult<KvResult<Resource<BucketHandle>>> {
        if !self.kv.stores.contains_key(&identifier) {
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
    ) -> WResult<KvResult<store::KeyResponse>> {
        let prefix = self.kv.prefix.clone();
        let page = self
            .store_of(&b)?
            .list_keys(&prefix, cursor.as_deref())
            .await;
        Ok(page
            .map(|(keys, cursor)| store::KeyResponse {
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
        let mut handle = self.table.delete(cas)?;
        let store = self.store_by_label(&handle.label)?;
        let swap = store.compare_and_swap(&handle.key, handle.expected.as_deref(), &value);
        // Only stores that keep call order hand out turns (see `take_turn`).
        let swapped = match handle.turn.take() {
            Some(turn) => queue_then_pass_turn(swap, turn).await,
            None => swap.await,
        };
        let swapped = match swapped {
            Ok(Swap::Done) if self.kv.broken_swap => Ok(Swap::Conflict(Some(value))),
            other => other,
        };
        match swapped {
            Ok(Swap::Done) => Ok(Ok(())),
            Ok(Swap::Conflict(current)) => {
                // Someone changed the value first: hand back a handle at the value that won,
                // and a turn at the key for the retry.
                let turn = self.kv.take_turn(store, &handle.label, &handle.key).await;
                let retry = self.table.push(CasHandle {
                    expected: current,
                    turn,
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
        let key = self.stored(&key).into_owned();
        let store = self.store_of(&b)?;
        let turn = self.kv.take_turn(store, &label, &key).await;
        let expected = match store.get(&key).await {
            Ok(v) => v,
            Err(e) => return Ok(Err(other(e))),
        };
        Ok(Ok(self.table.push(CasHandle {
            label,
            key,
            expected,
            turn,
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

/// Awaits `swap`, passing the turn on as soon as the swap is queued on the store's connection
/// rather than when it is answered. On a store that runs each connection's calls in order
/// (Redis), the next request's read is queued behind this write and sees it, so it need not
/// wait for the reply; that halves the time a record is held. Correctness never depends on
/// this: compare-and-swap decides.
async fn queue_then_pass_turn<F: Future>(swap: F, turn: Turn) -> F::Output {
    let mut swap = std::pin::pin!(swap);
    // One poll takes the command through to the connection's queue.
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(swap.as_mut().poll(cx))).await;
    drop(turn);
    match first {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => swap.await,
    }
}
