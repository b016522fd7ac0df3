//! What `POST /api/dialog/reply` refuses, each as a JSON error with its status, and without
//! changing the dialog: the admin token as for every write, unknown dialogs, parameters the
//! model cannot use, a dialog with nothing to answer, a host whose model is not granted or
//! not installed (503 saying what to do), and a model whose queue is full (503, Retry-After).

use e2e_tests::chat::{self, TOKEN, create};
use e2e_tests::{Client, HostBuilder, component, temp_dir};
use edge_api::chat::Dialog;
use edge_api::language_model::MODEL;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn tokens_ids_and_parameters_are_checked_before_any_generation() {
    let dir = temp_dir();
    let h = chat::with_model(dir.path()).start();
    let c = Client::new();
    let d = create(
        &c,
        &h,
        &json!({"chatName": "strict", "messages": [{"role": "user", "content": "Hi"}]}),
    )
    .await;
    let url = h.url(&format!("/api/dialog/reply?id={}", d.id));
    let params = json!({"max_tokens": 8});
    let r = c.post_json(&url, &params, None).await;
    r.assert_error(401, "unauthorized");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    c.post_json(&url, &params, Some("wrong"))
        .await
        .assert_error(403, "forbidden");
    chat::reply(&c, &h, "no-such-dialog", &params)
        .await
        .assert_error(404, "not_found");
    c.post_json(&h.url("/api/dialog/reply"), &params, Some(TOKEN))
        .await
        .assert_error(400, "missing_field");
    c.get(&url).await.assert_error(405, "method_not_allowed");

    for (body, code, field) in [
        (json!({"max_tokens": 0}), "invalid_field", "max_tokens"),
        (json!({"max_tokens": 5000}), "invalid_field", "max_tokens"),
        (json!({"max_tokens": -3}), "invalid_field", "max_tokens"),
        (json!({"max_tokens": "8"}), "invalid_field", "max_tokens"),
        (json!({"temperature": -1}), "invalid_field", "temperature"),
        (json!({"temperature": 9}), "invalid_field", "temperature"),
        (json!({"top_p": 1.5}), "invalid_field", "top_p"),
        (json!({"top_k": 2.5}), "invalid_field", "top_k"),
        (
            json!({"repeat_penalty": 0}),
            "invalid_field",
            "repeat_penalty",
        ),
        (json!({"stream": true}), "invalid_field", "stream"),
        (json!([8]), "invalid_field", "JSON object"),
    ] {
        let e = chat::reply(&c, &h, &d.id, &body)
            .await
            .assert_error(400, code);
        assert!(e.error.contains(field), "{body}: {}", e.error);
    }
    c.post_raw(&url, b"{\"max_tokens\": ".to_vec(), Some(TOKEN))
        .await
        .assert_error(400, "invalid_json");

    // A dialog without messages has nothing to answer.
    let empty = create(&c, &h, &json!({"chatName": "empty"})).await;
    let e = chat::reply(&c, &h, &empty.id, &params)
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("no messages"), "{}", e.error);

    // None of the refused calls wrote anything.
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    assert_eq!(got.messages.len(), 1);
    // An empty body is every default (a reply of at most 128 tokens).
    let r = c.post_raw(&url, Vec::new(), Some(TOKEN)).await;
    assert_eq!(r.status, 201, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_model_a_reply_is_503_saying_what_to_do() {
    let c = Client::new();
    let dialog = json!({"chatName": "x", "messages": [{"role": "user", "content": "Hi"}]});

    // Not granted: the chat component may not call the model.
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let d = create(&c, &h, &dialog).await;
    let e = chat::reply(&c, &h, &d.id, &json!({"max_tokens": 8}))
        .await
        .assert_error(503, "not_ready");
    for what in ["ai_models", "--ai-model", MODEL] {
        assert!(e.error.contains(what), "{}", e.error);
    }

    // Granted, but its files are not where the host looks.
    let dir = temp_dir();
    let nowhere = temp_dir();
    let h = HostBuilder::new(component("chat"), dir.path())
        .variable("chat_admin_token", TOKEN)
        .ai_model(MODEL, nowhere.path())
        .start();
    let d = create(&c, &h, &dialog).await;
    let e = chat::reply(&c, &h, &d.id, &json!({"max_tokens": 8}))
        .await
        .assert_error(503, "not_ready");
    assert!(e.error.contains("install-models"), "{}", e.error);
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    assert_eq!(got.messages.len(), 1, "nothing appended");
}

/// A full queue: past the model's streams and waiting places (8 + 32), a reply is refused at
/// once with 503 `overloaded` and the host's wait in `Retry-After`, and stores nothing. One
/// instance per request (`--max-instances 0`), or the host's instance limit would hold the
/// requests back before they reach the model; a short deadline ends the long ones.
#[tokio::test(flavor = "multi_thread")]
async fn past_the_models_queue_a_reply_is_503_with_retry_after_and_stores_nothing() {
    let dir = temp_dir();
    let h = chat::with_model(dir.path())
        .arg("--max-instances")
        .arg("0")
        .arg("--deadline")
        .arg("6s")
        .start();
    let c = Client::new();
    let d = create(
        &c,
        &h,
        &json!({"chatName": "crowd", "messages": [
            {"role": "user", "content": "Tell me a long story about a dragon."}]}),
    )
    .await;
    let url = h.url(&format!("/api/dialog/reply?id={}", d.id));
    let body = json!({"max_tokens": 1000}).to_string().into_bytes();
    let auth = format!("Bearer {TOKEN}");
    let asks: Vec<_> = (0..48)
        .map(|_| {
            let (c, url, body, auth) = (c.clone(), url.clone(), body.clone(), auth.clone());
            tokio::spawn(async move {
                let headers = [
                    ("content-type", "application/json"),
                    ("authorization", auth.as_str()),
                ];
                c.try_send(hyper::Method::POST, &url, Some(body), &headers)
                    .await
            })
        })
        .collect();
    let (mut busy, mut stored) = (Vec::new(), 0);
    for ask in asks {
        match ask.await.unwrap() {
            Ok(r) if r.status == 503 => busy.push(r),
            Ok(r) if r.status == 201 => stored += 1,
            _ => {}
        }
    }
    assert!(!busy.is_empty(), "48 at once fill 40 places");
    for r in &busy {
        let body = r.assert_error(503, "overloaded");
        assert!(body.error.contains("busy"), "{}", body.error);
        assert_eq!(r.header("retry-after"), Some("2"), "{}", body.error);
    }
    // Only a reply that was written is stored: none of the refused or cut-off ones.
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    assert_eq!(got.messages.len(), 1 + stored);
}
