//! [`MemoryStore`]: a store held in the host process's memory, for state that lives exactly
//! as long as one deployment and so gains nothing from being durable.
//!
//! A model's `/metrics` counters and its self-test mark are kept per deployment (their keys
//! name the deployment's start) and start afresh with every deployment; a durable commit
//! for each of them (two per prediction) bought nothing but the commit's cost. Every
//! instance of a deployment lives in one host process, so a map behind a lock is shared by
//! all of them, and each call is atomic under that lock. Counters use SQLite's encoding
//! (8-byte little-endian), so guests read them the same way on any store.

use super::store::{Store, Swap};
use anyhow::{Result, anyhow};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Keys returned per [`Store::list_keys`] page, as for SQLite.
const PAGE_SIZE: usize = 1000;

#[derive(Default)]
pub struct MemoryStore {
    entries: Mutex<BTreeMap<String, Vec<u8>>>,
}

impl MemoryStore {
    fn with<R>(&self, f: impl FnOnce(&mut BTreeMap<String, Vec<u8>>) -> R) -> R {
        // A panic while holding the lock leaves the map whole (every change is one insert
        // or remove), so a poisoned lock is still safe to use.
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut map)
    }
}

#[async_trait::async_trait]
impl Store for MemoryStore {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.with(|m| m.get(key).cloned()))
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.with(|m| m.contains_key(key)))
    }

    async fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.with(|m| m.insert(key.to_owned(), value.to_vec()));
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.with(|m| m.remove(key));
        Ok(())
    }

    async fn list_keys(
        &self,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        let keys: Vec<String> = self.with(|m| {
            let after = cursor.filter(|c| *c >= prefix);
            let from = match after {
                Some(c) => std::ops::Bound::Excluded(c.to_owned()),
                None => std::ops::Bound::Included(prefix.to_owned()),
            };
            m.range((from, std::ops::Bound::Unbounded))
                .map(|(k, _)| k)
                .take_while(|k| k.starts_with(prefix))
                .take(PAGE_SIZE)
                .cloned()
                .collect()
        });
        let next = (keys.len() == PAGE_SIZE)
            .then(|| keys.last().cloned())
            .flatten();
        Ok((keys, next))
    }

    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        Ok(self.with(|m| keys.iter().map(|k| m.get(k).cloned()).collect()))
    }

    async fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<()> {
        self.with(|m| {
            for (k, v) in entries {
                m.insert(k.clone(), v.clone());
            }
        });
        Ok(())
    }

    async fn delete_many(&self, keys: &[String]) -> Result<()> {
        self.with(|m| keys.iter().for_each(|k| drop(m.remove(k))));
        Ok(())
    }

    async fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        self.with(|m| {
            let current = match m.get(key) {
                None => 0,
                Some(bytes) => {
                    i64::from_le_bytes(<[u8; 8]>::try_from(bytes.as_slice()).map_err(|_| {
                        anyhow!(
                            "value of `{key}` is not a counter (expected 8 bytes, found {})",
                            bytes.len()
                        )
                    })?)
                }
            };
            let new = current
                .checked_add(delta)
                .ok_or_else(|| anyhow!("counter `{key}` would overflow ({current} + {delta})"))?;
            m.insert(key.to_owned(), new.to_le_bytes().to_vec());
            Ok(new)
        })
    }

    async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<Swap> {
        Ok(self.with(|m| {
            let current = m.get(key).map(Vec::as_slice);
            if current == expected {
                m.insert(key.to_owned(), new.to_vec());
                Swap::Done
            } else {
                Swap::Conflict(current.map(<[u8]>::to_vec))
            }
        }))
    }

    fn backend(&self) -> &'static str {
        "memory"
    }
}
