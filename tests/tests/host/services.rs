//! Host services components rely on: key-value atomics under concurrency, writes that
//! survive a kill, stores whose swaps cannot be trusted. (Variables and mounts: `grants`.)

use e2e_tests::{Client, HostBuilder, component, temp_dir};
use std::collections::HashSet;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn increments_and_compare_and_swap_are_atomic_across_requests() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("testbed"), dir.path()).start();
    let c = Client::new();
    let incr: Vec<_> = (0..200)
        .map(|_| {
            let (c, url) = (c.clone(), h.url("/kv/incr?key=hits"));
            tokio::spawn(async move {
                c.post_raw(&url, vec![], None).await.value()["value"]
                    .as_i64()
                    .unwrap()
            })
        })
        .collect();
    let appends: Vec<_> = (0..64)
        .map(|i| {
            let (c, url) = (c.clone(), h.url(&format!("/kv/append?key=list&item=i{i}")));
            tokio::spawn(async move { c.post_raw(&url, vec![], None).await.status })
        })
        .collect();
    let mut seen = HashSet::new();
    for t in incr {
        assert!(
            seen.insert(t.await.unwrap()),
            "every increment returns a distinct value"
        );
    }
    assert_eq!(seen, (1..=200).collect());
    for t in appends {
        assert_eq!(t.await.unwrap(), 200);
    }
    let list = c.get(&h.url("/kv/get?key=list")).await.value();
    let items: HashSet<_> = list["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(items.len(), 64, "no append was lost or duplicated");
}

/// A record that changes under every attempt to update it: a bounded number of attempts, with
/// pauses between them, then 503 `store_contention` with `Retry-After`; never a retry storm.
#[tokio::test(flavor = "multi_thread")]
async fn an_update_that_always_loses_its_race_gives_up_with_503_after_bounded_attempts() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("testbed"), dir.path()).start();
    let c = Client::new();
    let started = std::time::Instant::now();
    let r = c
        .post_raw(&h.url("/kv/contend?key=hot"), vec![], None)
        .await;
    let took = started.elapsed();
    let body = r.assert_error(503, "store_contention");
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(body.error.contains("96 attempts"), "{}", body.error);
    // The record shows how many attempts were made: 96, not thousands.
    let attempts = c.get(&h.url("/kv/get?key=hot")).await.value()["value"].clone();
    assert_eq!(attempts, 96);
    // The pauses between attempts are bounded (94 of at most 2-16 ms each).
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

/// Many writers on one record with no cap on instances: every write is either kept exactly
/// once (200) or refused whole (503 `store_contention`), never lost or doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn heavy_contention_loses_no_write_and_doubles_none() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("testbed"), dir.path())
        .arg("--max-instances")
        .arg("0")
        .start();
    let c = Client::new();
    let appends: Vec<_> = (0..128)
        .map(|i| {
            let (c, url) = (c.clone(), h.url(&format!("/kv/append?key=list&item=i{i}")));
            tokio::spawn(async move { (i, c.post_raw(&url, vec![], None).await) })
        })
        .collect();
    let mut kept = HashSet::new();
    for t in appends {
        let (i, r) = t.await.unwrap();
        match r.status {
            200 => {
                kept.insert(format!("i{i}"));
            }
            _ => {
                r.assert_error(503, "store_contention");
                assert_eq!(r.header("retry-after"), Some("1"));
            }
        }
    }
    let list = c.get(&h.url("/kv/get?key=list")).await.value();
    let items: Vec<String> = list["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(items.len(), kept.len(), "no append doubled");
    assert_eq!(
        items.into_iter().collect::<HashSet<_>>(),
        kept,
        "no kept append lost"
    );
    println!("128 concurrent appends to one record: {} kept", kept.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_writes_survive_kill_9() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("testbed"), dir.path()).start();
    let url = h.base_url();
    // 16 writers increment their own counters as fast as they are acknowledged (their writes
    // share commits), until the host is killed under them.
    let writers: Vec<_> = (0..16)
        .map(|i| {
            let url = format!("{url}/kv/incr?key=writer{i}");
            tokio::spawn(async move {
                let c = Client::new();
                let mut acknowledged = 0;
                while let Ok(r) = c.try_send(hyper::Method::POST, &url, None, &[]).await {
                    if r.status != 200 {
                        break;
                    }
                    acknowledged = r.value()["value"].as_i64().unwrap();
                }
                acknowledged
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    h.kill9();
    let mut acknowledged = Vec::new();
    for w in writers {
        acknowledged.push(w.await.unwrap());
    }
    assert!(
        acknowledged.iter().all(|&n| n > 0),
        "every writer got writes through before the kill: {acknowledged:?}"
    );

    let h = HostBuilder::new(component("testbed"), dir.path()).start();
    let c = Client::new();
    for (i, &acked) in acknowledged.iter().enumerate() {
        // One more increment reads back what survived: stored + 1.
        let r = c
            .post_raw(&h.url(&format!("/kv/incr?key=writer{i}")), vec![], None)
            .await;
        let stored = r.value()["value"].as_i64().unwrap() - 1;
        assert!(
            stored >= acked,
            "writer {i}: {acked} was acknowledged before kill -9, but {stored} survived"
        );
    }
}

/// A registration of `model` by this test process.
fn registration(model: &str) -> serde_json::Value {
    serde_json::json!({
        "app_name": "e2e", "app_version": "1.2.0", "model_name": model,
        "process_id": std::process::id(), "preferred_port": null,
        "reason": "test", "metadata": {}
    })
}

/// A store whose compare-and-swap writes and then reports failure (Spin 4.0.2's Redis store)
/// is found out by the first update, which takes a lock made of increments instead of
/// retrying swaps until it gives up: the registration is granted at once, exactly once.
#[tokio::test(flavor = "multi_thread")]
async fn a_store_whose_swaps_cannot_be_trusted_still_registers_at_once() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path())
        .arg("--simulate-spin-swap")
        .arg("redis")
        .start();
    let c = Client::new();
    let sent = std::time::Instant::now();
    let r = c
        .post_json(&h.url("/register"), &registration("m"), None)
        .await;
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = c.get(&h.url("/registry")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.value()["count"], 1);
    // The lock was released: a second registration is granted at once too.
    let sent = std::time::Instant::now();
    let r = c
        .post_json(&h.url("/register"), &registration("n"), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(c.get(&h.url("/registry")).await.value()["count"], 2);
}

/// The lock of a store whose swaps cannot be trusted, left held by a request that died (a
/// timestamp a minute old on the counter): the next update breaks it and goes on. A fresh
/// timestamp (a live holder) is waited for, never broken: the update gives up with 503.
#[tokio::test(flavor = "multi_thread")]
async fn a_lock_left_by_a_dead_request_is_broken_and_a_live_one_is_not() {
    e2e_tests::redis::assert_not_in_redis_pass("the SQLite file");
    let dir = temp_dir();
    let registry = || {
        HostBuilder::registry(dir.path())
            .arg("--simulate-spin-swap")
            .arg("redis")
            .start()
    };
    let body = registration;
    let c = Client::new();
    let h = registry();
    let r = c.post_json(&h.url("/register"), &body("a"), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    h.stop();
    // The lock's counter beside the lease table, whatever prefix the host keeps its keys under.
    let db = rusqlite::Connection::open(dir.path().join("sqlite_key_value.db")).unwrap();
    let leases: String = db
        .query_row(
            "SELECT key FROM spin_key_value WHERE key LIKE '%registry/leases' \
             AND key NOT LIKE '%guest-kit/lock/%'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    let lock = leases.replace("registry/leases", "guest-kit/lock/registry/leases");
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let hold = |held_since_ms: i64| {
        db.execute(
            "INSERT INTO spin_key_value (store, key, value) VALUES ('default', ?1, ?2) \
             ON CONFLICT(store, key) DO UPDATE SET value = ?2",
            rusqlite::params![lock, held_since_ms.to_le_bytes().to_vec()],
        )
        .unwrap();
        let held: Vec<u8> = db
            .query_row(
                "SELECT value FROM spin_key_value WHERE key = ?1",
                [&lock],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(held, held_since_ms.to_le_bytes(), "{lock}");
    };

    hold(now_ms - 60_000);
    let h = registry();
    let sent = std::time::Instant::now();
    let r = c.post_json(&h.url("/register"), &body("b"), None).await;
    assert_eq!(
        r.status,
        200,
        "the dead holder's lock was not broken: {}",
        r.text()
    );
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(c.get(&h.url("/registry")).await.value()["count"], 2);
    h.stop();

    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    hold(now_ms); // a holder that took the lock just now
    let h = registry();
    let r = c.post_json(&h.url("/register"), &body("c"), None).await;
    r.assert_error(503, "store_contention");
    assert_eq!(
        c.get(&h.url("/registry")).await.value()["count"],
        2,
        "nothing changed"
    );
}

/// `list-keys` pages through thousands of keys (SQLite pages of 1,000; Redis SCAN cursors),
/// each key once, only those asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn listing_keys_pages_through_thousands_each_once() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("testbed"), dir.path()).start();
    let c = Client::new();
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let (c, next, base) = (c.clone(), next.clone(), h.url("/kv/incr?key="));
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= 2510 {
                        return;
                    }
                    let key = if i < 2500 {
                        format!("page/k{i:05}")
                    } else {
                        format!("other/k{i}")
                    };
                    let r = c.post_raw(&format!("{base}{key}"), vec![], None).await;
                    assert_eq!(r.status, 200, "{}", r.text());
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    let keys: Vec<String> = serde_json::from_value(
        c.get(&h.url("/kv/keys?prefix=page/")).await.value()["keys"].clone(),
    )
    .unwrap();
    let expected: Vec<String> = (0..2500).map(|i| format!("page/k{i:05}")).collect();
    assert_eq!(keys, expected);
}
