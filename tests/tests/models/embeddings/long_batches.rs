//! Long work on the embedding model: a batch of seconds holds up no other request, and one
//! past the deadline is answered with a timeout while the model carries on serving.

use super::{embed_one, serve, serve_with};
use e2e_tests::{Client, ai_models_dir, temp_dir};
use serde_json::{Value, json};

/// 64 texts of 254 word pieces each: seconds of work on the model's thread.
fn heavy_batch() -> Value {
    let texts: Vec<String> = (0..64)
        .map(|i| format!("{i} {}", "words of a long document ".repeat(50)))
        .map(|t| t.split(' ').take(254).collect::<Vec<_>>().join(" "))
        .collect();
    json!({"input_type": "text", "data": {"texts": texts}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_batch_holds_up_no_other_request() {
    let data = temp_dir();
    let host = serve(data.path());
    let c = Client::new();
    embed_one(&c, &host.base_url(), "warm up").await;
    let (url, body) = (host.url("/predict"), heavy_batch());
    let batch = {
        let c = c.clone();
        tokio::spawn(async move { c.post_json(&url, &body, None).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // Requests that need no embedding are answered while the batch runs.
    for _ in 0..5 {
        assert_eq!(c.get(&host.url("/info")).await.status, 200);
        assert!(
            !batch.is_finished(),
            "the batch finished too soon to show anything"
        );
    }
    // And so is a one-word embedding from another client: it takes its turn between the
    // batch's passes instead of waiting for all of them.
    let small = embed_one(&c, &host.base_url(), "word").await;
    assert_eq!(small.len(), 384);
    assert!(
        !batch.is_finished(),
        "the one-word request waited for the whole batch"
    );
    let done = batch.await.unwrap();
    assert_eq!(done.status, 200, "{}", done.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_past_the_deadline_is_answered_with_a_timeout_and_the_model_recovers() {
    let data = temp_dir();
    let host = serve_with(&ai_models_dir(), data.path(), &["--deadline", "2s"]);
    let c = Client::new();
    embed_one(&c, &host.base_url(), "warm up").await;
    let started = std::time::Instant::now();
    let r = c
        .post_json(&host.url("/predict"), &heavy_batch(), None)
        .await;
    r.assert_error(500, "timeout");
    assert!(started.elapsed() < std::time::Duration::from_secs(6));
    // The abandoned work stops at its next pass; later requests are served.
    embed_one(&c, &host.base_url(), "after the timeout").await;
}
