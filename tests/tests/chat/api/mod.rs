//! Interface A over HTTP: the spec's read endpoints and the write API around them; what
//! the write API refuses is in `refusals`.

mod refusals;

use e2e_tests::chat::{self, TOKEN, create};
use e2e_tests::{Client, HostBuilder, component, temp_dir};
use edge_api::chat::{ChatSummary, Dialog, Message};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn empty_then_listed_newest_first_with_exact_summary_fields() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let r = c.get(&h.url("/api/chats")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.value(), json!([]));

    let a = create(
        &c,
        &h,
        &json!({"chatName": "first", "messages": [{"role": "user", "content": "1"}]}),
    )
    .await;
    // Timestamps have millisecond resolution; make "newer" unambiguous.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let b = create(&c, &h, &json!({"chatName": "second"})).await;
    let list = c.get(&h.url("/api/chats")).await;
    let raw = list.value();
    for entry in raw.as_array().unwrap() {
        let mut keys: Vec<_> = entry.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "GUID",
                "chatName",
                "created",
                "id",
                "numMessages",
                "updated"
            ]
        );
    }
    let list: Vec<ChatSummary> = list.json();
    assert_eq!(
        list.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        [b.id.as_str(), a.id.as_str()]
    );
    assert_eq!(list[1].num_messages, 1);
    assert_eq!(list[0].num_messages, 0);
    assert_eq!(list[1].guid, a.guid);
    assert!(
        list[1].created.ends_with('Z'),
        "RFC 3339 UTC: {}",
        list[1].created
    );

    // Appending to the older dialog moves it to the top.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let r = chat::append(&c, &h, &a.id, &json!({"role": "assistant", "content": "2"})).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let list: Vec<ChatSummary> = c.get(&h.url("/api/chats")).await.json();
    assert_eq!(list[0].id, a.id);
    assert_eq!(list[0].num_messages, 2);
    assert!(list[0].updated >= a.updated);
}

#[tokio::test(flavor = "multi_thread")]
async fn dialog_by_id_and_by_guid_and_spec_errors() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let d = create(
        &c,
        &h,
        &json!({"chatName": "lookup", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi", "name": "ann", "metadata": {"lang": "en"}},
            {"role": "assistant", "content": "hello", "model": "m1"}
        ]}),
    )
    .await;
    let by_id: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    let by_guid: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.guid)))
        .await
        .json();
    assert_eq!(by_id, d);
    assert_eq!(by_guid, d);
    let raw = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .value();
    let mut keys: Vec<_> = raw.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        ["GUID", "chatName", "created", "id", "messages", "updated"]
    );
    assert_eq!(raw["messages"][1]["metadata"]["lang"], "en");
    assert_eq!(raw["messages"][2]["model"], "m1");
    assert!(
        raw["messages"][0].get("name").is_none(),
        "absent optionals are omitted"
    );

    c.get(&h.url("/api/dialog"))
        .await
        .assert_error(400, "missing_field");
    c.get(&h.url("/api/dialog?id="))
        .await
        .assert_error(400, "missing_field");
    c.get(&h.url("/api/dialog?id=does-not-exist"))
        .await
        .assert_error(404, "not_found");
    c.get(&h.url("/api/dialog?id=6f1c1a52-0000-4000-8000-000000000000"))
        .await
        .assert_error(404, "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn write_api_requires_the_configured_token() {
    let dir = temp_dir();
    let c = Client::new();
    let body = json!({"chatName": "x"});
    {
        // No token configured: the write API is off, reads still work.
        let h = HostBuilder::new(component("chat"), dir.path()).start();
        c.post_json(&h.url("/api/chats"), &body, Some("anything"))
            .await
            .assert_error(403, "write_api_disabled");
        assert_eq!(c.get(&h.url("/api/chats")).await.status, 200);
    }
    let h = chat::host(dir.path());
    let r = c.post_json(&h.url("/api/chats"), &body, None).await;
    r.assert_error(401, "unauthorized");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    c.post_json(&h.url("/api/chats"), &body, Some("wrong"))
        .await
        .assert_error(403, "forbidden");
    let d = create(&c, &h, &body).await;
    let msg = json!({"role": "user", "content": "x"});
    let url = h.url(&format!("/api/dialog/messages?id={}", d.id));
    c.post_json(&url, &msg, None)
        .await
        .assert_error(401, "unauthorized");
    c.post_json(&url, &msg, Some("wrong"))
        .await
        .assert_error(403, "forbidden");
    let del = h.url(&format!("/api/dialog?id={}", d.id));
    c.delete(&del, None).await.assert_error(401, "unauthorized");
    c.delete(&del, Some("wrong"))
        .await
        .assert_error(403, "forbidden");
    // Nothing changed by the refused calls.
    let still: Dialog = c.get(&del).await.json();
    assert!(still.messages.is_empty());

    // The token may also come from the environment, as Spin reads it.
    let dir2 = temp_dir();
    let h2 = HostBuilder::new(component("chat"), dir2.path())
        .env("SPIN_VARIABLE_CHAT_ADMIN_TOKEN", "from-env")
        .start();
    assert_eq!(
        c.post_json(&h2.url("/api/chats"), &body, Some("from-env"))
            .await
            .status,
        201
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn append_and_delete_keep_records_consistent() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let d = create(&c, &h, &json!({"chatName": "grow"})).await;
    for i in 0..5 {
        let r = chat::append(
            &c,
            &h,
            &d.id,
            &json!({"role": "user", "content": format!("m{i}")}),
        )
        .await;
        assert_eq!(r.status, 201);
        let m: Message = r.json();
        assert_eq!(m.content, format!("m{i}"));
    }
    // Appending by GUID works too; a duplicate message id is refused.
    let fixed = json!({"role": "tool", "content": "t", "id": "fixed"});
    let r = chat::append(&c, &h, &d.guid, &fixed).await;
    assert_eq!(r.status, 201, "{}", r.text());
    chat::append(&c, &h, &d.guid, &fixed)
        .await
        .assert_error(409, "already_exists");
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    assert_eq!(got.messages.len(), 6);
    let list: Vec<ChatSummary> = c.get(&h.url("/api/chats")).await.json();
    assert_eq!(list[0].num_messages, 6);
    assert_eq!(list[0].updated, got.updated);

    chat::append(&c, &h, "nope", &json!({"role": "user", "content": "x"}))
        .await
        .assert_error(404, "not_found");
    c.post_json(
        &h.url("/api/dialog/messages"),
        &json!({"role": "user", "content": "x"}),
        Some(TOKEN),
    )
    .await
    .assert_error(400, "missing_field");

    let del = c
        .delete(&h.url(&format!("/api/dialog?id={}", d.id)), Some(TOKEN))
        .await;
    assert_eq!(del.status, 200, "{}", del.text());
    assert_eq!(del.value()["success"], true);
    c.get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .assert_error(404, "not_found");
    c.get(&h.url(&format!("/api/dialog?id={}", d.guid)))
        .await
        .assert_error(404, "not_found");
    c.delete(&h.url(&format!("/api/dialog?id={}", d.id)), Some(TOKEN))
        .await
        .assert_error(404, "not_found");
    assert_eq!(c.get(&h.url("/api/chats")).await.value(), json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn client_chosen_identity_is_kept_and_conflicts_are_409() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let body = json!({
        "id": "imported-1", "GUID": "0b7e6a4c-2f1d-4b8e-9a55-3c2d1e0f9a8b", "chatName": "old",
        "created": "2025-03-01T10:00:00+01:00", "updated": "2025-03-01T09:30:00Z",
        "messages": [{"id": "m1", "role": "user", "content": "x", "created": "2025-03-01T09:00:00Z"}]
    });
    let d = create(&c, &h, &body).await;
    assert_eq!(d.id, "imported-1");
    assert_eq!(d.guid, "0b7e6a4c-2f1d-4b8e-9a55-3c2d1e0f9a8b");
    assert_eq!(
        d.created, "2025-03-01T09:00:00.000Z",
        "offsets are normalised to UTC"
    );
    assert_eq!(d.messages[0].id, "m1");
    c.post_json(&h.url("/api/chats"), &body, Some(TOKEN))
        .await
        .assert_error(409, "already_exists");
    let mut same_guid = body.clone();
    same_guid["id"] = json!("imported-2");
    c.post_json(&h.url("/api/chats"), &same_guid, Some(TOKEN))
        .await
        .assert_error(409, "already_exists");
    let list: Vec<ChatSummary> = c.get(&h.url("/api/chats")).await.json();
    assert_eq!(list.len(), 1, "refused creations leave nothing behind");
}
