//! A full queue: past the host's streams and waiting places (8 + 32), a generation is
//! refused at once with 503 `overloaded`, the host's wait in `Retry-After` and its message.
//! One instance per request (`--max-instances 0`), or the host's instance limit would hold
//! the requests back before they reach the model; a short deadline ends the long ones.

use super::serve;
use e2e_tests::{Client, temp_dir};
use hyper::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn past_the_queue_a_request_is_503_with_retry_after() {
    let data = temp_dir();
    let host = serve(data.path(), &["--max-instances", "0", "--deadline", "6s"]);
    let c = Client::new();
    let body = json!({"input_type": "text", "data": {
        "text": "Tell me a long story about a dragon.", "max_tokens": 1000}})
    .to_string()
    .into_bytes();
    let url = host.url("/predict");
    let replies: Vec<_> = (0..48)
        .map(|_| {
            let (c, url, body) = (c.clone(), url.clone(), body.clone());
            tokio::spawn(async move {
                c.try_send(
                    Method::POST,
                    &url,
                    Some(body),
                    &[("content-type", "application/json")],
                )
                .await
            })
        })
        .collect();
    let mut busy = Vec::new();
    for reply in replies {
        if let Ok(r) = reply.await.unwrap()
            && r.status == 503
        {
            busy.push(r);
        }
    }
    assert!(!busy.is_empty(), "48 at once fill 40 places");
    for r in &busy {
        let body = r.assert_error(503, "overloaded");
        assert!(body.error.contains("busy"), "{}", body.error);
        assert_eq!(r.header("retry-after"), Some("2"), "{}", body.error);
    }
    // And the model answers again once the long requests are over (their streams are
    // freed as the generator sees them dropped: a moment after the deadline).
    let hi = json!({"input_type": "text", "data": {"text": "Say hi.", "max_tokens": 4}});
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = c.post_json(&url, &hi, None).await;
        if r.status == 200 {
            break;
        }
        assert!(
            r.status == 503 && std::time::Instant::now() < until,
            "{}",
            r.text()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}
