//! Key-value data in Redis, so several hosts (and `spin up` with the same runtime-config
//! file) share one store. Values are plain Redis strings under the guest's key, as Spin's own
//! Redis store keeps them; counters are Redis integers (decimal text, see `increment`).
//!
//! Every call goes over one multiplexed connection per store ([`ConnectionManager`]), which
//! pipelines the commands of concurrent requests and reconnects by itself after Redis comes
//! back. Nothing opens a connection per call or per attempt.
//!
//! Compare-and-swap is one Lua script: Redis runs a script atomically, so the comparison and
//! the write cannot be split by any other client on any host. (WATCH/MULTI/EXEC would need a
//! connection of its own per swap.) A conflict is reported as a conflict, with the value that
//! won, so the caller's retry needs no extra read.
//!
//! Every write of a record (swap, `SET`, `DEL`, their batches) also keeps to guest-kit's lock
//! of increments, which guests hold under Spin's Redis store: it is made only while the
//! record's `guest-kit/lock/<key>` reads 0, in the same script, and waits while that lock is
//! held ([`guard`]). Counters (`INCRBY`) are not records and are never guarded.
//!
//! Every call is bounded by [`CALL_TIMEOUT`]: a Redis that is down or stalled makes the call
//! fail with an error naming the store, and the component answers 503 within the request's
//! deadline instead of hanging.

mod guard;
#[cfg(test)]
mod lock_tests;

use super::store::{Store, Swap};
use anyhow::{Context, Result, anyhow, bail};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Script, Value};
use std::time::Duration;

/// Longest one store call may take, reconnecting included.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// Keys one `list-keys` page asks SCAN for.
const SCAN_COUNT: usize = 1000;

/// Longest a write waits for a record's lock (held by a guest under Spin, [`guard`]) to be
/// released: a live holder starts its last write within `HOLD_MS` (3 s) of taking it, and
/// usually holds it for milliseconds; past this the call fails as a store error (503), and the
/// guest's own retry decides. A residue of a dead holder is broken after `STALE_MS`.
const LOCK_WAIT: Duration = Duration::from_secs(3);
/// Longest pause between two tries of a held lock.
const LOCK_PAUSE_MS: u64 = 8;

pub struct RedisStore {
    conn: ConnectionManager,
    /// The URL without its password, for messages.
    shown_url: String,
    cas: Script,
    write: Script,
}

impl RedisStore {
    /// Connects to `url`; fails at once (within a few seconds) if Redis does not answer, so a
    /// host never starts serving on a store it cannot reach.
    pub async fn connect(url: &str) -> Result<Self> {
        let shown_url = redact(url);
        let client = redis::Client::open(url)
            .with_context(|| format!("`{shown_url}` is not a Redis URL (redis://HOST:PORT/DB)"))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_response_timeout(Some(CALL_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(200));
        let connect = ConnectionManager::new_with_config(client, config);
        let conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => bail!("cannot reach Redis at {shown_url}: {e}"),
            Err(_) => bail!("cannot reach Redis at {shown_url}: no answer within 5 s"),
        };
        let store = Self {
            conn,
            shown_url,
            cas: guard::cas_script(),
            write: guard::write_script(),
        };
        store
            .call::<String>(&mut redis::cmd("PING"))
            .await
            .context("Redis answered the connection but not PING")?;
        Ok(store)
    }

    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// Runs one command within [`CALL_TIMEOUT`].
    async fn call<T: redis::FromRedisValue>(&self, cmd: &mut redis::Cmd) -> Result<T> {
        let mut conn = self.conn.clone();
        self.bounded(|| cmd_name(cmd), cmd.query_async(&mut conn))
            .await
    }

    /// Awaits `call` within [`CALL_TIMEOUT`]; `what` names it in the error (computed only
    /// then: this is every store call's path).
    async fn bounded<T>(
        &self,
        what: impl FnOnce() -> String,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T> {
        match tokio::time::timeout(CALL_TIMEOUT, call).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(anyhow!(
                "Redis at {} failed {}: {e}",
                self.shown_url,
                what()
            )),
            Err(_) => Err(anyhow!(
                "Redis at {} did not answer {} within {} s",
                self.shown_url,
                what(),
                CALL_TIMEOUT.as_secs()
            )),
        }
    }
}

impl RedisStore {
    /// Runs `attempt` until it finds the locks of the records it writes free (it returns
    /// `Some`) or [`LOCK_WAIT`] has passed; `what` names the call in the error.
    async fn guarded<T, F>(&self, what: &str, keys: &[String], attempt: impl Fn() -> F) -> Result<T>
    where
        F: Future<Output = Result<Option<T>>>,
    {
        let started = std::time::Instant::now();
        loop {
            if let Some(done) = attempt().await? {
                return Ok(done);
            }
            if started.elapsed() >= LOCK_WAIT {
                bail!(
                    "Redis at {}: {what} of `{}` waited {} s for guest-kit's lock of the record \
                     (`{}`), held by another writer (a Spin request on the same Redis); nothing \
                     was written",
                    self.shown_url,
                    keys.join("`, `"),
                    LOCK_WAIT.as_secs(),
                    guard::locks_of(keys).join("`, `"),
                );
            }
            guard::pause(LOCK_PAUSE_MS).await;
        }
    }

    /// Sets (`values`: one per key) or deletes (`None`) `keys` in one script, once their
    /// locks are free.
    async fn write_guarded(
        &self,
        what: &str,
        keys: &[String],
        values: Option<&[&[u8]]>,
    ) -> Result<()> {
        let locks = guard::locks_of(keys);
        self.guarded(what, keys, || async {
            let mut invocation = self.write.prepare_invoke();
            invocation.key(keys).key(&locks);
            match values {
                Some(values) => invocation.arg("set").arg(values),
                None => invocation.arg("del"),
            };
            let mut conn = self.conn.clone();
            let written: i64 = self
                .bounded(|| what.to_owned(), invocation.invoke_async(&mut conn))
                .await?;
            Ok((written == 1).then_some(()))
        })
        .await
    }

    /// One compare-and-swap; `None` while the record's lock is held.
    async fn try_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<Option<Swap>> {
        let mut invocation = self.cas.key(key);
        invocation.key(edge_api::kv_lock::lock_key(key));
        match expected {
            Some(old) => invocation.arg("1").arg(old),
            None => invocation.arg("0").arg(""),
        };
        invocation.arg(value);
        let mut conn = self.conn.clone();
        let reply: Vec<Value> = self
            .bounded(
                || "compare-and-swap".into(),
                invocation.invoke_async(&mut conn),
            )
            .await?;
        match reply.as_slice() {
            [Value::Int(1)] => Ok(Some(Swap::Done)),
            [Value::Int(2)] => Ok(None),
            [Value::Int(0)] => Ok(Some(Swap::Conflict(None))),
            [Value::Int(0), Value::BulkString(current)] => {
                Ok(Some(Swap::Conflict(Some(current.clone()))))
            }
            other => bail!(
                "Redis at {} answered compare-and-swap with {other:?}",
                self.shown_url
            ),
        }
    }
}

#[async_trait::async_trait]
impl Store for RedisStore {
    fn is_shared(&self) -> bool {
        true
    }

    fn backend(&self) -> &'static str {
        "redis"
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.call(redis::cmd("GET").arg(key)).await
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        self.call(redis::cmd("EXISTS").arg(key)).await
    }

    async fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.write_guarded("SET", &[key.to_owned()], Some(&[value]))
            .await
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.write_guarded("DEL", &[key.to_owned()], None).await
    }

    /// A plain `SET`, as Spin's own Redis store writes (for the hook imitating it).
    async fn set_ignoring_lock(&self, key: &str, value: &[u8]) -> Result<()> {
        self.call(redis::cmd("SET").arg(key).arg(value)).await
    }

    /// A plain `DEL`, as Spin's own Redis store deletes.
    async fn delete_ignoring_lock(&self, key: &str) -> Result<()> {
        self.call::<i64>(redis::cmd("DEL").arg(key)).await?;
        Ok(())
    }

    /// One page of keys starting with `prefix`. SCAN may return a key on two pages (when
    /// Redis resizes its table meanwhile); callers that need each key once deduplicate.
    async fn list_keys(
        &self,
        prefix: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>)> {
        let mut cursor: u64 = match cursor {
            None => 0,
            Some(c) => c
                .parse()
                .map_err(|_| anyhow!("`{c}` is not a cursor this store handed out"))?,
        };
        let pattern = format!("{}*", escape_glob(prefix));
        // SCAN may answer an empty page that is not the last: keep going until keys come or
        // the scan ends, so an empty page always means the end.
        loop {
            let (next, keys): (u64, Vec<String>) = self
                .call(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(&pattern)
                        .arg("COUNT")
                        .arg(SCAN_COUNT),
                )
                .await?;
            let more = (next != 0).then(|| next.to_string());
            if !keys.is_empty() || more.is_none() {
                return Ok((keys, more));
            }
            cursor = next;
        }
    }

    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        self.call(redis::cmd("MGET").arg(keys)).await
    }

    /// Sets every entry in one script (all or none), once no entry's lock is held.
    async fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = entries.iter().map(|(k, _)| k.clone()).collect();
        let values: Vec<&[u8]> = entries.iter().map(|(_, v)| v.as_slice()).collect();
        self.write_guarded("MSET", &keys, Some(&values)).await
    }

    async fn delete_many(&self, keys: &[String]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        self.write_guarded("DEL", keys, None).await
    }

    /// INCRBY: the counter is a Redis integer, kept as decimal text (so a guest reads it
    /// with `increment(key, 0)`, never by decoding the bytes `get` returns).
    async fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        self.call(redis::cmd("INCRBY").arg(key).arg(delta)).await
    }

    /// Writes `value` only if the record still holds `expected` (`None`: is absent) and its
    /// lock is free; waits while the lock is held.
    async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<Swap> {
        self.guarded("compare-and-swap", &[key.to_owned()], || {
            self.try_swap(key, expected, value)
        })
        .await
    }
}

/// The command's name, for messages: its first argument.
fn cmd_name(cmd: &redis::Cmd) -> String {
    match cmd.args_iter().next() {
        Some(redis::Arg::Simple(name)) => String::from_utf8_lossy(name).into_owned(),
        _ => "a command".to_owned(),
    }
}

/// `redis://user:secret@host/0` → `redis://user:***@host/0`: URLs appear in errors and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// Escapes SCAN's glob characters, so a prefix matches only itself.
fn escape_glob(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len());
    for c in prefix.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '-') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_appear() {
        assert_eq!(redact("redis://:pw@h:6379/0"), "redis://:***@h:6379/0");
        assert_eq!(redact("redis://u:pw@h"), "redis://u:***@h");
        assert_eq!(redact("redis://h:6379"), "redis://h:6379");
        assert_eq!(redact("redis://user@h"), "redis://user@h");
    }

    #[test]
    fn prefixes_match_literally() {
        assert_eq!(escape_glob("hosts/a*b/"), r"hosts/a\*b/");
        assert_eq!(escape_glob("x[1]"), r"x\[1\]");
    }
}
