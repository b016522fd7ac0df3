//! Fake key-value stores for the unit tests of the lock and the update loop. One map behind a
//! mutex, so each call is atomic as a store's are, in the flavours of the stores guest-kit
//! meets, with triggers that run another request's step, or inject a fault, just before or
//! after a given call: the interleavings a test needs happen on purpose, not by luck.

use super::Store;
use super::backend::{Backend, CasHandle, Found, SwapError};
use edge_api::kv_lock::LOCK_PREFIX;
use spin_sdk::wit::wasi::keyvalue::store;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// How a fake store's compare-and-swap and counters behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Swaps hold, absent keys included (`runtime-host`'s stores).
    Faithful,
    /// Spin 4.0.2's SQLite store: a swap from an absent key is a plain upsert, which wins
    /// whatever is there by then; counters are 8 bytes little-endian.
    SpinSqlite,
    /// Spin 4.0.2's Redis store: every swap reports failure, written or not (it writes when
    /// the value is still the one read); a batch read fails (it sends Redis `KEYS`);
    /// counters are decimal text (`INCRBY`).
    SpinRedis,
    /// A store with neither: swaps as Redis's, and an increment that sets the counter to
    /// `delta` instead of adding it.
    NoAtomics,
}

/// A call to the store, for triggers and counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Set,
    Delete,
    GetMany,
    Increment,
    Current,
    Swap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    Before,
    After,
}

enum Action {
    /// The call fails with `store::Error::Other`.
    Fail,
    /// Another request's step runs (it may call the store itself).
    Run(Box<dyn FnOnce() + Send>),
}

struct Trigger {
    op: Op,
    key: String,
    when: When,
    /// Matching calls still to let through before this one fires.
    skip: usize,
    action: Action,
}

type Map = BTreeMap<String, Vec<u8>>;

#[derive(Default)]
struct Shared {
    map: Mutex<Map>,
    triggers: Mutex<Vec<Trigger>>,
    calls: Mutex<Vec<(Op, String)>>,
}

/// A fake store; clones share it, as two instances share one Spin store.
#[derive(Clone)]
pub struct FakeBucket {
    flavour: Flavour,
    label: String,
    shared: Arc<Shared>,
}

static LABELS: AtomicUsize = AtomicUsize::new(0);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FakeBucket {
    /// An empty store, under a label of its own (what an instance learns of a store's swaps
    /// is kept by label, and must not carry over from another test's fake).
    pub fn new(flavour: Flavour) -> Self {
        let n = LABELS.fetch_add(1, Ordering::Relaxed);
        Self {
            flavour,
            label: format!("fake-{flavour:?}-{n}"),
            shared: Arc::default(),
        }
    }

    /// A [`Store`] on this fake, as one request would open it.
    pub fn store(&self) -> Store<FakeBucket> {
        Store::on(self.clone(), &self.label)
    }

    /// Runs `step` just before the `nth` (from 0) call `op` on `key` from now on.
    pub fn before(&self, op: Op, key: &str, nth: usize, step: impl FnOnce() + Send + 'static) {
        self.trigger(op, key, When::Before, nth, Action::Run(Box::new(step)));
    }

    /// Runs `step` just after the `nth` call `op` on `key` reached the store.
    pub fn after(&self, op: Op, key: &str, nth: usize, step: impl FnOnce() + Send + 'static) {
        self.trigger(op, key, When::After, nth, Action::Run(Box::new(step)));
    }

    /// The `nth` call `op` on `key` fails without reaching the store.
    pub fn fail(&self, op: Op, key: &str, nth: usize) {
        self.trigger(op, key, When::Before, nth, Action::Fail);
    }

    /// The `nth` call `op` on `key` is done, but its answer is lost (a connection dropped).
    pub fn fail_after(&self, op: Op, key: &str, nth: usize) {
        self.trigger(op, key, When::After, nth, Action::Fail);
    }

    fn trigger(&self, op: Op, key: &str, when: When, skip: usize, action: Action) {
        let key = key.to_owned();
        lock(&self.shared.triggers).push(Trigger {
            op,
            key,
            when,
            skip,
            action,
        });
    }

    /// How many calls `op` on `key` were made.
    pub fn calls(&self, op: Op, key: &str) -> usize {
        let calls = lock(&self.shared.calls);
        calls.iter().filter(|(o, k)| *o == op && k == key).count()
    }

    /// Every key the store holds.
    pub fn keys(&self) -> Vec<String> {
        lock(&self.shared.map).keys().cloned().collect()
    }

    /// Keys guest-kit wrote besides records and their lock counters (notes, probes, markers of
    /// breaks), for the tests' records, whose keys hold no `/`. An operation leaves none.
    pub fn markers(&self) -> Vec<String> {
        let counter = |k: &str| {
            k.strip_prefix(LOCK_PREFIX)
                .is_some_and(|r| !r.contains('/'))
        };
        let keys = self.keys().into_iter();
        keys.filter(|k| k.starts_with("guest-kit/") && !counter(k))
            .collect()
    }

    /// The value at `key`, read past the triggers.
    pub fn raw(&self, key: &str) -> Option<Vec<u8>> {
        lock(&self.shared.map).get(key).cloned()
    }

    /// Writes `value` at `key` past the triggers.
    pub fn put_raw(&self, key: &str, value: &[u8]) {
        lock(&self.shared.map).insert(key.to_owned(), value.to_vec());
    }

    /// Adds `delta` to the counter at `key` past the triggers (another request's increment);
    /// returns the sum.
    pub fn add(&self, key: &str, delta: i64) -> i64 {
        self.add_to(&mut lock(&self.shared.map), key, delta)
            .expect("a counter")
    }

    /// The counter at `key` (0 when absent).
    pub fn counter(&self, key: &str) -> i64 {
        self.add(key, 0)
    }

    fn add_to(&self, map: &mut Map, key: &str, delta: i64) -> Result<i64, store::Error> {
        let old = match map.get(key) {
            None => 0,
            Some(bytes) => self
                .read_counter(bytes)
                .ok_or_else(|| store::Error::Other(format!("`{key}` does not hold a counter")))?,
        };
        let sum = if self.flavour == Flavour::NoAtomics {
            delta
        } else {
            old + delta
        };
        let bytes = match self.flavour {
            Flavour::SpinRedis => sum.to_string().into_bytes(),
            _ => sum.to_le_bytes().to_vec(),
        };
        map.insert(key.to_owned(), bytes);
        Ok(sum)
    }

    fn read_counter(&self, bytes: &[u8]) -> Option<i64> {
        match self.flavour {
            Flavour::SpinRedis => std::str::from_utf8(bytes).ok()?.parse().ok(),
            _ => Some(i64::from_le_bytes(bytes.try_into().ok()?)),
        }
    }

    /// One call: triggers before, the change under the map's mutex, triggers after.
    fn call<T>(
        &self,
        op: Op,
        key: &str,
        apply: impl FnOnce(&mut Map) -> Result<T, store::Error>,
    ) -> Result<T, store::Error> {
        lock(&self.shared.calls).push((op, key.to_owned()));
        self.fire(op, key, When::Before)?;
        let answer = apply(&mut lock(&self.shared.map));
        self.fire(op, key, When::After)?;
        // Lets threads sharing the fake interleave between calls, as requests do.
        std::thread::yield_now();
        answer
    }

    fn fire(&self, op: Op, key: &str, when: When) -> Result<(), store::Error> {
        let due: Vec<Action> = {
            let mut triggers = lock(&self.shared.triggers);
            let mut due = Vec::new();
            let mut i = 0;
            while i < triggers.len() {
                let t = &mut triggers[i];
                if t.op != op || t.key != key || t.when != when {
                    i += 1;
                } else if t.skip > 0 {
                    t.skip -= 1;
                    i += 1;
                } else {
                    due.push(triggers.remove(i).action);
                }
            }
            due
        };
        let mut answer = Ok(());
        for action in due {
            match action {
                Action::Fail => {
                    answer = Err(store::Error::Other(format!(
                        "injected fault: {op:?} `{key}`"
                    )));
                }
                Action::Run(step) => step(),
            }
        }
        answer
    }
}

impl Backend for FakeBucket {
    type Cas = FakeCas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, store::Error> {
        self.call(Op::Get, key, |m| Ok(m.get(key).cloned()))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), store::Error> {
        self.call(Op::Set, key, |m| {
            m.insert(key.to_owned(), value.to_vec());
            Ok(())
        })
    }

    fn delete(&self, key: &str) -> Result<(), store::Error> {
        self.call(Op::Delete, key, |m| {
            m.remove(key);
            Ok(())
        })
    }

    fn exists(&self, key: &str) -> Result<bool, store::Error> {
        self.call(Op::Get, key, |m| Ok(m.contains_key(key)))
    }

    fn list_keys(&self, _cursor: Option<&str>) -> Result<store::KeyResponse, store::Error> {
        let keys = self.keys();
        Ok(store::KeyResponse { keys, cursor: None })
    }

    fn get_many(&self, keys: &[String]) -> Result<Vec<Found>, store::Error> {
        self.call(Op::GetMany, &keys.join(","), |m| {
            if self.flavour == Flavour::SpinRedis {
                return Err(store::Error::Other("KEYS is not allowed".into()));
            }
            Ok(keys
                .iter()
                .map(|k| (k.clone(), m.get(k).cloned()))
                .collect())
        })
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, store::Error> {
        self.call(Op::Increment, key, |m| self.add_to(m, key, delta))
    }

    fn cas(&self, key: &str) -> Result<FakeCas, store::Error> {
        Ok(FakeCas {
            bucket: self.clone(),
            key: key.to_owned(),
            read: Mutex::new(None),
        })
    }
}

/// A compare-and-swap handle on a [`FakeBucket`]'s key.
pub struct FakeCas {
    bucket: FakeBucket,
    key: String,
    /// What [`CasHandle::current`] read (`None`: absent, or not read).
    read: Mutex<Option<Vec<u8>>>,
}

impl CasHandle for FakeCas {
    fn current(&self) -> Result<Option<Vec<u8>>, store::Error> {
        let value = self
            .bucket
            .call(Op::Current, &self.key, |m| Ok(m.get(&self.key).cloned()))?;
        lock(&self.read).clone_from(&value);
        Ok(value)
    }

    fn swap(self, value: &[u8]) -> Result<(), SwapError<Self>> {
        let read = lock(&self.read).take();
        let flavour = self.bucket.flavour;
        let written = self.bucket.call(Op::Swap, &self.key, |m| {
            let holds = m.get(&self.key) == read.as_ref();
            let upsert = flavour == Flavour::SpinSqlite && read.is_none();
            if holds || upsert {
                m.insert(self.key.clone(), value.to_vec());
            }
            let reported = match flavour {
                Flavour::SpinRedis | Flavour::NoAtomics => false,
                Flavour::Faithful | Flavour::SpinSqlite => holds || upsert,
            };
            Ok(reported)
        });
        match written {
            Ok(true) => Ok(()),
            Ok(false) => Err(SwapError::Lost(self)),
            Err(e) => Err(SwapError::Store(e)),
        }
    }
}
