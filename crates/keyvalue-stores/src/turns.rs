//! Turns at a record: on Redis, requests of one host that read-modify-write the same key
//! take turns, from `cas.new` until their swap is queued, instead of racing one another.
//! [`Turns`] is a [`SwapHook`]: `open` wraps every Redis store in it.
//!
//! Compare-and-swap stays what makes updates safe (other hosts, and a request whose turn
//! timed out, still race). Turns only stop this host's own requests from spoiling each
//! other's swaps: 32 requests on one record otherwise lose 31 races in every round, and each
//! loss costs a round trip to Redis and a pause. With turns (and the turn passed on once the
//! swap is queued, see `queue_then_pass_turn`) the registry on Redis went from 1,497 to about
//! 2,250-2,600 registrations a second (docs/BENCHMARKS.md). SQLite does without: its writer
//! commits the swaps of many racing requests at once, and turns there measured slower
//! (2,769 against 3,717 registrations a second).
//!
//! A turn is never waited for long ([`MAX_WAIT`]): a request that holds one and then asks
//! for another key held by a request waiting for its own (or asks for its own key twice)
//! proceeds without a turn after the wait, so turns can slow a request but never deadlock it.
//!
//! A turn also carries what its last holder wrote: the next holder begins its swap from
//! that value instead of reading the record back from Redis, which takes a round trip out of
//! the time each request holds the record. Should that write have lost to another host's,
//! the swap built on it finds the record changed and retries from what Redis holds, as any
//! conflict does.

use super::store::{Cas, Held, Store};
use super::wrap::SwapHook;
use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::OwnedMutexGuard;

/// Longest a request waits for its turn before going ahead without one.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// Keys tracked before the map drops those nobody holds or waits for.
const TIDY_AT: usize = 1024;
/// How long the value a turn's last holder wrote is taken as the record's: a little while,
/// so that a record idle meanwhile (and perhaps changed by another host) is read afresh.
const TRUST_WRITTEN_FOR: Duration = Duration::from_millis(20);

/// A request's turn at a key, with what the previous holder wrote; dropping it (swap done,
/// handle dropped, instance gone) passes the turn on.
pub type Turn = OwnedMutexGuard<Option<Written>>;
type TurnLock = tokio::sync::Mutex<Option<Written>>;

/// The value a turn's holder swapped in, and when its swap was queued.
pub struct Written {
    value: Vec<u8>,
    at: Instant,
}

#[derive(Default)]
pub struct Turns {
    keys: Mutex<HashMap<String, Arc<TurnLock>>>,
}

impl Turns {
    /// Waits (at most [`MAX_WAIT`]) for the turn at `key`; `None` when the wait ran out.
    pub async fn take(&self, key: &str) -> Option<Turn> {
        let lock = {
            let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
            if keys.len() >= TIDY_AT {
                keys.retain(|_, lock| Arc::strong_count(lock) > 1);
            }
            keys.entry(key.to_owned()).or_default().clone()
        };
        tokio::time::timeout(MAX_WAIT, lock.lock_owned()).await.ok()
    }

    /// A turn for a retry, which starts from the value that won: what the last holder
    /// wrote is no longer news.
    async fn take_held(&self, key: &str) -> Option<Held> {
        let mut turn = self.take(key).await?;
        *turn = None;
        Some(Box::new(turn))
    }
}

#[async_trait::async_trait]
impl SwapHook for Turns {
    async fn begin(&self, inner: &dyn Store, key: &str) -> Result<Cas> {
        let Some(mut turn) = self.take(key).await else {
            return inner.begin_swap(key).await;
        };
        let written = turn.take();
        let mut cas = match written.filter(|w| w.at.elapsed() < TRUST_WRITTEN_FOR) {
            Some(w) => Cas {
                key: key.to_owned(),
                expected: Some(w.value),
                held: None,
            },
            None => inner.begin_swap(key).await?,
        };
        cas.held = Some(Box::new(turn));
        Ok(cas)
    }

    async fn finish(&self, inner: &dyn Store, mut cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        let turn = cas
            .held
            .take()
            .and_then(|held| held.downcast::<Turn>().ok());
        let swap = inner.swap(cas, new);
        let swapped = match turn {
            Some(turn) => queue_then_pass_turn(swap, *turn, new).await,
            None => swap.await,
        };
        match swapped {
            // Someone changed the value first: the retry gets a turn at the key.
            Ok(Err(mut retry)) => {
                retry.held = self.take_held(&retry.key).await;
                Ok(Err(retry))
            }
            done => done,
        }
    }
}

/// Awaits `swap`, passing the turn on (with `new`, the value written) as soon as the swap is
/// queued on the store's connection rather than when it is answered. On a store that runs
/// each connection's calls in order (Redis), the next request's swap is queued behind this
/// one, so it need not wait for the reply; that halves the time a record is held.
/// Correctness never depends on this: compare-and-swap decides.
async fn queue_then_pass_turn<F>(swap: F, mut turn: Turn, new: &[u8]) -> F::Output
where
    F: Future<Output = Result<Result<(), Cas>>>,
{
    let mut swap = std::pin::pin!(swap);
    // One poll takes the command through to the connection's queue.
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(swap.as_mut().poll(cx))).await;
    if matches!(
        first,
        std::task::Poll::Pending | std::task::Poll::Ready(Ok(Ok(())))
    ) {
        *turn = Some(Written {
            value: new.to_vec(),
            at: Instant::now(),
        });
    }
    drop(turn);
    match first {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => swap.await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_turn_per_key_and_waits_are_bounded() {
        let turns = Turns::default();
        let first = turns.take("k").await;
        assert!(first.is_some());
        // Another key is free.
        assert!(turns.take("other").await.is_some());
        // The same key is held: the wait runs out, and the caller goes ahead without it.
        let started = std::time::Instant::now();
        assert!(turns.take("k").await.is_none());
        assert!(started.elapsed() >= MAX_WAIT);
        drop(first);
        assert!(turns.take("k").await.is_some());
    }

    /// The next holder begins from what the last one wrote, without reading; when another
    /// host changed the record meanwhile, that swap conflicts and the retry starts from the
    /// record's real value.
    #[tokio::test]
    async fn a_turn_carries_the_last_write_and_a_stale_one_only_costs_a_retry() {
        use crate::wrap::Wrapped;
        let shared: Arc<dyn Store> = Arc::new(crate::memory::MemoryStore::default());
        let host = Wrapped::around(shared.clone(), Turns::default());
        let cas = host.begin_swap("k").await.unwrap();
        assert_eq!(cas.expected, None);
        host.swap(cas, b"1").await.unwrap().unwrap();

        // Another host writes; this host's next turn still remembers "1".
        shared.set("k", b"9").await.unwrap();
        let cas = host.begin_swap("k").await.unwrap();
        assert_eq!(
            cas.expected.as_deref(),
            Some(&b"1"[..]),
            "begun from the last write"
        );
        let retry = host.swap(cas, b"2").await.unwrap().unwrap_err();
        assert_eq!(
            retry.expected.as_deref(),
            Some(&b"9"[..]),
            "retry from the real value"
        );
        host.swap(retry, b"10").await.unwrap().unwrap();
        assert_eq!(shared.get("k").await.unwrap().as_deref(), Some(&b"10"[..]));

        // A remembered write is trusted only briefly.
        tokio::time::sleep(TRUST_WRITTEN_FOR * 2).await;
        shared.set("k", b"11").await.unwrap();
        let cas = host.begin_swap("k").await.unwrap();
        assert_eq!(cas.expected.as_deref(), Some(&b"11"[..]), "read afresh");
    }
}
