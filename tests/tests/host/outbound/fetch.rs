//! `guest_kit::fetch` inside a real component (the testbed's `/get`) on a real host: a file
//! fetched from an allowed address, redirects followed within their bound and each hop
//! re-checked by the host, the body cap, and the deadline against a server that never
//! answers. The servers are plain TCP listeners that write their answers by hand, so a test
//! controls every byte (a chunked body with no length, a head that never comes).

use super::{form_encode, testbed};
use e2e_tests::{Client, temp_dir};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The file `/file` serves: 3,000 bytes of text with a recognisable start.
fn file_body() -> Vec<u8> {
    let mut body = b"FILE-START ".to_vec();
    body.resize(3000, b'x');
    body
}

/// A server on a free loopback port. Paths: `/file` (200, `image/png`, with its length),
/// `/chunked` (the same bytes chunked, no length), `/hop/N` (a relative redirect to
/// `/hop/N-1`, `/hop/0` answers 200), `/away` (a redirect to `away_to`), `/slow` (200 after
/// 1.5 s), `/silent` (reads the request, never answers). Counts requests per path and keeps
/// the last request head.
struct Files {
    port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    last_head: Arc<Mutex<String>>,
}

impl Files {
    async fn start(away_to: Option<String>) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let last_head = Arc::new(Mutex::new(String::new()));
        let (counted, kept) = (hits.clone(), last_head.clone());
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let (hits, head_kept, away) = (counted.clone(), kept.clone(), away_to.clone());
                tokio::spawn(async move {
                    let head = read_head(&mut stream).await;
                    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
                    *head_kept.lock().unwrap() = head;
                    answer(&mut stream, &path, away.as_deref()).await;
                });
            }
        });
        Self {
            port,
            hits,
            last_head,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    fn last_head(&self) -> String {
        self.last_head.lock().unwrap().clone()
    }
}

async fn read_head(stream: &mut tokio::net::TcpStream) -> String {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

async fn answer(stream: &mut tokio::net::TcpStream, path: &str, away: Option<&str>) {
    let reply = |status: &str, headers: &str, body: &[u8]| {
        let mut out = format!(
            "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body);
        out
    };
    let out = match path {
        "/file" => reply("200 OK", "content-type: image/png\r\n", &file_body()),
        "/chunked" => {
            let body = file_body();
            let mut out =
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                    .to_vec();
            for chunk in body.chunks(500) {
                out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                out.extend_from_slice(chunk);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
            out
        }
        "/hop/0" => reply("200 OK", "", b"arrived"),
        "/away" => reply(
            "302 Found",
            &format!("location: {}\r\n", away.unwrap_or("/")),
            b"",
        ),
        "/slow" => {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            reply("200 OK", "", b"slow")
        }
        "/silent" => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            return;
        }
        p if p.starts_with("/hop/") => {
            let n: usize = p["/hop/".len()..].parse().unwrap_or(0);
            let location = format!("location: {}\r\n", n.saturating_sub(1));
            reply("302 Found", &location, b"")
        }
        _ => reply("404 Not Found", "", b"no such file"),
    };
    let _ = stream.write_all(&out).await;
    let _ = stream.shutdown().await;
}

/// The testbed's `/get` of `urls` (several: fetched at once), at most `max` bytes, within
/// `ms` milliseconds.
fn get(h: &e2e_tests::Host, urls: &[String], max: u64, ms: u64) -> String {
    let query: Vec<String> = urls
        .iter()
        .map(|u| format!("url={}", form_encode(u)))
        .collect();
    h.url(&format!("/get?{}&max={max}&ms={ms}", query.join("&")))
}

/// A file from an allowed address comes whole, with its type, asked for as this runtime.
#[tokio::test(flavor = "multi_thread")]
async fn a_served_file_is_fetched_whole_with_its_content_type() {
    let files = Files::start(None).await;
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[files.url("")]);
    let r = Client::new()
        .get(&get(&h, &[files.url("/file")], 1 << 20, 5000))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(v["length"], 3000, "{v}");
    assert_eq!(v["content_type"], "image/png", "{v}");
    assert_eq!(v["url"], files.url("/file"), "{v}");
    assert!(
        v["text"].as_str().unwrap().starts_with("FILE-START x"),
        "{v}"
    );
    let head = files.last_head().to_ascii_lowercase();
    assert!(head.starts_with("get /file http/1.1"), "{head}");
    assert!(
        head.contains("user-agent: lightweight-model-runtime"),
        "{head}"
    );
    assert!(head.contains("accept: */*"), "{head}");
}

/// Relative redirects are followed up to three hops; a chain of five stops after the
/// fourth answer, never asking for the fifth hop's target.
#[tokio::test(flavor = "multi_thread")]
async fn redirects_are_followed_up_to_three_hops_and_no_further() {
    let files = Files::start(None).await;
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[files.url("")]);
    let c = Client::new();
    for n in [2, 3] {
        let r = c
            .get(&get(&h, &[files.url(&format!("/hop/{n}"))], 1024, 5000))
            .await;
        assert_eq!(r.status, 200, "{n} hops: {}", r.text());
        let v = r.value();
        assert_eq!(v["url"], files.url("/hop/0"), "{v}");
        assert_eq!(v["text"], "arrived", "{v}");
    }
    assert_eq!(files.hits("/hop/0"), 2);
    let r = c.get(&get(&h, &[files.url("/hop/5")], 1024, 5000)).await;
    let body = r.assert_error(400, "fetch_failed");
    assert!(
        body.error.contains("redirected more than 3 times"),
        "{}",
        body.error
    );
    assert!(body.error.contains("/hop/5"), "{}", body.error);
    let asked: Vec<usize> = (0..=5).map(|n| files.hits(&format!("/hop/{n}"))).collect();
    // The chains from 2 and 3 asked for each of their hops; the chain from 5 for /hop/5 to
    // /hop/2, whose redirect was the fourth.
    assert_eq!(asked, vec![2, 2, 3, 2, 1, 1], "requests per hop");
}

/// A redirect from an allowed server to one not allowed is refused at that hop by the host:
/// the second server never sees a request, and the caller is told which host:port and how
/// the fetch got there.
#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_a_host_not_allowed_is_refused_at_the_hop() {
    let other = Files::start(None).await;
    let files = Files::start(Some(other.url("/file"))).await;
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[files.url("")]);
    let r = Client::new()
        .get(&get(&h, &[files.url("/away")], 1 << 20, 5000))
        .await;
    let body = r.assert_error(400, "url_not_allowed");
    let e = &body.error;
    assert!(
        e.contains(&format!("may not reach 127.0.0.1:{}", other.port)),
        "{e}"
    );
    assert!(
        e.contains(&format!("redirected from {}", files.url("/away"))),
        "{e}"
    );
    assert!(e.contains("allowed_outbound_hosts"), "{e}");
    assert_eq!((files.hits("/away"), other.hits("/file")), (1, 0));
}

/// A body over the cap is refused, by its declared length or, with none, as it is read.
#[tokio::test(flavor = "multi_thread")]
async fn a_body_over_the_cap_is_refused() {
    let files = Files::start(None).await;
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[files.url("")]);
    let c = Client::new();
    let body = c
        .get(&get(&h, &[files.url("/file")], 1000, 5000))
        .await
        .assert_error(400, "media_too_large");
    assert!(
        body.error.contains("3000 bytes, over the limit of 1000"),
        "{}",
        body.error
    );
    let body = c
        .get(&get(&h, &[files.url("/chunked")], 1000, 5000))
        .await
        .assert_error(400, "media_too_large");
    assert!(
        body.error.contains("more than the limit of 1000"),
        "{}",
        body.error
    );
    // At the cap exactly, and chunked: the whole file.
    let r = c.get(&get(&h, &[files.url("/chunked")], 3000, 5000)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.value()["length"], 3000);
}

/// A server that takes the request and never answers: the fetch gives up at its deadline,
/// and the caller's answer comes soon after it.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_is_given_up_at_the_deadline() {
    let files = Files::start(None).await;
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[files.url("")]);
    let started = Instant::now();
    let r = Client::new()
        .get(&get(&h, &[files.url("/silent")], 1024, 1500))
        .await;
    let took = started.elapsed();
    let body = r.assert_error(400, "fetch_failed");
    assert!(body.error.contains("gave up fetching"), "{}", body.error);
    assert!(body.error.contains("within the 1.5 s"), "{}", body.error);
    assert!(
        took >= Duration::from_millis(1400),
        "gave up early: {took:?}"
    );
    assert!(took < Duration::from_millis(4500), "gave up late: {took:?}");
    assert_eq!(files.hits("/silent"), 1);
}

/// Several URLs are fetched at once: three answers that each take 1.5 s come in about
/// 1.5 s, not 4.5, and a bad URL among them fails alone.
#[tokio::test(flavor = "multi_thread")]
async fn several_urls_are_awaited_together_and_fail_alone() {
    let files = Files::start(None).await;
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[files.url("")]);
    let mut urls: Vec<String> = (0..3).map(|_| files.url("/slow")).collect();
    urls.push("ftp://example.org/a.png".to_owned());
    urls.push(files.url("/missing"));
    let r = Client::new().get(&get(&h, &urls, 1024, 10_000)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    let took = v["took_ms"].as_u64().unwrap();
    assert!(
        (1400..3500).contains(&took),
        "not awaited together: {took} ms"
    );
    let results = v["results"].as_array().unwrap();
    for slow in &results[..3] {
        assert_eq!(slow["fetched"]["text"], "slow", "{v}");
    }
    assert_eq!(results[3]["error_code"], "invalid_field", "{v}");
    assert_eq!(results[4]["error_code"], "fetch_failed", "{v}");
    assert!(
        results[4]["error"]
            .as_str()
            .unwrap()
            .contains("answered HTTP 404"),
        "{v}"
    );
    assert_eq!(files.hits("/slow"), 3);
}

/// The same fetches under the real Spin, given the same `allowed_outbound_hosts`: the file
/// comes, a redirect chain is followed, a hop to a host not allowed is refused, and a
/// silent server is given up at the deadline, as under runtime-host.
#[tokio::test(flavor = "multi_thread")]
async fn spin_fetches_follows_refuses_and_gives_up_alike() {
    let Some(spin) = e2e_tests::spin::spin_or_skip("guest_kit::fetch under Spin") else {
        return;
    };
    let other = Files::start(None).await;
    let files = Files::start(Some(other.url("/file"))).await;
    let work = temp_dir();
    let manifest = work.path().join("spin.toml");
    let source = e2e_tests::component("testbed").display().to_string();
    std::fs::write(
        &manifest,
        format!(
            "spin_manifest_version = 2\n\n[application]\nname = \"fetch\"\nversion = \"1.0.0\"\n\n\
             [[trigger.http]]\nroute = \"/...\"\ncomponent = \"testbed\"\n\n\
             [component.testbed]\nsource = {}\nkey_value_stores = [\"default\"]\n\
             allowed_outbound_hosts = [{:?}]\n",
            serde_json::to_string(&source).unwrap(),
            files.url(""),
        ),
    )
    .unwrap();
    let app = e2e_tests::spin::SpinApp::up_manifest(&spin, &manifest, "unused", "/ok");
    let via = |url: &str, ms: u64| {
        format!(
            "{}/get?url={}&max=100000&ms={ms}",
            app.base_url(),
            form_encode(url)
        )
    };
    let c = Client::new();
    let r = c.get(&via(&files.url("/file"), 5000)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.value()["length"], 3000);
    let r = c.get(&via(&files.url("/hop/2"), 5000)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.value()["url"], files.url("/hop/0"));
    let body = c
        .get(&via(&files.url("/away"), 5000))
        .await
        .assert_error(400, "url_not_allowed");
    assert!(
        body.error.contains(&format!("127.0.0.1:{}", other.port)),
        "{}",
        body.error
    );
    let started = Instant::now();
    let body = c
        .get(&via(&files.url("/silent"), 1500))
        .await
        .assert_error(400, "fetch_failed");
    assert!(body.error.contains("gave up fetching"), "{}", body.error);
    assert!(started.elapsed() < Duration::from_millis(4500));
    assert_eq!(other.hits("/file"), 0);
}
