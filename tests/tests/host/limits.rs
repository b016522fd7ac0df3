//! The host's guarantees, tried with the misbehaving `testbed` component: traps, endless
//! loops, unbounded allocation, slow host calls, big bodies, overload and shutdown.

use e2e_tests::{Client, Host, HostBuilder, component, rss_mib, temp_dir};
use hyper::Method;
use std::time::{Duration, Instant};

fn testbed(dir: &std::path::Path, extra: &[&str]) -> Host {
    let mut b = HostBuilder::new(component("testbed"), dir);
    for a in extra {
        b = b.arg(*a);
    }
    b.start()
}

async fn assert_alive(c: &Client, h: &Host) {
    let r = c.get(&h.url("/ok")).await;
    assert_eq!(r.status, 200, "host keeps serving: {}", r.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn trap_is_500_internal_error_and_host_keeps_serving() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &[]);
    let c = Client::new();
    for _ in 0..3 {
        let e = c
            .get(&h.url("/trap"))
            .await
            .assert_error(500, "internal_error");
        assert!(e.error.contains("trap"), "{}", e.error);
        assert_alive(&c, &h).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn endless_loop_is_stopped_at_the_deadline_without_blocking_others() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--deadline", "1500ms"]);
    let c = Client::new();
    let started = Instant::now();
    let looping = tokio::spawn({
        let (c, url) = (c.clone(), h.url("/loop"));
        async move { c.get(&url).await }
    });
    // While one request spins, others are answered promptly.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..5 {
        let t = Instant::now();
        assert_alive(&c, &h).await;
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "blocked by the spinning guest: {:?}",
            t.elapsed()
        );
    }
    let r = looping.await.unwrap();
    r.assert_error(500, "timeout");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_alive(&c, &h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_host_call_is_stopped_at_the_deadline() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--deadline", "1s"]);
    let c = Client::new();
    c.get(&h.url("/sleep?ms=10000"))
        .await
        .assert_error(500, "timeout");
    let r = c.get(&h.url("/sleep?ms=50")).await;
    assert_eq!(r.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn unbounded_allocation_hits_the_memory_cap() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-memory-mib", "64"]);
    let c = Client::new();
    for _ in 0..3 {
        c.get(&h.url("/alloc"))
            .await
            .assert_error(500, "memory_limit_exceeded");
        assert_alive(&c, &h).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_bodies_are_refused_declared_or_streamed() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-body", "1000"]);
    let c = Client::new();
    let r = c.post_raw(&h.url("/echo"), vec![b'x'; 1000], None).await;
    assert_eq!(r.value()["length"], 1000, "a body at the cap is accepted");
    c.post_raw(&h.url("/echo"), vec![b'x'; 1001], None)
        .await
        .assert_error(413, "payload_too_large");
    // Chunked, with no Content-Length to go by.
    let chunks = futures::stream::iter((0..20).map(|_| {
        Ok::<_, std::io::Error>(hyper::body::Frame::data(bytes::Bytes::from(vec![
            b'y';
            100
        ])))
    }));
    let body = http_body_util::StreamBody::new(chunks);
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let req = hyper::Request::post(h.url("/echo")).body(body).unwrap();
    let resp = client.request(req).await.unwrap();
    assert_eq!(resp.status(), 413);
    assert_alive(&c, &h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn over_the_concurrency_limit_is_503_overloaded() {
    let dir = temp_dir();
    let h = testbed(dir.path(), &["--max-concurrency", "2"]);
    let c = Client::new();
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let (c, url) = (c.clone(), h.url("/sleep?ms=1500"));
            tokio::spawn(async move { c.get(&url).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let r = c.get(&h.url("/ok")).await;
    r.assert_error(503, "overloaded");
    assert_eq!(r.header("retry-after"), Some("1"));
    for b in busy {
        assert_eq!(b.await.unwrap().status, 200);
    }
    assert_alive(&c, &h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_finishes_requests_in_flight_then_exits_zero() {
    let dir = temp_dir();
    let mut h = testbed(dir.path(), &[]);
    let c = Client::new();
    let in_flight = tokio::spawn({
        let (c, url) = (c.clone(), h.url("/sleep?ms=1500"));
        async move { c.get(&url).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    h.terminate();
    let r = in_flight.await.unwrap();
    assert_eq!(
        r.status,
        200,
        "the request in flight completes: {}",
        r.text()
    );
    let status = h.wait(Duration::from_secs(20));
    assert!(status.success(), "{status:?}");
    let refused = Client::new()
        .try_send(Method::GET, &h.url("/ok"), None, &[])
        .await;
    assert!(refused.is_err(), "no longer listening");
}

#[tokio::test(flavor = "multi_thread")]
async fn compiled_components_are_cached_once_per_user_for_every_data_directory() {
    // The user's cache directory, as the platform names it (isolated for the test).
    let home_cache = temp_dir();
    // Optimized code only: a host stopped at once might otherwise leave only Winch's code
    // cached, and the next would add Cranelift's (tiers.rs tests that).
    let start = |data: &std::path::Path| {
        HostBuilder::new(component("testbed"), data)
            .env("XDG_CACHE_HOME", &home_cache.path().display().to_string())
            .arg("--optimized-only")
            .start()
    };
    let first_data = temp_dir();
    start(first_data.path()).stop();
    let cache = home_cache.path().join("runtime-host");
    let files = walk(&cache);
    assert!(
        !files.is_empty(),
        "cache at {} holds compiled artifacts",
        cache.display()
    );
    assert!(
        walk(&first_data.path().join("cache")).is_empty(),
        "not in the data directory"
    );
    // A new data directory reuses them: no new files appear.
    let second_data = temp_dir();
    start(second_data.path()).stop();
    assert_eq!(
        walk(&cache).len(),
        files.len(),
        "compiled again for a new data directory"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// 2,000 clients each send all of a declared 1 MiB body but its last byte and hold (issue
/// 45, section 3): what the host holds stays within `--max-held-bodies`, the clients past it
/// are answered 503 and closed, and `/health` keeps answering throughout.
#[tokio::test(flavor = "multi_thread")]
async fn held_bodies_are_bounded_and_health_keeps_answering() {
    use std::io::{Read, Write};
    let clients = e2e_tests::connections_allowed(2000);
    if clients < 256 {
        eprintln!(
            "SKIPPED held_bodies_are_bounded_and_health_keeps_answering: the file limit allows \
             {clients} connections (raise `ulimit -Hn`)"
        );
        return;
    }
    let dir = temp_dir();
    let h = HostBuilder::new(component("echo-model"), dir.path())
        .arg("--max-held-bodies")
        .arg("64")
        .arg("--deadline")
        .arg("60s")
        .start();
    let c = Client::new();
    assert_eq!(c.get(&h.url("/health")).await.status, 200);
    let before = rss_mib(h.pid());

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let health = {
        let (c, url, stop) = (c.clone(), h.url("/health"), stop.clone());
        tokio::spawn(async move {
            let (mut slowest, mut failed) = (Duration::ZERO, 0);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let started = Instant::now();
                failed += usize::from(c.get(&url).await.status != 200);
                slowest = slowest.max(started.elapsed());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (slowest, failed)
        })
    };

    let port = h.addr.port();
    let streams = e2e_tests::raw::hold_bodies(port, clients, 16, 1 << 20);
    let (held, refused) = e2e_tests::raw::held_and_refused(streams);
    let during = rss_mib(h.pid());

    // The held bodies are within the limit; the others were answered 503 and closed.
    assert!(
        during < before + 64 + 64,
        "{clients} clients took the host from {before} MiB to {during} MiB"
    );
    assert!(!refused.is_empty(), "no client was refused");
    // One more, sending its headers only, reads why (a refused client still uploading may
    // see its connection reset before it can read the answer).
    let mut probe = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    probe
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "POST /predict HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n\r\n",
        1 << 20
    );
    probe.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = probe.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.contains("overloaded") && answer.contains("--max-held-bodies"),
        "{answer}"
    );

    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (slowest, failed) = health.await.unwrap();
    assert_eq!(failed, 0, "/health failed while bodies were held");
    assert!(slowest < Duration::from_secs(1), "/health took {slowest:?}");

    // Once the clients go, what they held is given back: a body is taken again.
    drop((held, refused));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let body = serde_json::json!({"input_type": "tabular", "data": {"features": {"value": 1}}});
    let r = c.post_json(&h.url("/predict"), &body, None).await;
    assert_ne!(r.status, 503, "{}", r.text());
}
