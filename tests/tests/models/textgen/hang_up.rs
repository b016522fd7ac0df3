//! A client that goes away stops its generation: the host aborts the component's request the
//! moment its caller stops waiting for the answer (no response head yet), which drops the
//! component's `infer` call, and the generator ends the stream at its next pass. Seen from
//! outside through the host's Prometheus metrics: `generation_queue_requests` falls back to 0
//! long before the request's deadline, and the tokens written stop growing.

use super::serve;
use e2e_tests::{Client, temp_dir};
use serde_json::json;
use std::io::Write;
use std::time::{Duration, Instant};

/// The sum of the metric lines that start with `name` and contain `label` (0 when absent).
fn metric(text: &str, name: &str, label: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name) && l.contains(label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

const TOKENS: &str = "runtime_host_generation_tokens_total";
const GENERATED: &str = "kind=\"generated\"";

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_hangs_up_stops_its_generation() {
    let data = temp_dir();
    let port = e2e_tests::free_port();
    let listen = format!("127.0.0.1:{port}");
    let host = serve(
        data.path(),
        &["--metrics-listen", &listen, "--deadline", "120s"],
    );
    let scrape = format!("http://{listen}/metrics");
    let c = Client::new();
    // Warm: the model is loaded and one instance is ready.
    let hi = json!({"input_type": "text", "data": {"text": "Say hi.", "max_tokens": 2}});
    assert_eq!(
        c.post_json(&host.url("/predict"), &hi, None).await.status,
        200
    );

    // Three long answers asked for over raw connections, which are then closed.
    let body = json!({"input_type": "text", "data": {
        "text": "Write a long essay about the history of the sea.", "max_tokens": 1000}})
    .to_string();
    let addr = host
        .url("")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut sockets = Vec::new();
    for _ in 0..3 {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "POST /predict HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        sockets.push(s);
    }
    // They are generating...
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let text = c.get(&scrape).await.text();
        if metric(&text, "runtime_host_generation_queue_requests", "") >= 3.0 {
            break;
        }
        assert!(Instant::now() < until, "the three never started:\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // ...until their clients go away.
    drop(sockets);
    let hung_up = Instant::now();
    loop {
        let text = c.get(&scrape).await.text();
        if metric(&text, "runtime_host_generation_queue_requests", "") == 0.0 {
            break;
        }
        assert!(
            hung_up.elapsed() < Duration::from_secs(10),
            "still generating 10 s after the clients left (3,000 tokens would take minutes):\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let written = metric(&c.get(&scrape).await.text(), TOKENS, GENERATED);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let later = metric(&c.get(&scrape).await.text(), TOKENS, GENERATED);
    assert_eq!(
        written, later,
        "no tokens are written once every client is gone"
    );
    // And the host still answers.
    assert_eq!(
        c.post_json(&host.url("/predict"), &hi, None).await.status,
        200
    );
}
