//! Turns at a record: on Redis, requests of one host that read-modify-write the same key
//! take turns, from `cas.new` until their swap is queued, instead of racing one another.
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
    /// Waits (at most [`MAX_WAIT`]) for the turn at `key` of store `label`; `None` when the
    /// wait ran out.
    pub async fn take(&self, label: &str, key: &str) -> Option<Turn> {
        let lock = {
            let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
            if keys.len() >= TIDY_AT {
                keys.retain(|_, lock| Arc::strong_count(lock) > 1);
            }
            keys.entry(format!("{label}\u{0}{key}"))
                .or_default()
                .clone()
        };
        tokio::time::timeout(MAX_WAIT, lock.lock_owned()).await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_turn_per_key_and_waits_are_bounded() {
        let turns = Turns::default();
        let first = turns.take("default", "k").await;
        assert!(first.is_some());
        // Another key is free; the same key in another store is another key.
        assert!(turns.take("default", "other").await.is_some());
        assert!(turns.take("archive", "k").await.is_some());
        // The same key is held: the wait runs out, and the caller goes ahead without it.
        let started = std::time::Instant::now();
        assert!(turns.take("default", "k").await.is_none());
        assert!(started.elapsed() >= MAX_WAIT);
        drop(first);
        assert!(turns.take("default", "k").await.is_some());
    }
}
