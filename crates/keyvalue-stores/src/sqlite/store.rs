//! One label of a [`KvDatabase`] as a [`Store`]: rows carry the label in their `store`
//! column, as Spin's do, so several labels share one file and one writer.

use super::KvDatabase;
use crate::store::{Store, Swap};
use anyhow::Result;
use std::sync::Arc;

pub struct SqliteStore {
    db: Arc<KvDatabase>,
    label: String,
}

impl SqliteStore {
    pub fn new(db: Arc<KvDatabase>, label: &str) -> Self {
        Self {
            db,
            label: label.to_owned(),
        }
    }
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.db.get(&self.label, key)
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        self.db.exists(&self.label, key)
    }

    async fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.db.set(&self.label, key, value).await
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.db.delete(&self.label, key).await
    }

    async fn list_keys(
        &self,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        self.db.list_keys(&self.label, prefix, cursor)
    }

    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        self.db.get_many(&self.label, keys)
    }

    async fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<()> {
        self.db.set_many(&self.label, entries).await
    }

    async fn delete_many(&self, keys: &[String]) -> Result<()> {
        self.db.delete_many(&self.label, keys).await
    }

    async fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        self.db.increment(&self.label, key, delta).await
    }

    async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<Swap> {
        if self
            .db
            .compare_and_swap(&self.label, key, expected, new)
            .await?
        {
            Ok(Swap::Done)
        } else {
            Ok(Swap::Conflict(self.db.get(&self.label, key)?))
        }
    }
}
