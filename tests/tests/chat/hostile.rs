//! Chat against hostile and careless writers (issue 22, section 1): whatever a write accepts,
//! every read reads back; one bad record never takes the list down; ids and GUIDs never
//! collide; the list and the export do not load every dialog at once.

use e2e_tests::chat::{self, TOKEN, create};
use e2e_tests::{Client, temp_dir};
use edge_api::chat::{ChatSummary, Dialog};
use edge_api::json::text_depth;
use serde_json::{Value, json};

/// `{"a":{"a":...1...}}`, `levels` objects deep.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |inner, _| json!({ "a": inner }))
}

/// `nested(levels)` as text: serde_json cannot build or parse values beyond 128 levels.
fn nested_text(levels: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels))
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_metadata_is_refused_by_every_write_path_alike() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let d = create(&c, &h, &json!({"chatName": "deep"})).await;
    // The issue's attack: 125 levels were accepted and made the dialog unreadable.
    for levels in [125, 33] {
        let message = json!({"role": "user", "content": "x", "metadata": nested(levels)});
        let e = chat::append(&c, &h, &d.id, &message)
            .await
            .assert_error(400, "invalid_field");
        assert!(e.error.contains("message.metadata"), "{}", e.error);
        let e = c
            .post_json(
                &h.url("/api/chats"),
                &json!({"chatName": "deep", "messages": [message]}),
                Some(TOKEN),
            )
            .await;
        // 125 levels inside a dialog pass the request parser's own limit (invalid_json).
        assert_eq!(e.status, 400, "{}", e.text());
        let code = e.value()["error_code"].clone();
        assert!(code == "invalid_field" || code == "invalid_json", "{code}");
    }
    // The limit itself is accepted, by both paths, and reads back.
    let edge = json!({"role": "user", "content": "edge", "metadata": nested(32)});
    let r = chat::append(&c, &h, &d.id, &edge).await;
    assert_eq!(r.status, 201, "{}", r.text());
    create(&c, &h, &json!({"chatName": "edge", "messages": [edge]})).await;
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    assert_eq!(got.messages.len(), 1);
    assert_eq!(
        got.messages[0].metadata.clone().map(Value::Object),
        Some(nested(32))
    );
    assert_eq!(c.get(&h.url("/api/chats")).await.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_stored_too_deep_before_the_fix_still_reads_back() {
    e2e_tests::redis::assert_not_in_redis_pass("writes the SQLite file itself");
    let dir = temp_dir();
    let c = Client::new();
    {
        // Create the store file, then plant what the old append wrote for the attack.
        let h = chat::host(dir.path());
        create(&c, &h, &json!({"chatName": "neighbour"})).await;
        h.stop();
    }
    let record = format!(
        r#"{{"id":"legacy","chatName":"old","messages":[{{"id":"m1","role":"user","content":"deep","created":"2025-01-01T00:00:00.000Z","metadata":{}}}],"created":"2025-01-01T00:00:00.000Z","updated":"2025-01-01T00:00:00.000Z","GUID":"0b6f8f54-8a55-4d41-9c8e-2b1f7d0c9a10"}}"#,
        nested_text(125)
    );
    assert_eq!(text_depth(record.as_bytes()), 128);
    assert!(
        serde_json::from_str::<Value>(&record).is_err(),
        "too deep for a default JSON parser, as the old read path was"
    );
    let db = rusqlite::Connection::open(dir.path().join("sqlite_key_value.db")).unwrap();
    db.execute(
        "INSERT INTO spin_key_value (store, key, value) VALUES ('default', 'chat/dialog/legacy', ?1)",
        [record.as_bytes()],
    )
    .unwrap();
    drop(db);

    let h = chat::host(dir.path());
    let r = c.get(&h.url("/api/dialog?id=legacy")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(text_depth(&r.body), 128, "the metadata comes back whole");
    let list = c.get(&h.url("/api/chats")).await;
    let list: Vec<ChatSummary> = list.json();
    assert_eq!(list.len(), 2);
    let r = chat::append(
        &c,
        &h,
        "legacy",
        &json!({"role": "assistant", "content": "still writable"}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c.delete(&h.url("/api/dialog?id=legacy"), Some(TOKEN)).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_record_is_skipped_and_counted_by_the_list() {
    e2e_tests::redis::assert_not_in_redis_pass("writes the SQLite file itself");
    let dir = temp_dir();
    let c = Client::new();
    let good = {
        let h = chat::host(dir.path());
        let d = create(&c, &h, &json!({"chatName": "fine"})).await;
        h.stop();
        d
    };
    let db = rusqlite::Connection::open(dir.path().join("sqlite_key_value.db")).unwrap();
    for (key, value) in [
        ("chat/dialog/garbage", b"{not json".to_vec()),
        // Deeper than any write ever produced: refused without exhausting the stack.
        ("chat/dialog/abyss", nested_text(100_000).into_bytes()),
    ] {
        db.execute(
            "INSERT INTO spin_key_value (store, key, value) VALUES ('default', ?1, ?2)",
            rusqlite::params![key, value],
        )
        .unwrap();
    }
    drop(db);
    let h = chat::host(dir.path());
    for _ in 0..2 {
        let r = c.get(&h.url("/api/chats")).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("x-unreadable-records"), Some("2"));
        let list: Vec<ChatSummary> = r.json();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].id, good.id);
    }
    // Read on its own, a broken record is a 500 that names it, not a crash.
    for id in ["garbage", "abyss"] {
        let e = c
            .get(&h.url(&format!("/api/dialog?id={id}")))
            .await
            .assert_error(500, "store_error");
        assert!(
            e.error.contains(&format!("chat/dialog/{id}")),
            "{}",
            e.error
        );
    }
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", good.id)))
        .await
        .json();
    assert_eq!(got, good);
}

#[tokio::test(flavor = "multi_thread")]
async fn ids_and_guids_never_collide() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let victim = create(&c, &h, &json!({"chatName": "victim"})).await;
    // The attack: a new dialog whose id is the victim's GUID.
    let e = c
        .post_json(
            &h.url("/api/chats"),
            &json!({"chatName": "thief", "id": victim.guid}),
            Some(TOKEN),
        )
        .await
        .assert_error(409, "already_exists");
    assert!(e.error.contains(&victim.guid), "{}", e.error);
    // A UUID-shaped id that is not its own GUID would shadow someone's GUID later.
    c.post_json(
        &h.url("/api/chats"),
        &json!({"chatName": "x", "id": uuid::Uuid::new_v4().to_string(), "GUID": uuid::Uuid::new_v4().to_string()}),
        Some(TOKEN),
    )
    .await
    .assert_error(400, "invalid_field");
    // A UUID-shaped id alone becomes the dialog's GUID too.
    let id = uuid::Uuid::new_v4().to_string();
    let own = create(&c, &h, &json!({"chatName": "own", "id": id})).await;
    assert_eq!(
        (own.id.as_str(), own.guid.as_str()),
        (id.as_str(), id.as_str())
    );
    // The victim's GUID still leads to the victim, for reads and writes.
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", victim.guid)))
        .await
        .json();
    assert_eq!(got.id, victim.id);

    // A duplicate client-chosen id is named as sent.
    create(&c, &h, &json!({"chatName": "hello", "id": "welcome"})).await;
    let e = c
        .post_json(
            &h.url("/api/chats"),
            &json!({"chatName": "again", "id": "welcome"}),
            Some(TOKEN),
        )
        .await
        .assert_error(409, "already_exists");
    assert!(e.error.contains("`welcome`"), "{}", e.error);
}

/// The issue's second attack: 140 chats of one ~1 MB message each made the list and the
/// export fail. The list now reads summaries only, pages, and the export streams.
#[tokio::test(flavor = "multi_thread")]
async fn big_dialogs_neither_break_the_list_nor_the_export() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let content = "x".repeat(1_000_000);
    for i in 0..140 {
        create(
            &c,
            &h,
            &json!({"chatName": format!("big{i:03}"), "messages": [{"role": "user", "content": content}]}),
        )
        .await;
    }
    let r = c.get(&h.url("/api/chats")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-total-count"), Some("140"));
    let all: Vec<ChatSummary> = r.json();
    assert_eq!(all.len(), 140);
    assert!(all.iter().all(|s| s.num_messages == 1));

    // Pages are slices of the same order.
    let page = |q: &str| {
        let url = h.url(&format!("/api/chats?{q}"));
        let c = c.clone();
        async move { c.get(&url).await }
    };
    let first: Vec<ChatSummary> = page("limit=50").await.json();
    let third: Vec<ChatSummary> = page("limit=50&offset=100").await.json();
    assert_eq!(first, all[..50]);
    assert_eq!(third, all[100..]);
    let past: Vec<ChatSummary> = page("limit=5&offset=1000").await.json();
    assert!(past.is_empty());
    for bad in [
        "limit=0",
        "limit=1001",
        "limit=-1",
        "limit=ten",
        "offset=-3",
    ] {
        page(bad).await.assert_error(400, "invalid_field");
    }

    // A dialog stops growing at 8 MiB: the append that would pass it is refused.
    let message = json!({"role": "user", "content": content});
    let mut refused = None;
    for _ in 0..9 {
        let r = chat::append(&c, &h, &all[0].id, &message).await;
        if r.status != 201 {
            refused = Some(r);
            break;
        }
    }
    let refused = refused.expect("a dialog cannot grow past 8 MiB");
    refused.assert_error(413, "payload_too_large");
    let grown: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", all[0].id)))
        .await
        .json();
    assert_eq!(grown.messages.len(), 8, "every accepted append reads back");

    let file = dir.path().join("export.json");
    let exported = e2e_tests::export_chats(&h.base_url(), &file);
    assert_eq!(exported.len(), 140);
    assert_eq!(exported[0].messages.len(), 8);
}
