//! The Redis store against guest-kit's lock of increments ([`super::guard`]), on a private
//! `redis-server`: its writes wait while a guest (under Spin) holds a record's lock, land once
//! it is released, and break a dead holder's residue by guest-kit's rules.

use super::RedisStore;
use crate::store::{Store, Swap};
use edge_api::kv_lock::{STALE_MS, lock_key};
use std::time::{Duration, Instant};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A private Redis in a directory of its own, removed when dropped; `None` where
/// redis-server is not installed (and not required).
struct Private {
    dir: std::path::PathBuf,
    server: local_redis::RedisServer,
}

impl Drop for Private {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn redis(test: &str) -> Option<Private> {
    if !local_redis::installed() {
        assert!(
            std::env::var("E2E_REQUIRE_REDIS").as_deref() != Ok("1"),
            "{test}: redis-server is not installed, but E2E_REQUIRE_REDIS=1"
        );
        eprintln!("SKIPPED {test}: redis-server is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("kv-lock-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = local_redis::RedisServer::start(&dir, Default::default()).unwrap();
    Some(Private { dir, server })
}

async fn connect(private: &Private) -> RedisStore {
    RedisStore::connect(&format!("{}/0", private.server.url()))
        .await
        .unwrap()
}

#[tokio::test]
async fn writes_wait_for_a_held_lock_and_land_after_its_release() {
    let Some(private) = redis("writes_wait") else {
        return;
    };
    let (store, guest) = (connect(&private).await, connect(&private).await);
    store.set("dialog/a", b"v1").await.unwrap();
    // A guest under Spin takes the lock, as guest-kit does: its timestamp on the counter.
    let taken = now_ms();
    assert_eq!(
        guest.increment(&lock_key("dialog/a"), taken).await.unwrap(),
        taken
    );
    let release = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The holder writes its change under the lock, then releases.
        guest.set_ignoring_lock("dialog/a", b"v2").await.unwrap();
        guest
            .increment(&lock_key("dialog/a"), -taken)
            .await
            .unwrap();
    };
    let started = Instant::now();
    let (swapped, ()) = tokio::join!(
        store.compare_and_swap("dialog/a", Some(b"v1"), b"mine"),
        release
    );
    assert!(started.elapsed() >= Duration::from_millis(250));
    // The swap waited for the holder and then saw its write: a conflict, not an overwrite.
    assert_eq!(swapped.unwrap(), Swap::Conflict(Some(b"v2".to_vec())));

    guest.increment(&lock_key("dialog/a"), taken).await.unwrap();
    let release = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        guest
            .increment(&lock_key("dialog/a"), -taken)
            .await
            .unwrap();
    };
    let (set, ()) = tokio::join!(store.set("dialog/a", b"plain"), release);
    set.unwrap();
    assert_eq!(store.get("dialog/a").await.unwrap().unwrap(), b"plain");
}

#[tokio::test]
async fn a_lock_held_past_the_wait_fails_the_write_naming_it() {
    let Some(private) = redis("held_past_the_wait") else {
        return;
    };
    let store = connect(&private).await;
    store.set("k", b"before").await.unwrap();
    store.increment(&lock_key("k"), now_ms()).await.unwrap();
    let e = store.delete("k").await.expect_err("the lock is held");
    assert!(e.to_string().contains("guest-kit/lock/k"), "{e}");
    let e = store
        .set_many(&[("k".into(), b"x".to_vec()), ("free".into(), b"y".to_vec())])
        .await
        .expect_err("one lock is held: all or nothing");
    assert!(e.to_string().contains("waited"), "{e}");
    assert_eq!(store.get("k").await.unwrap().unwrap(), b"before");
    assert_eq!(store.get("free").await.unwrap(), None);
    // Spin's own writes (the hook imitating them) do not wait.
    store.set_ignoring_lock("k", b"spin").await.unwrap();
}

#[tokio::test]
async fn residues_of_dead_holders_are_broken_by_guest_kits_rules() {
    let Some(private) = redis("residues") else {
        return;
    };
    let store = connect(&private).await;
    // One timestamp older than STALE_MS: a dead holder's, broken at once.
    let old = now_ms() - STALE_MS - 1_000;
    store.increment(&lock_key("one"), old).await.unwrap();
    store.set("one", b"written").await.unwrap();
    assert_eq!(store.increment(&lock_key("one"), 0).await.unwrap(), 0);

    // Two timestamps (a holder and a racer killed together): not one timestamp, so noted and
    // broken only once it has stood unchanged for STALE_MS.
    let two = 2 * now_ms();
    store.increment(&lock_key("two"), two).await.unwrap();
    let e = store.set("two", b"x").await.expect_err("a fresh residue");
    assert!(e.to_string().contains("guest-kit/lock/two"), "{e}");
    let note = store.get("guest-kit/lock/two/seen").await.unwrap().unwrap();
    assert!(
        String::from_utf8_lossy(&note).starts_with(&format!("[{two},")),
        "guest-kit's note: {}",
        String::from_utf8_lossy(&note)
    );
    // As if first seen STALE_MS ago (by a guest or by us).
    let since = now_ms() - STALE_MS - 1;
    store
        .set_ignoring_lock(
            "guest-kit/lock/two/seen",
            format!("[{two},{since}]").as_bytes(),
        )
        .await
        .unwrap();
    store.set("two", b"written").await.unwrap();
    assert_eq!(store.increment(&lock_key("two"), 0).await.unwrap(), 0);
    assert_eq!(store.get("two").await.unwrap().unwrap(), b"written");
}
