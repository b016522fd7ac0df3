//! The seam between the `wasi:keyvalue` interfaces and the stores behind them: the [`Store`]
//! trait. Each backend implements it once ([`super::sqlite::SqliteStore`],
//! [`super::redis::RedisStore`]); behaviours that apply to any store wrap one
//! ([`super::wrap`]). A new backend is one module implementing [`Store`], opened in
//! [`super::open`]; the contract it must keep is the test suite in `super::contract`.

use anyhow::Result;
use std::any::Any;

/// The outcome of a compare-and-swap.
#[derive(Debug, PartialEq, Eq)]
pub enum Swap {
    Done,
    /// The record held something else (this value, or nothing); nothing was written.
    Conflict(Option<Vec<u8>>),
}

/// Something a wrapper holds from the start of a compare-and-swap until its write is queued
/// (a turn at the key, see [`super::turns`]); dropping it lets go.
pub type Held = Box<dyn Any + Send + Sync>;

/// A compare-and-swap under way: the key, the value seen when it began (which the swap
/// requires), and what a wrapper holds meanwhile.
pub struct Cas {
    pub key: String,
    pub expected: Option<Vec<u8>>,
    pub held: Option<Held>,
}

impl std::fmt::Debug for Cas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cas")
            .field("key", &self.key)
            .field("expected", &self.expected)
            .field("held", &self.held.is_some())
            .finish()
    }
}

/// One labelled key-value store. Every call is async: a write returns once it is durable
/// (SQLite: committed) or acknowledged (Redis), and fails with an error naming the store
/// when the store is down, rather than hanging.
///
/// The meaning of every call is the same on every store; only counters' encodings differ
/// (SQLite keeps 8 bytes, Redis decimal text), which is why guests read counters with
/// `increment(key, 0)`.
#[async_trait::async_trait]
pub trait Store: Send + Sync {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    async fn exists(&self, key: &str) -> Result<bool>;
    async fn set(&self, key: &str, value: &[u8]) -> Result<()>;
    async fn delete(&self, key: &str) -> Result<()>;
    /// One page of the keys starting with `prefix` after `cursor`, and the cursor of the
    /// next page (`None` at the end). A key may appear on two pages of one walk (Redis's
    /// SCAN); callers that need each key once deduplicate.
    async fn list_keys(
        &self,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)>;
    /// The values of `keys`, in their order.
    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>>;
    /// Writes every entry, all or none.
    async fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<()>;
    async fn delete_many(&self, keys: &[String]) -> Result<()>;
    /// Adds `delta` to the counter at `key` (absent = 0) atomically; the new value.
    async fn increment(&self, key: &str, delta: i64) -> Result<i64>;
    /// Writes `new` only if the record still holds `expected` (`None`: is absent), as one
    /// atomic step; on a conflict, says what it holds instead.
    async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<Swap>;

    /// Writes `value` at `key` as Spin's own stores do, whatever guest-kit's lock of `key`
    /// says (`set` of a store shared with Spin waits for that lock, see `redis`): only for
    /// the hook that imitates Spin's store, whose guests write under that lock themselves.
    async fn set_ignoring_lock(&self, key: &str, value: &[u8]) -> Result<()> {
        self.set(key, value).await
    }

    /// Deletes `key` whatever its lock says; see [`Store::set_ignoring_lock`].
    async fn delete_ignoring_lock(&self, key: &str) -> Result<()> {
        self.delete(key).await
    }

    /// Whether other hosts may share this store (and so see its keys).
    fn is_shared(&self) -> bool {
        false
    }

    /// What kind of store this is (`sqlite`, `redis`), for metrics and messages.
    fn backend(&self) -> &'static str {
        "other"
    }

    /// Begins a compare-and-swap at `key`: what it holds now. Wrappers that serialise
    /// swaps take their hold here.
    async fn begin_swap(&self, key: &str) -> Result<Cas> {
        Ok(Cas {
            key: key.to_owned(),
            expected: self.get(key).await?,
            held: None,
        })
    }

    /// Finishes `cas` by writing `new` if the record still holds `cas.expected`. On a
    /// conflict, `Err` carries a new [`Cas`] at the value that won, for the retry.
    async fn swap(&self, cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        Ok(
            match self
                .compare_and_swap(&cas.key, cas.expected.as_deref(), new)
                .await?
            {
                Swap::Done => Ok(()),
                Swap::Conflict(current) => Err(Cas {
                    key: cas.key,
                    expected: current,
                    held: None,
                }),
            },
        )
    }
}
