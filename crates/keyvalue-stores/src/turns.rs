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

use super::store::{Cas, Held, Store};
use super::wrap::SwapHook;
use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Mutex as TurnLock, OwnedMutexGuard};

/// Longest a request waits for its turn before going ahead without one.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// Keys tracked before the map drops those nobody holds or waits for.
const TIDY_AT: usize = 1024;

/// A request's turn at a key; dropping it (swap done, handle dropped, instance gone) passes
/// the turn on.
pub type Turn = OwnedMutexGuard<()>;

#[derive(Default)]
pub struct Turns {
    keys: Mutex<HashMap<String, Arc<TurnLock<()>>>>,
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

    async fn take_held(&self, key: &str) -> Option<Held> {
        self.take(key).await.map(|turn| Box::new(turn) as Held)
    }
}

#[async_trait::async_trait]
impl SwapHook for Turns {
    async fn begin(&self, inner: &dyn Store, key: &str) -> Result<Cas> {
        let turn = self.take_held(key).await;
        let mut cas = inner.begin_swap(key).await?;
        cas.held = turn;
        Ok(cas)
    }

    async fn finish(&self, inner: &dyn Store, mut cas: Cas, new: &[u8]) -> Result<Result<(), Cas>> {
        let turn = cas.held.take();
        let swap = inner.swap(cas, new);
        let swapped = match turn {
            Some(turn) => queue_then_pass_turn(swap, turn).await,
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

/// Awaits `swap`, passing the turn on as soon as the swap is queued on the store's connection
/// rather than when it is answered. On a store that runs each connection's calls in order
/// (Redis), the next request's read is queued behind this write and sees it, so it need not
/// wait for the reply; that halves the time a record is held. Correctness never depends on
/// this: compare-and-swap decides.
async fn queue_then_pass_turn<F: Future>(swap: F, turn: Held) -> F::Output {
    let mut swap = std::pin::pin!(swap);
    // One poll takes the command through to the connection's queue.
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(swap.as_mut().poll(cx))).await;
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
}
