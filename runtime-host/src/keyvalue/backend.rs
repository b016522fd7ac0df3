//! The seam between the `wasi:keyvalue` interfaces and the stores behind them: one
//! [`Backend`] per label, SQLite or Redis, opened from a [`StoreConfig`]. Both answer the same
//! operations with the same meaning; only counters' encodings differ (SQLite keeps 8 bytes,
//! Redis decimal text), which is why guests read counters with `increment(key, 0)`.

use super::config::{StoreConfig, StoreSpec};
use super::redis::{RedisStore, Swap};
use super::sqlite::KvDatabase;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Clone)]
pub enum Backend {
    /// SQLite; rows carry the label in their `store` column, as Spin's.
    Sqlite {
        db: Arc<KvDatabase>,
        label: String,
    },
    Redis(Arc<RedisStore>),
}

/// Opens the store of every label in `config`. Labels on the same SQLite file share one
/// database (one writer); a Redis that does not answer fails start-up, naming its URL.
pub async fn open_all(config: &StoreConfig) -> Result<BTreeMap<String, Backend>> {
    let mut files: BTreeMap<PathBuf, Arc<KvDatabase>> = BTreeMap::new();
    let mut redis: BTreeMap<String, Arc<RedisStore>> = BTreeMap::new();
    let mut stores = BTreeMap::new();
    for (label, spec) in &config.labels {
        let backend = match spec {
            StoreSpec::Sqlite(path) => {
                let db = match files.get(path) {
                    Some(db) => db.clone(),
                    None => {
                        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                            std::fs::create_dir_all(dir).with_context(|| {
                                format!("creating directory {} for store `{label}`", dir.display())
                            })?;
                        }
                        let db = Arc::new(KvDatabase::open(path)?);
                        files.insert(path.clone(), db.clone());
                        db
                    }
                };
                Backend::Sqlite {
                    db,
                    label: label.clone(),
                }
            }
            StoreSpec::Redis { url } => {
                let store = match redis.get(url) {
                    Some(s) => s.clone(),
                    None => {
                        let store = RedisStore::connect(url).await.map_err(|e| {
                            let file = config
                                .source
                                .as_ref()
                                .map_or("the runtime config".to_owned(), |f| {
                                    f.display().to_string()
                                });
                            anyhow::anyhow!(
                                "key-value store `{label}`: {e:#}. Start Redis there, or fix `url` \
                                 under [key_value_store.{label}] in {file}"
                            )
                        })?;
                        let store = Arc::new(store);
                        redis.insert(url.clone(), store.clone());
                        store
                    }
                };
                tracing::info!(label, url = store.shown_url(), "key-value store on Redis");
                Backend::Redis(store)
            }
        };
        stores.insert(label.clone(), backend);
    }
    Ok(stores)
}

impl Backend {
    /// Whether calls are carried out in the order they were queued, so a read queued after
    /// a write sees it (Redis: one connection, served in order). SQLite reads run on other
    /// connections than its writer.
    pub fn keeps_call_order(&self) -> bool {
        matches!(self, Self::Redis(_))
    }

    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self {
            Self::Sqlite { db, label } => db.get(label, key),
            Self::Redis(r) => r.get(key).await,
        }
    }

    pub async fn exists(&self, key: &str) -> Result<bool> {
        match self {
            Self::Sqlite { db, label } => db.exists(label, key),
            Self::Redis(r) => r.exists(key).await,
        }
    }

    pub async fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        match self {
            Self::Sqlite { db, label } => db.set(label, key, value).await,
            Self::Redis(r) => r.set(key, value).await,
        }
    }

    pub async fn delete(&self, key: &str) -> Result<()> {
        match self {
            Self::Sqlite { db, label } => db.delete(label, key).await,
            Self::Redis(r) => r.delete(key).await,
        }
    }

    /// One page of the keys starting with `prefix`, and the cursor of the next page.
    pub async fn list_keys(
        &self,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        match self {
            Self::Sqlite { db, label } => db.list_keys(label, prefix, cursor),
            Self::Redis(r) => r.list_keys(prefix, cursor).await,
        }
    }

    pub async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        match self {
            Self::Sqlite { db, label } => Ok(db
                .get_many(label, keys)?
                .into_iter()
                .map(|(_, value)| value)
                .collect()),
            Self::Redis(r) => r.get_many(keys).await,
        }
    }

    pub async fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<()> {
        match self {
            Self::Sqlite { db, label } => db.set_many(label, entries).await,
            Self::Redis(r) => r.set_many(entries).await,
        }
    }

    pub async fn delete_many(&self, keys: &[String]) -> Result<()> {
        match self {
            Self::Sqlite { db, label } => db.delete_many(label, keys).await,
            Self::Redis(r) => r.delete_many(keys).await,
        }
    }

    pub async fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        match self {
            Self::Sqlite { db, label } => db.increment(label, key, delta).await,
            Self::Redis(r) => r.increment(key, delta).await,
        }
    }

    /// Writes `new` only if the record still holds `expected` (`None`: is absent); on a
    /// conflict, says what it holds instead.
    pub async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<Swap> {
        match self {
            Self::Sqlite { db, label } => {
                if db.compare_and_swap(label, key, expected, new).await? {
                    Ok(Swap::Done)
                } else {
                    Ok(Swap::Conflict(db.get(label, key)?))
                }
            }
            Self::Redis(r) => r.compare_and_swap(key, expected, new).await,
        }
    }
}
