//! Opens the [`Store`] of every label a [`StoreConfig`] names: SQLite or Redis, each Redis
//! wrapped in [`Turns`], and `deployment` in memory unless the file names it. A new backend
//! is one more arm here.

use super::config::{StoreConfig, StoreSpec};
use super::memory::MemoryStore;
use super::redis::RedisStore;
use super::sqlite::{KvDatabase, SqliteStore};
use super::store::Store;
use super::turns::Turns;
use super::wrap::StoreWithHook;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Opens the store of every label in `config`. Labels on the same SQLite file share one
/// database (one writer); labels on the same Redis share one connection and one set of
/// turns. A Redis that does not answer fails start-up, naming its URL.
pub async fn open_all(config: &StoreConfig) -> Result<BTreeMap<String, Arc<dyn Store>>> {
    let mut files: BTreeMap<PathBuf, Arc<KvDatabase>> = BTreeMap::new();
    let mut redis: BTreeMap<String, Arc<dyn Store>> = BTreeMap::new();
    let mut stores = BTreeMap::new();
    for (label, spec) in &config.labels {
        let store = match spec {
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
                Arc::new(SqliteStore::new(db, label)) as Arc<dyn Store>
            }
            StoreSpec::Redis { url } => match redis.get(url) {
                Some(s) => s.clone(),
                None => {
                    let store = RedisStore::connect(url).await.map_err(|e| {
                        let file = config
                            .source
                            .as_ref()
                            .map_or("the runtime config".to_owned(), |f| f.display().to_string());
                        anyhow::anyhow!(
                            "key-value store `{label}`: {e:#}. Start Redis there, or fix `url` \
                                 under [key_value_store.{label}] in {file}"
                        )
                    })?;
                    tracing::info!(label, url = store.shown_url(), "key-value store on Redis");
                    let store = StoreWithHook::around(Arc::new(store), Turns::default());
                    redis.insert(url.clone(), store.clone());
                    store
                }
            },
        };
        stores.insert(label.clone(), store);
    }
    stores
        .entry(super::DEPLOYMENT_LABEL.to_owned())
        .or_insert_with(|| Arc::new(MemoryStore::default()));
    Ok(stores)
}
