//! The chat service's answers against chat.json.

use super::recorder::Recorder;
use e2e_tests::chat::{self, TOKEN};
use e2e_tests::temp_dir;
use hyper::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn chat_answers_validate_against_chat_json() {
    let dir = temp_dir();
    let host = chat::with_model(dir.path()).start();
    let mut r = Recorder::new("chat", host.base_url());
    let t = Some(TOKEN);
    let dialog = json!({"id": "oa-1", "chatName": "OpenAPI", "messages": [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi", "model": "m", "metadata": {"k": 1}}]});
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog.clone(), t)
            .await
            .status,
        201
    );
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog.clone(), t)
            .await
            .status,
        409
    );
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog.clone(), None)
            .await
            .status,
        401
    );
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog, Some("wrong"))
            .await
            .status,
        403
    );
    let bad = json!({"chatName": "x", "messages": [{"role": "wizard", "content": "?"}]});
    assert_eq!(r.json(Method::POST, "/api/chats", bad, t).await.status, 400);
    assert_eq!(
        r.call(Method::POST, "/api/chats", Some(b"{not json".to_vec()), t)
            .await
            .status,
        400
    );
    let huge = vec![b' '; 2 * 1024 * 1024];
    assert_eq!(
        r.call(Method::POST, "/api/chats", Some(huge), t)
            .await
            .status,
        413
    );
    assert_eq!(r.get("/api/chats").await.status, 200);
    let got = r.get("/api/dialog?id=oa-1").await;
    assert_eq!(got.status, 200);
    let guid = got.value()["GUID"].as_str().unwrap().to_owned();
    assert_eq!(r.get(&format!("/api/dialog?id={guid}")).await.status, 200);
    assert_eq!(r.get("/api/dialog").await.status, 400);
    assert_eq!(r.get("/api/dialog?id=nope").await.status, 404);
    let msg = json!({"role": "tool", "content": "42", "name": "calc"});
    assert_eq!(
        r.json(Method::POST, "/api/dialog/messages?id=oa-1", msg.clone(), t)
            .await
            .status,
        201
    );
    assert_eq!(
        r.json(Method::POST, "/api/dialog/messages?id=nope", msg, t)
            .await
            .status,
        404
    );
    // The model's reply (a few greedy tokens), and what the route refuses.
    let params = json!({"max_tokens": 4, "temperature": 0});
    let reply = "/api/dialog/reply?id=oa-1";
    assert_eq!(
        r.json(Method::POST, reply, params.clone(), t).await.status,
        201
    );
    assert_eq!(r.call(Method::POST, reply, None, t).await.status, 201);
    let bad = json!({"max_tokens": 0});
    assert_eq!(r.json(Method::POST, reply, bad, t).await.status, 400);
    assert_eq!(
        r.json(Method::POST, reply, params.clone(), None)
            .await
            .status,
        401
    );
    assert_eq!(
        r.json(Method::POST, "/api/dialog/reply?id=nope", params, t)
            .await
            .status,
        404
    );
    assert_eq!(
        r.call(Method::PUT, "/api/chats", None, None).await.status,
        405
    );
    assert_eq!(
        r.call(Method::DELETE, "/api/dialog?id=oa-1", None, t)
            .await
            .status,
        200
    );
    assert_eq!(
        r.call(Method::DELETE, "/api/dialog?id=oa-1", None, t)
            .await
            .status,
        404
    );
    r.finish();
}
