//! Outgoing HTTP from components (issue 56 §12): refused unless `allowed_outbound_hosts`
//! (here `--allow-outbound`) admits the URL's scheme, host and port, as Spin refuses it; a
//! loopback, private, link-local or metadata address reached only where named exactly, never
//! through a wildcard or a host name; redirects never followed by the host. Each refusal is
//! the component's error (`HttpRequestDenied`), a log line and a counter. The component is
//! the testbed's `/fetch`, on a real host; the addresses it calls are real servers that count
//! what reaches them.

mod fetch;

use e2e_tests::{Client, HostBuilder, component, temp_dir};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A server on a free loopback port: answers every request with `status`, a `Location` of
/// `location` if given, and `{"hit": n}`; counts the requests that reached it.
struct Target {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Target {
    async fn start(status: u16, location: Option<String>) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (hits, location) = (counted.clone(), location.clone());
                let svc = hyper::service::service_fn(move |_req: hyper::Request<Incoming>| {
                    let n = hits.fetch_add(1, Ordering::SeqCst) + 1;
                    let mut resp = hyper::Response::builder().status(status);
                    if let Some(to) = &location {
                        resp = resp.header("location", to);
                    }
                    let body = Full::new(Bytes::from(format!("{{\"hit\": {n}}}")));
                    std::future::ready(Ok::<_, std::convert::Infallible>(resp.body(body).unwrap()))
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc),
                );
            }
        });
        Self { port, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// The testbed served with `allowed` as its `--allow-outbound` hosts and its metrics on a
/// listener of their own.
fn testbed(dir: &std::path::Path, allowed: &[String]) -> (e2e_tests::Host, String) {
    let metrics_port = e2e_tests::free_port();
    let mut b = HostBuilder::new(component("testbed"), dir)
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{metrics_port}"));
    for a in allowed {
        b = b.arg("--allow-outbound").arg(a.clone());
    }
    (
        b.start(),
        format!("http://127.0.0.1:{metrics_port}/metrics"),
    )
}

fn fetch(h: &e2e_tests::Host, url: &str, follow: bool) -> String {
    let url = form_encode(url);
    h.url(&format!(
        "/fetch?url={url}{}",
        if follow { "&follow=1" } else { "" }
    ))
}

fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Asserts the component saw the host's refusal as its error: wasi-http's
/// `HttpRequestDenied`, which the testbed reports in a 500.
async fn assert_denied(c: &Client, url: &str) {
    let r = c.get(url).await;
    let body = r.assert_error(500, "internal_error");
    assert!(
        body.error.contains("HttpRequestDenied"),
        "{url}: not refused by the host: {}",
        body.error
    );
}

/// The counter of refusals of deployment `testbed`, as Prometheus scrapes it.
async fn denied_count(c: &Client, metrics: &str) -> u64 {
    let text = c.get(metrics).await.text();
    text.lines()
        .find(|l| l.starts_with("runtime_host_outbound_denied_total{deployment=\"testbed\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// The old behaviour, turned around: with no `--allow-outbound`, a request to a live server
/// on this machine never reaches it; the component gets `HttpRequestDenied`, the log names
/// the deployment and the URL's authority, and the counter counts it.
#[tokio::test(flavor = "multi_thread")]
async fn outgoing_requests_are_refused_by_default_logged_and_counted() {
    let dir = temp_dir();
    let target = Target::start(200, None).await;
    let (h, metrics) = testbed(dir.path(), &[]);
    let c = Client::new();
    assert_denied(&c, &fetch(&h, &target.url("/ok"), false)).await;
    // The host's own port is no exception.
    assert_denied(&c, &fetch(&h, &h.url("/ok"), false)).await;
    assert_eq!(target.hits(), 0, "a refused request reached its target");
    assert_eq!(denied_count(&c, &metrics).await, 2);
    let log = h.output_with("outgoing HTTP request denied");
    let line = log
        .lines()
        .find(|l| l.contains("outgoing HTTP request denied"))
        .unwrap_or_else(|| panic!("no refusal logged:\n{log}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("testbed"), "{line}");
    assert!(
        line.contains(&format!("127.0.0.1:{}", target.port)),
        "{line}"
    );
}

/// `--allow-outbound` naming the exact loopback address and port admits that, and only
/// that: another port, the same port under its host name, or https are refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_exact_loopback_address_and_port_allowed_is_reached_and_nothing_else() {
    let dir = temp_dir();
    let (target, other) = (
        Target::start(200, None).await,
        Target::start(200, None).await,
    );
    let allowed = [target.url(""), "http://127.0.0.1:9".to_owned()];
    let (h, metrics) = testbed(dir.path(), &allowed);
    let c = Client::new();
    let r = c.get(&fetch(&h, &target.url("/ok"), false)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.value(),
        serde_json::json!({"status": 200, "body": {"hit": 1}})
    );
    // Allowed but closed: the connection's failure is the component's to report, no refusal.
    let body = c
        .get(&fetch(&h, "http://127.0.0.1:9/", false))
        .await
        .assert_error(500, "internal_error");
    assert!(body.error.contains("ConnectionRefused"), "{}", body.error);
    assert_denied(&c, &fetch(&h, &other.url("/ok"), false)).await;
    let by_name = format!("http://localhost:{}/ok", target.port);
    assert_denied(&c, &fetch(&h, &by_name, false)).await;
    let https = format!("https://127.0.0.1:{}/ok", target.port);
    assert_denied(&c, &fetch(&h, &https, false)).await;
    assert_eq!((target.hits(), other.hits()), (1, 0));
    assert_eq!(denied_count(&c, &metrics).await, 3);
}

/// Wildcards never admit this machine, the private networks or a metadata service: `*://*:*`
/// and a network containing loopback refuse loopback written as an address (IPv4, IPv6, an
/// IPv4-mapped IPv6, 0.0.0.0) or reached through a host name (`localhost`), a private
/// address and the metadata addresses. A name that resolves to loopback is admitted only
/// where that address is named too.
#[tokio::test(flavor = "multi_thread")]
async fn wildcards_never_admit_loopback_private_or_metadata_addresses() {
    let dir = temp_dir();
    let target = Target::start(200, None).await;
    let p = target.port;
    let wide = ["*://*:*".to_owned(), "http://127.0.0.0/8:*".to_owned()];
    let (h, metrics) = testbed(dir.path(), &wide);
    let c = Client::new();
    let refused = [
        format!("http://127.0.0.1:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://0.0.0.0:{p}/"),
        format!("http://[::1]:{p}/"),
        format!("http://localhost:{p}/"),
        format!("http://localhost.:{p}/"),
        "http://10.0.0.1/".to_owned(),
        "http://192.168.0.1:8080/".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[fd00:ec2::254]/latest/meta-data/".to_owned(),
    ];
    for url in &refused {
        assert_denied(&c, &fetch(&h, url, false)).await;
    }
    assert_eq!(target.hits(), 0);
    assert_eq!(denied_count(&c, &metrics).await, refused.len() as u64);
    // The log lags the answers: wait for the last refusal's line.
    let log = h.output_with("fd00:ec2::254");
    assert!(
        log.contains("cloud metadata address 169.254.169.254"),
        "{log}"
    );
    assert!(
        log.contains("localhost resolves to loopback address"),
        "{log}"
    );
    drop(h);

    // The host name and its address both named: the name reaches it (at that address).
    let dir = temp_dir();
    let named = [format!("http://localhost:{p}"), target.url("")];
    let (h, _) = testbed(dir.path(), &named);
    let r = c
        .get(&fetch(&h, &format!("http://localhost:{p}/x"), false))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(target.hits(), 1);
}

/// wasi-http does not follow redirects: a 302 from an allowed host to a refused one comes
/// back to the guest as a 302. A guest that follows it itself makes a second request, checked
/// as any other: refused, until that host is allowed too.
#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_a_refused_host_is_not_followed() {
    let secret = Target::start(200, None).await;
    let redirect = Target::start(302, Some(secret.url("/secret"))).await;
    let c = Client::new();
    let dir = temp_dir();
    let (h, metrics) = testbed(dir.path(), &[redirect.url("")]);
    let r = c.get(&fetch(&h, &redirect.url("/"), false)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.value()["status"],
        302,
        "the redirect reached the guest as it was"
    );
    assert_denied(&c, &fetch(&h, &redirect.url("/"), true)).await;
    assert_eq!(
        secret.hits(),
        0,
        "the redirect was followed to a refused host"
    );
    assert_eq!(redirect.hits(), 2);
    assert_eq!(denied_count(&c, &metrics).await, 1);
    drop(h);

    // Both allowed: the guest's second request goes through (the refusal above was the check).
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[redirect.url(""), secret.url("")]);
    let r = c.get(&fetch(&h, &redirect.url("/"), true)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.value(),
        serde_json::json!({"status": 200, "body": {"hit": 1}})
    );
}

/// A malformed `--allow-outbound` stops the start with the entry and the reason.
#[test]
fn a_malformed_allowed_host_is_refused_at_start() {
    let dir = temp_dir();
    for (entry, why) in [
        ("api.example.com", "no scheme"),
        ("https://api.example.com/v1", "path"),
        ("https://api.*.com", "`*` stands only"),
    ] {
        let out = std::process::Command::new(e2e_tests::host_binary())
            .arg("serve")
            .arg(component("testbed"))
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .args(["--allow-outbound", entry])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "started with {entry}");
        assert!(err.contains("invalid allowed outbound host"), "{err}");
        assert!(err.contains(entry) && err.contains(why), "{err}");
    }
}

/// The same component under the real Spin, given the same `allowed_outbound_hosts`: the
/// allowed address is reached and the other refused with the very error runtime-host gives,
/// so a component written against one host behaves alike on the other.
#[tokio::test(flavor = "multi_thread")]
async fn spin_refuses_and_admits_as_runtime_host_does() {
    let Some(spin) = e2e_tests::spin::spin_or_skip("outgoing HTTP under Spin") else {
        return;
    };
    let (allowed, other) = (
        Target::start(200, None).await,
        Target::start(200, None).await,
    );
    let work = temp_dir();
    let manifest = work.path().join("spin.toml");
    std::fs::write(
        &manifest,
        format!(
            "spin_manifest_version = 2\n\n[application]\nname = \"outbound\"\n\
             version = \"1.0.0\"\n\n[[trigger.http]]\nroute = \"/...\"\ncomponent = \"testbed\"\n\n\
             [component.testbed]\nsource = {}\nkey_value_stores = [\"default\"]\n\
             allowed_outbound_hosts = [{:?}]\n",
            serde_json::to_string(&component("testbed").display().to_string()).unwrap(),
            allowed.url(""),
        ),
    )
    .unwrap();
    let app = e2e_tests::spin::SpinApp::up_manifest(&spin, &manifest, "unused", "/ok");
    let dir = temp_dir();
    let (h, _) = testbed(dir.path(), &[allowed.url("")]);
    let c = Client::new();
    for base in [app.base_url(), h.base_url()] {
        let via = |url: &str| format!("{base}/fetch?url={}", form_encode(url));
        let r = c.get(&via(&allowed.url("/ok"))).await;
        assert_eq!(r.status, 200, "{base}: {}", r.text());
        assert_eq!(r.value()["status"], 200);
        assert_denied(&c, &via(&other.url("/ok"))).await;
    }
    assert_eq!((allowed.hits(), other.hits()), (2, 0));
}

/// A model directory's `model.toml` grants its own hosts in `[network]`; `model check` (and
/// so `up`, the admin API and `predict`, which check first) refuses a malformed entry with
/// the field and why, and passes a good one.
#[test]
fn a_model_manifest_names_its_outbound_hosts_and_a_bad_one_is_refused() {
    let work = temp_dir();
    let model = work.path().join("iris");
    e2e_tests::copy_model(&e2e_tests::model_dir("iris"), &model);
    let manifest = std::fs::read_to_string(model.join("model.toml")).unwrap();
    let check = |hosts: &str| {
        let text = format!("{manifest}\n[network]\nallowed_outbound_hosts = [{hosts}]\n");
        std::fs::write(model.join("model.toml"), text).unwrap();
        let out = std::process::Command::new(e2e_tests::host_binary())
            .args(["model", "check"])
            .arg(&model)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), said)
    };
    let (ok, said) = check("\"https://api.example.com\", \"http://127.0.0.1:8080\"");
    assert!(ok, "{said}");
    let (ok, said) = check("\"api.example.com\"");
    assert!(!ok, "{said}");
    assert!(
        said.contains("network.allowed_outbound_hosts") && said.contains("no scheme"),
        "{said}"
    );
}
