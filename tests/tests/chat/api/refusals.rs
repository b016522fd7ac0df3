//! What the chat's write API refuses: malformed and hostile bodies (each a 400 naming its
//! field), unknown routes and methods, and bodies over the host's or the component's cap.

use e2e_tests::chat::{self, TOKEN};
use e2e_tests::{Client, temp_dir};
use hyper::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn malformed_and_hostile_input_gets_clear_400s() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let url = h.url("/api/chats");
    let cases: Vec<(&[u8], &str, &str)> = vec![
        (b"{\"chatName\": ", "invalid_json", ""),
        (b"", "invalid_json", ""),
        (b"\xff\xfe", "invalid_json", ""),
        (b"[]", "invalid_field", ""),
        (b"{}", "missing_field", "chatName"),
        (b"{\"chatName\": 7}", "invalid_field", "chatName"),
        (b"{\"chatName\": \"   \"}", "invalid_field", "chatName"),
        (
            b"{\"chatName\": \"x\", \"bogus\": 1}",
            "invalid_field",
            "bogus",
        ),
        (
            b"{\"chatName\": \"x\", \"messages\": {}}",
            "invalid_field",
            "messages",
        ),
        (
            b"{\"chatName\": \"x\", \"messages\": [{\"role\": \"root\", \"content\": \"x\"}]}",
            "invalid_field",
            "role",
        ),
        (
            b"{\"chatName\": \"x\", \"messages\": [{\"role\": \"user\"}]}",
            "missing_field",
            "content",
        ),
        (
            b"{\"chatName\": \"x\", \"id\": \"../../etc\"}",
            "invalid_field",
            "id",
        ),
        (
            b"{\"chatName\": \"x\", \"GUID\": \"not-a-uuid\"}",
            "invalid_field",
            "GUID",
        ),
        (
            b"{\"chatName\": \"x\", \"created\": \"yesterday\"}",
            "invalid_field",
            "created",
        ),
    ];
    for (body, code, field) in cases {
        let r = c.post_raw(&url, body.to_vec(), Some(TOKEN)).await;
        let e = r.assert_error(400, code);
        assert!(
            e.error.contains(field),
            "{:?}: `{}` should name `{field}`",
            String::from_utf8_lossy(body),
            e.error
        );
    }
    // Hostile nesting inside free-form metadata is refused, not a stack overflow.
    let deep = format!(
        r#"{{"chatName": "x", "messages": [{{"role": "user", "content": "x", "metadata": {}1{}}}]}}"#,
        r#"{"a":"#.repeat(10_000),
        "}".repeat(10_000)
    );
    c.post_raw(&url, deep.into_bytes(), Some(TOKEN))
        .await
        .assert_error(400, "invalid_json");
    assert_eq!(c.get(&url).await.value(), json!([]), "nothing was stored");

    // Unknown routes and wrong methods.
    c.get(&h.url("/api/nothing"))
        .await
        .assert_error(404, "not_found");
    let r = c.send(Method::PUT, &url, None, &[]).await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, POST"));
    let r = c
        .send(Method::GET, &h.url("/api/dialog/messages?id=x"), None, &[])
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("POST"));
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_bodies_are_413_from_host_and_from_component() {
    let dir = temp_dir();
    let c = Client::new();
    let big = vec![b' '; 2 << 20];
    {
        let h = chat::host(dir.path());
        c.post_raw(&h.url("/api/chats"), big.clone(), Some(TOKEN))
            .await
            .assert_error(413, "payload_too_large");
        assert_eq!(
            c.get(&h.url("/api/chats")).await.status,
            200,
            "host still serves"
        );
    }
    // With a larger host cap, the component's own caps answer the same way: 1 MiB for
    // anyone but the admin, a whole dialog (the dialog limit and 1 MiB) for the admin's
    // `POST /api/chats`.
    let h = chat::builder(dir.path())
        .arg("--max-body")
        .arg((16 << 20).to_string())
        .start();
    c.post_raw(&h.url("/api/chats"), big, None)
        .await
        .assert_error(413, "payload_too_large");
    let whole = vec![b' '; edge_api::chat::MAX_WRITE_BODY_BYTES + 1];
    c.post_raw(&h.url("/api/chats"), whole, Some(TOKEN))
        .await
        .assert_error(413, "payload_too_large");
}
