//! The contract every [`Store`] keeps, as one suite run in-process against each
//! implementation (and against the wrappers, which must not change what a call means): the
//! end-to-end Redis pass checks the components on top; this checks the seam itself.
//!
//! Redis comes from a private `redis-server` (`local-redis`); where it is not installed the
//! Redis cases say SKIPPED, unless `E2E_REQUIRE_REDIS=1` (set by `cargo xtask test` once it
//! has Redis), where they fail.

use super::redis::RedisStore;
use super::sqlite::{KvDatabase, SqliteStore};
use super::store::{Store, Swap};
use super::turns::Turns;
use super::wrap::StoreWithHook;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every case, against `store` (empty).
async fn keeps_the_contract(store: Arc<dyn Store>) {
    reads_back_what_it_wrote(&*store).await;
    batches_are_whole_and_in_order(&*store).await;
    lists_every_key_once_in_pages(&*store).await;
    increments_atomically(store.clone()).await;
    swaps_only_from_the_value_seen(&*store).await;
    swaps_lose_no_update_under_races(&[store]).await;
}

async fn reads_back_what_it_wrote(store: &dyn Store) {
    assert_eq!(store.get("k").await.unwrap(), None);
    assert!(!store.exists("k").await.unwrap());
    store.set("k", b"v1").await.unwrap();
    store.set("k", b"v2").await.unwrap();
    assert_eq!(store.get("k").await.unwrap().as_deref(), Some(&b"v2"[..]));
    assert!(store.exists("k").await.unwrap());
    // Any bytes, the empty value included, read back as written.
    let binary: Vec<u8> = (0..=255).collect();
    store.set("bin", &binary).await.unwrap();
    assert_eq!(store.get("bin").await.unwrap(), Some(binary));
    store.set("empty", b"").await.unwrap();
    assert_eq!(store.get("empty").await.unwrap(), Some(Vec::new()));
    store.delete("k").await.unwrap();
    assert!(!store.exists("k").await.unwrap());
    // Deleting what is not there is no error.
    store.delete("k").await.unwrap();
}

async fn batches_are_whole_and_in_order(store: &dyn Store) {
    let entries: Vec<_> = (0..5).map(|i| (format!("b/{i}"), vec![i])).collect();
    store.set_many(&entries).await.unwrap();
    let keys = ["b/3", "b/missing", "b/0"].map(String::from);
    assert_eq!(
        store.get_many(&keys).await.unwrap(),
        [Some(vec![3]), None, Some(vec![0])]
    );
    store.delete_many(&keys).await.unwrap();
    let all: Vec<String> = (0..5).map(|i| format!("b/{i}")).collect();
    let left = store.get_many(&all).await.unwrap();
    assert_eq!(
        left,
        [None, Some(vec![1]), Some(vec![2]), None, Some(vec![4])]
    );
    // Empty batches are no error.
    store.set_many(&[]).await.unwrap();
    store.delete_many(&[]).await.unwrap();
    assert!(store.get_many(&[]).await.unwrap().is_empty());
}

async fn lists_every_key_once_in_pages(store: &dyn Store) {
    let wanted: BTreeSet<String> = (0..2500).map(|i| format!("page/{i:05}")).collect();
    let entries: Vec<_> = wanted.iter().map(|k| (k.clone(), vec![1])).collect();
    store.set_many(&entries).await.unwrap();
    // Neighbours that must not be listed, and glob characters taken literally.
    let others = ["pagf/1", "pag", "x*[1]?", "x*[1]?/in"].map(String::from);
    let others: Vec<_> = others.into_iter().map(|k| (k, vec![2])).collect();
    store.set_many(&others).await.unwrap();
    let (seen, pages) = walk(store, "page/").await;
    assert_eq!(seen, wanted);
    assert!(pages > 1, "2,500 keys come in more than one page");
    let (glob, _) = walk(store, "x*[1]?").await;
    assert_eq!(
        glob,
        BTreeSet::from(["x*[1]?".to_owned(), "x*[1]?/in".to_owned()])
    );
}

/// Every key under `prefix`, walking the pages to the end, and how many pages it took.
async fn walk(store: &dyn Store, prefix: &str) -> (BTreeSet<String>, usize) {
    let (mut seen, mut pages) = (BTreeSet::new(), 0);
    let mut cursor: Option<String> = None;
    loop {
        let (keys, next) = store.list_keys(prefix, cursor.as_deref()).await.unwrap();
        pages += 1;
        seen.extend(keys);
        match next {
            Some(c) => cursor = Some(c),
            None => return (seen, pages),
        }
        assert!(pages < 10_000, "the walk ends");
    }
}

async fn increments_atomically(store: Arc<dyn Store>) {
    assert_eq!(store.increment("n", 5).await.unwrap(), 5);
    assert_eq!(store.increment("n", -7).await.unwrap(), -2);
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                for _ in 0..25 {
                    store.increment("n", 1).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(store.increment("n", 0).await.unwrap(), 32 * 25 - 2);
    // A value that is not a counter is refused, and left alone.
    store.set("text", b"hello").await.unwrap();
    assert!(store.increment("text", 1).await.is_err());
    assert_eq!(
        store.get("text").await.unwrap().as_deref(),
        Some(&b"hello"[..])
    );
}

async fn swaps_only_from_the_value_seen(store: &dyn Store) {
    assert_eq!(
        store.compare_and_swap("c", None, b"1").await.unwrap(),
        Swap::Done
    );
    // A conflict names the value that won.
    assert_eq!(
        store.compare_and_swap("c", None, b"2").await.unwrap(),
        Swap::Conflict(Some(b"1".to_vec()))
    );
    assert_eq!(
        store.compare_and_swap("c", Some(b"0"), b"2").await.unwrap(),
        Swap::Conflict(Some(b"1".to_vec()))
    );
    // The handle form: a lost swap hands back a handle at the winner's value.
    let cas = store.begin_swap("c").await.unwrap();
    assert_eq!(cas.expected.as_deref(), Some(&b"1"[..]));
    store.set("c", b"9").await.unwrap();
    let retry = store.swap(cas, b"2").await.unwrap().expect_err("lost");
    assert_eq!(retry.expected.as_deref(), Some(&b"9"[..]));
    store.swap(retry, b"10").await.unwrap().expect("won");
    assert_eq!(store.get("c").await.unwrap().as_deref(), Some(&b"10"[..]));
    // A deleted record is absent again, not its old value.
    store.delete("c").await.unwrap();
    assert_eq!(
        store
            .compare_and_swap("c", Some(b"10"), b"3")
            .await
            .unwrap(),
        Swap::Conflict(None)
    );
}

/// Read-modify-write through handles from many tasks at once, spread over `hosts` (handles on
/// one store, each with its own wrappers, as separate hosts would hold): every update lands
/// once.
async fn swaps_lose_no_update_under_races(hosts: &[Arc<dyn Store>]) {
    let (tasks, each) = (16, 10);
    let workers: Vec<_> = (0..tasks)
        .map(|task| {
            let store = hosts[task % hosts.len()].clone();
            tokio::spawn(async move {
                for _ in 0..each {
                    let mut cas = store.begin_swap("race").await.unwrap();
                    loop {
                        let n: u64 = cas
                            .expected
                            .as_deref()
                            .map_or(0, |v| std::str::from_utf8(v).unwrap().parse().unwrap());
                        match store.swap(cas, (n + 1).to_string().as_bytes()).await {
                            Ok(Ok(())) => break,
                            Ok(Err(retry)) => cas = retry,
                            Err(e) => panic!("swap failed: {e:#}"),
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    let total = hosts[0].get("race").await.unwrap().unwrap();
    assert_eq!(
        std::str::from_utf8(&total).unwrap(),
        (tasks * each).to_string()
    );
}

fn temp_sqlite() -> (tempfile_dir::Dir, Arc<dyn Store>) {
    let dir = tempfile_dir::Dir::new("contract");
    let db = Arc::new(KvDatabase::open_in(&dir.0).unwrap());
    (dir, Arc::new(SqliteStore::new(db, "default")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_keeps_the_contract() {
    let (_dir, store) = temp_sqlite();
    keeps_the_contract(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_keeps_the_contract() {
    keeps_the_contract(Arc::new(super::memory::MemoryStore::default())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_labels_are_apart() {
    let dir = tempfile_dir::Dir::new("labels");
    let db = Arc::new(KvDatabase::open_in(&dir.0).unwrap());
    let (a, b) = (SqliteStore::new(db.clone(), "a"), SqliteStore::new(db, "b"));
    a.set("k", b"1").await.unwrap();
    assert_eq!(b.get("k").await.unwrap(), None);
    assert!(b.list_keys("", None).await.unwrap().0.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wrapped_stores_keep_the_contract() {
    let (_dir, store) = temp_sqlite();
    keeps_the_contract(StoreWithHook::around(store, Turns::default())).await;
}

/// A private Redis, or `None` (announced) where it is not installed and not required.
fn redis(test: &str) -> Option<(tempfile_dir::Dir, local_redis::RedisServer)> {
    if !local_redis::installed() {
        if std::env::var("E2E_REQUIRE_REDIS").is_ok_and(|v| v == "1") {
            panic!("{test}: redis-server is not installed, but E2E_REQUIRE_REDIS=1");
        }
        eprintln!("SKIPPED {test}: redis-server is not installed (apt-get install redis-server)");
        return None;
    }
    let dir = tempfile_dir::Dir::new("redis");
    let server = local_redis::RedisServer::start(&dir.0, Default::default()).unwrap();
    Some((dir, server))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_keeps_the_contract() {
    let Some((_dir, server)) = redis("redis_keeps_the_contract") else {
        return;
    };
    let store = RedisStore::connect(&format!("{}/0", server.url()))
        .await
        .unwrap();
    assert!(store.is_shared());
    // As `open` installs it: with turns.
    keeps_the_contract(StoreWithHook::around(Arc::new(store), Turns::default())).await;
}

/// Two hosts on one Redis, each taking turns among its own requests only: their swaps race
/// each other's, and every one that loses must retry from what Redis holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_shared_by_two_hosts_loses_no_update() {
    let Some((_dir, server)) = redis("redis_shared_by_two_hosts_loses_no_update") else {
        return;
    };
    let mut hosts: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::connect(&format!("{}/0", server.url()))
            .await
            .unwrap();
        hosts.push(StoreWithHook::around(Arc::new(store), Turns::default()));
    }
    swaps_lose_no_update_under_races(&hosts).await;
}

/// A compare-and-swap that lost to another host's write is never shown to the next request
/// as the record's value, even when that request begins while the lost swap is still on
/// its way to Redis: every handle starts from a value Redis held (wasi:keyvalue's
/// `cas.current`). Passing the turn on with the written value instead, which would save a
/// round trip, fails this.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_never_shows_a_swap_that_lost() {
    let Some((_dir, server)) = redis("redis_never_shows_a_swap_that_lost") else {
        return;
    };
    let url = format!("{}/0", server.url());
    let this: Arc<dyn Store> = StoreWithHook::around(
        Arc::new(RedisStore::connect(&url).await.unwrap()),
        Turns::default(),
    );
    let other = RedisStore::connect(&url).await.unwrap();
    for round in 0..20 {
        let key = format!("lost-{round}");
        let seen = this.begin_swap(&key).await.unwrap();
        other.set(&key, b"theirs").await.unwrap();
        let losing = {
            let this = this.clone();
            tokio::spawn(async move { this.swap(seen, b"ours").await.unwrap() })
        };
        let next = this.begin_swap(&key).await.unwrap();
        assert_eq!(
            next.expected.as_deref(),
            Some(&b"theirs"[..]),
            "round {round}: the next request saw a value Redis never held"
        );
        assert!(losing.await.unwrap().is_err(), "the first swap lost");
    }
}

/// The same with two hosts' turns over one store in memory (no Redis needed).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn turns_of_two_hosts_lose_no_update() {
    let shared: Arc<dyn Store> = Arc::new(super::memory::MemoryStore::default());
    let hosts = [
        StoreWithHook::around(shared.clone(), Turns::default()),
        StoreWithHook::around(shared, Turns::default()),
    ];
    swaps_lose_no_update_under_races(&hosts).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_down_is_a_prompt_error_naming_it() {
    let Some((_dir, mut server)) = redis("redis_down_is_a_prompt_error_naming_it") else {
        return;
    };
    let url = format!("{}/0", server.url());
    let store = RedisStore::connect(&url).await.unwrap();
    store.set("k", b"v").await.unwrap();
    server.kill();
    for call in 0..3 {
        let started = Instant::now();
        let err = match call {
            0 => store.get("k").await.map(drop),
            1 => store.set("k", b"w").await,
            _ => store.compare_and_swap("k", None, b"x").await.map(drop),
        }
        .expect_err("Redis is down");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "bounded: {:?}",
            started.elapsed()
        );
        assert!(format!("{err:#}").contains(&server.url()), "{err:#}");
    }
    // It comes back by itself once Redis does.
    server.restart().unwrap();
    let started = Instant::now();
    while store.get("k").await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "reconnects");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(store.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));
}

/// A temporary directory removed when dropped (the host has no tempfile dependency).
mod tempfile_dir {
    pub struct Dir(pub std::path::PathBuf);

    impl Dir {
        pub fn new(what: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("kv-{what}-{}", uuid::Uuid::new_v4().simple()));
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
