//! The host's Prometheus metrics (issue 26 §1): a real Prometheus server scrapes `up`'s app
//! port, and PromQL over what it stored matches the traffic this test sent (counts, errors
//! by code, predictions as items, the request rate, p99 from the latency histogram). The
//! `--metrics-listen` listener of `serve`, and label values no client can multiply.

use e2e_tests::prometheus::Prometheus;
use e2e_tests::{Client, HostBuilder, Stack, component, temp_dir};
use hyper::Method;
use serde_json::json;
use std::time::{Duration, Instant};

/// The upper bounds of the host's request-latency buckets (crates/host-metrics/src).
const BUCKETS: [f64; 16] = [
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
    10.0, 30.0,
];
const SCRAPED: Duration = Duration::from_secs(30);

fn molprop_only() -> tempfile::TempDir {
    let dir = temp_dir();
    std::fs::copy(component("molprop"), dir.path().join("molprop.wasm")).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn prometheus_scrapes_the_stack_and_promql_sees_the_traffic() {
    let models = molprop_only();
    let stack = Stack::up(&["--models", models.path().to_str().unwrap()], 4);
    let target = format!("127.0.0.1:{}", stack.app_port);
    let Some(prom) = Prometheus::start("prometheus_scrapes_the_stack", &[target]) else {
        return;
    };
    prom.eventually(r#"up{job="runtime-host"}"#, Duration::from_secs(60), |v| {
        v == 1.0
    })
    .await;
    let ok = r#"sum(runtime_host_http_requests_total{deployment="molprop",route="/predict",status="200"})"#;
    let bad = r#"sum(runtime_host_errors_total{deployment="molprop",code="invalid_json"})"#;
    let items = r#"sum(runtime_host_predictions_total{deployment="molprop"})"#;
    // One request of each kind first, so each series exists before the traffic (a rate
    // counts increases between scrapes, not a series' first value).
    let c = Client::new();
    let url = stack.app("/models/molprop/predict");
    let one = json!({"input_type": "text", "data": {"text": "C"}});
    assert_eq!(c.post_json(&url, &one, None).await.status, 200);
    c.post_raw(&url, b"{".to_vec(), None)
        .await
        .assert_error(400, "invalid_json");
    let seen = |v: f64| v >= 1.0;
    let ok0 = prom.eventually(ok, SCRAPED, seen).await;
    let bad0 = prom.eventually(bad, SCRAPED, seen).await;
    let items0 = prom.eventually(items, SCRAPED, seen).await;

    // 150 single predictions and 10 batches of 5 through the app port, 20 malformed bodies.
    let mut slowest = Duration::ZERO;
    for i in 0..160 {
        let data = if i < 150 {
            json!({"text": "CCO", "property": "logp"})
        } else {
            json!({"texts": ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCl"], "property": "logp"})
        };
        let started = Instant::now();
        let r = c
            .post_json(&url, &json!({"input_type": "text", "data": data}), None)
            .await;
        slowest = slowest.max(started.elapsed());
        assert_eq!(r.status, 200, "{}", r.text());
    }
    for _ in 0..20 {
        let r = c.post_raw(&url, b"{not json".to_vec(), None).await;
        r.assert_error(400, "invalid_json");
        assert_eq!(r.header("x-error-code"), Some("invalid_json"));
    }

    // Once scraped, the counters are exactly the traffic.
    let exactly = |n: f64| move |v: f64| v == n;
    prom.eventually(ok, SCRAPED, exactly(ok0 + 160.0)).await;
    prom.eventually(bad, SCRAPED, exactly(bad0 + 20.0)).await;
    prom.eventually(items, SCRAPED, exactly(items0 + 200.0))
        .await;
    // The request rate over the last minute saw them (once two scrapes hold the series).
    prom.eventually(
        r#"sum(rate(runtime_host_http_requests_total{deployment="molprop",route="/predict"}[1m]))"#,
        SCRAPED,
        |rate| rate > 0.0,
    )
    .await;
    // p99 from the histogram: the host's own latency is never more than the client's, so it
    // lies at or below the bucket bound above the slowest answer this client saw.
    let p99 = prom
        .eventually(
            r#"histogram_quantile(0.99, sum by (le) (rate(runtime_host_http_request_duration_seconds_bucket{deployment="molprop",route="/predict"}[1m])))"#,
            SCRAPED,
            |v| v.is_finite() && v > 0.0,
        )
        .await;
    let bound = BUCKETS
        .iter()
        .copied()
        .find(|b| *b >= slowest.as_secs_f64())
        .unwrap_or(f64::INFINITY);
    assert!(p99 <= bound, "p99 {p99} s, slowest seen {slowest:?}");
    // The stores and the instance pools report too.
    let store_calls = prom
        .query(r#"sum(runtime_host_keyvalue_operation_duration_seconds_count{backend="sqlite"})"#)
        .await;
    assert!(store_calls.is_some_and(|n| n > 0.0), "{store_calls:?}");
    let live = prom
        .query(r#"runtime_host_instances_live{deployment="molprop"}"#)
        .await;
    assert!(live.is_some_and(|n| n >= 1.0), "{live:?}");
    // The registry's process monitor reports the registrations it sees (molprop's).
    prom.eventually("runtime_host_registry_active_registrations", SCRAPED, |n| {
        n >= 1.0
    })
    .await;
    dashboard_queries_work(&prom).await;
}

/// Every query of the shipped Grafana dashboard is valid PromQL over these metrics, and the
/// panels about requests, latency, predictions, instances and the store show data.
async fn dashboard_queries_work(prom: &Prometheus) {
    let file = e2e_tests::workspace_root().join("docs/grafana/runtime-host.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(panels.len() >= 10);
    for panel in panels {
        let title = panel["title"].as_str().unwrap();
        for target in panel["targets"].as_array().unwrap() {
            // Grafana's own variables, as it would fill them in.
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("$__range", "5m");
            let series = prom.query_all(&expr).await;
            let must_show = [
                "Requests",
                "Latency",
                "Predictions",
                "Instances by",
                "Key-value store p99",
            ];
            if must_show.iter().any(|t| title.starts_with(t)) {
                assert!(!series.is_empty(), "{title}: {expr} shows nothing");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_listen_serves_the_text_format_apart_from_the_components_routes() {
    let data = temp_dir();
    let metrics_port = e2e_tests::free_port();
    let metrics = format!("http://127.0.0.1:{metrics_port}");
    let host = HostBuilder::new(component("molprop"), data.path())
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{metrics_port}"))
        .start();
    let c = Client::new();
    let body = json!({"input_type": "text", "data": {"text": "CCO"}});
    assert_eq!(
        c.post_json(&host.url("/predict"), &body, None).await.status,
        200
    );

    // The specification's /metrics on the component's port stays the model's JSON.
    let own = c.get(&host.url("/metrics")).await;
    assert_eq!(own.status, 200);
    assert!(
        own.value()["requests_served"].as_u64().is_some(),
        "{}",
        own.text()
    );

    let text = c.get(&format!("{metrics}/metrics")).await;
    assert_eq!(text.status, 200);
    assert!(
        text.header("content-type")
            .is_some_and(|t| t.starts_with("application/openmetrics-text")),
        "{:?}",
        text.header("content-type")
    );
    let body = text.text();
    assert!(body.ends_with("# EOF\n"), "{body}");
    assert!(
        body.contains(r#"runtime_host_http_requests_total{deployment="molprop",route="/predict",status="200"} 1"#),
        "{body}"
    );
    assert!(
        body.contains(r#"runtime_host_predictions_total{deployment="molprop"} 1"#),
        "{body}"
    );

    c.get(&format!("{metrics}/predict"))
        .await
        .assert_error(404, "not_found");
    let post = c
        .post_raw(&format!("{metrics}/metrics"), vec![], None)
        .await;
    post.assert_error(405, "method_not_allowed");
    assert_eq!(post.header("allow"), Some("GET"));
}

#[tokio::test(flavor = "multi_thread")]
async fn no_client_can_multiply_the_series() {
    let data = temp_dir();
    let metrics_port = e2e_tests::free_port();
    let host = HostBuilder::new(component("molprop"), data.path())
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{metrics_port}"))
        .start();
    let c = Client::new();
    for i in 0..300 {
        let path = format!("/probe-{i}/%2e%2e/{}?q={i}", "x".repeat(i % 40));
        let method = [Method::GET, Method::POST, Method::DELETE, Method::PUT][i % 4].clone();
        let r = c.send(method, &host.url(&path), Some(vec![]), &[]).await;
        assert!(r.status >= 400, "{path}: {}", r.status);
    }
    let text = c
        .get(&format!("http://127.0.0.1:{metrics_port}/metrics"))
        .await
        .text();
    let request_series: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("runtime_host_http_requests_total{"))
        .collect();
    // Every unknown path is route "other": a handful of series (by status), not 300.
    assert!(request_series.len() <= 4, "{request_series:#?}");
    assert!(
        request_series
            .iter()
            .all(|l| l.contains(r#"route="other""#)),
        "{request_series:#?}"
    );
    assert!(!text.contains("probe-"), "a path leaked into a label");
    drop(host);
}
