//! Warm instances: one instance serves requests one after another, and is replaced after
//! `--instance-reuse` requests, after `--instance-idle`, and after anything that may have left
//! it in a bad state (a trap, a deadline, the memory cap, a 5xx answer).
//!
//! The testbed's `/instance` answers how many requests its instance has served, counted in a
//! global: 1 means a fresh instance.

use e2e_tests::{Client, Host, HostBuilder, component, temp_dir};
use hyper::Method;
use std::time::Duration;

fn testbed(dir: &std::path::Path, extra: &[&str]) -> Host {
    extra
        .iter()
        .fold(HostBuilder::new(component("testbed"), dir), |b, a| {
            b.arg(*a)
        })
        .start()
}

/// Requests served by the instance that answered, this one included.
async fn served(c: &Client, h: &Host) -> u64 {
    let r = c.get(&h.url("/instance")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.value()["served"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn consecutive_requests_share_an_instance_until_the_reuse_limit() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--instance-reuse", "4"]);
    let c = Client::new();
    let seen: Vec<u64> = serial_counts(&c, &h, 10).await;
    assert_eq!(
        seen,
        [1, 2, 3, 4, 1, 2, 3, 4, 1, 2],
        "a fresh instance every 4 requests"
    );
}

/// A client that waits for each answer never finds the instance (or the one request slot)
/// still taken by its previous request, even when the guest works on after its answer is
/// out: the answer ends only once the instance is back in the pool. (A sized body used to
/// end with its last byte: the next request then got 503 `overloaded` here, or elsewhere a
/// fresh instance for no reason.) The same after an answer sent without its body (HEAD),
/// which the HTTP server sends without reading the body at all.
#[tokio::test(flavor = "multi_thread")]
async fn the_next_request_of_a_client_finds_the_instance_free() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-concurrency", "1"]);
    let c = Client::new();
    for (round, method) in (1..=4u64).zip([Method::GET, Method::HEAD].into_iter().cycle()) {
        let r = c
            .send(method.clone(), &h.url("/linger?ms=200"), None, &[])
            .await;
        assert_eq!(r.status, 200, "{method}: {}", r.text());
        if method == Method::HEAD {
            assert!(r.body.is_empty(), "no body in answer to HEAD");
            assert!(r.headers.contains_key("content-length"), "{:?}", r.headers);
        }
        let next = served(&c, &h).await;
        assert_eq!(next, 2 * round, "the same instance, reused after {method}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn instance_reuse_1_gives_every_request_a_fresh_instance() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--instance-reuse", "1"]);
    let c = Client::new();
    assert_eq!(serial_counts(&c, &h, 5).await, [1, 1, 1, 1, 1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_instance_is_dropped_after_instance_idle() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--instance-idle", "300ms"]);
    let c = Client::new();
    assert_eq!(serial_counts(&c, &h, 2).await, [1, 2]);
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(served(&c, &h).await, 1, "the idle instance was replaced");
}

/// After `failing` (which must fail with `status`/`code`), the next request gets a fresh
/// instance, where before it, the instance was being reused.
async fn next_instance_is_fresh_after(h: &Host, failing: &str, status: u16, code: &str) {
    let c = Client::new();
    let before = serial_counts(&c, h, 2).await;
    assert_eq!(before[1], before[0] + 1, "reused before {failing}");
    c.get(&h.url(failing)).await.assert_error(status, code);
    assert_eq!(served(&c, h).await, 1, "fresh instance after {failing}");
}

#[tokio::test(flavor = "multi_thread")]
async fn never_reused_after_a_trap() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &[]);
    next_instance_is_fresh_after(&h, "/trap", 500, "internal_error").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn never_reused_after_a_timeout() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--deadline", "500ms"]);
    next_instance_is_fresh_after(&h, "/loop", 500, "timeout").await;
    next_instance_is_fresh_after(&h, "/sleep?ms=5000", 500, "timeout").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn never_reused_after_a_500_answer() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &[]);
    next_instance_is_fresh_after(&h, "/fail", 500, "internal_error").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn never_reused_after_hitting_the_memory_cap() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-memory-mib", "64"]);
    next_instance_is_fresh_after(&h, "/alloc", 500, "memory_limit_exceeded").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_memory_cap_is_per_instance_and_the_crossing_request_gets_the_500() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-memory-mib", "100"]);
    let c = Client::new();
    // Each request keeps 30 MiB more in the same instance: the fourth crosses 100 MiB.
    for held in [30, 60, 90] {
        let r = c.get(&h.url("/grow?mib=30")).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.value()["held_mib"], held);
    }
    c.get(&h.url("/grow?mib=30"))
        .await
        .assert_error(500, "memory_limit_exceeded");
    // A fresh instance starts from nothing.
    let r = c.get(&h.url("/grow?mib=30")).await;
    assert_eq!(r.value()["held_mib"], 30, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn more_clients_than_slots_get_503_overloaded_never_a_failure() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-concurrency", "3"]);
    let c = Client::new();
    let clients: Vec<_> = (0..16)
        .map(|_| {
            let (c, url) = (c.clone(), h.url("/sleep?ms=400"));
            tokio::spawn(async move { c.get(&url).await })
        })
        .collect();
    let (mut ok, mut overloaded) = (0, 0);
    for t in clients {
        let r = t.await.unwrap();
        if r.status == 200 {
            ok += 1;
        } else {
            r.assert_error(503, "overloaded");
            assert_eq!(r.header("retry-after"), Some("1"));
            overloaded += 1;
        }
    }
    assert!((1..=3).contains(&ok), "at most 3 served at once, got {ok}");
    assert_eq!(ok + overloaded, 16);
    // Once the slots are free again, everyone is served, on the instances kept warm: each
    // has served one of the requests above already, so none counts its first request.
    for _ in 0..3 {
        let served = served(&c, &h).await;
        assert!(served >= 2, "a warm instance, not a fresh one ({served})");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn max_instances_makes_concurrent_requests_wait_for_a_free_instance() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-instances", "1"]);
    let c = Client::new();
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let (c, url) = (c.clone(), h.url("/sleep?ms=50"));
            tokio::spawn(async move { c.get(&url).await })
        })
        .collect();
    for t in clients {
        let r = t.await.unwrap();
        assert_eq!(r.status, 200, "queued, never refused: {}", r.text());
    }
    // One instance served all eight, one after another, and serves the next one too.
    assert_eq!(served(&c, &h).await, 9);
}

/// `n` requests to `/instance`, one after another.
async fn serial_counts(c: &Client, h: &Host, n: usize) -> Vec<u64> {
    let mut seen = Vec::with_capacity(n);
    for _ in 0..n {
        seen.push(served(c, h).await);
    }
    seen
}
