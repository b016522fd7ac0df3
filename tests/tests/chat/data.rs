//! Chat data over time: concurrency, restarts, crashes, import/export, and Spin's file layout.

use e2e_tests::chat::{self, TOKEN, create};
use e2e_tests::{Client, Host, Stack, host_binary, temp_dir};
use edge_api::chat::{ChatSummary, Dialog};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_are_all_kept_exactly_once() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let c = Client::new();
    let d = create(&c, &h, &json!({"chatName": "race"})).await;
    let url = h.url(&format!("/api/dialog/messages?id={}", d.id));
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let (c, url) = (c.clone(), url.clone());
            tokio::spawn(async move {
                let r = c
                    .post_json(
                        &url,
                        &json!({"role": "user", "content": format!("msg-{i}")}),
                        Some(TOKEN),
                    )
                    .await;
                assert_eq!(r.status, 201, "{}", r.text());
            })
        })
        .collect();
    for t in futures::future::join_all(tasks).await {
        t.unwrap();
    }
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    assert_eq!(got.messages.len(), 32);
    let contents: HashSet<_> = got.messages.iter().map(|m| m.content.clone()).collect();
    assert_eq!(contents, (0..32).map(|i| format!("msg-{i}")).collect());
    let ids: HashSet<_> = got.messages.iter().map(|m| m.id.clone()).collect();
    assert_eq!(ids.len(), 32, "message ids are unique");
    let list: Vec<ChatSummary> = c.get(&h.url("/api/chats")).await.json();
    assert_eq!(list[0].num_messages, 32);
}

#[tokio::test(flavor = "multi_thread")]
async fn data_survives_graceful_restart_and_kill_9() {
    let dir = temp_dir();
    let c = Client::new();
    let h = chat::host(dir.path());
    let a = create(
        &c,
        &h,
        &json!({"chatName": "kept", "messages": [{"role": "user", "content": "1"}]}),
    )
    .await;
    let status = h.stop();
    assert!(status.success(), "graceful stop exits 0: {status:?}");

    let h = chat::host(dir.path());
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", a.id)))
        .await
        .json();
    assert_eq!(got, a);
    // A write acknowledged just before a crash is still there afterwards.
    let r = chat::append(&c, &h, &a.id, &json!({"role": "assistant", "content": "2"})).await;
    assert_eq!(r.status, 201);
    h.kill9();

    let h = chat::host(dir.path());
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", a.guid)))
        .await
        .json();
    assert_eq!(got.messages.len(), 2);
    assert_eq!(got.messages[1].content, "2");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_then_import_reproduces_every_dialog() {
    let src_dir = temp_dir();
    let src = chat::host(src_dir.path());
    let c = Client::new();
    for i in 0..3 {
        let r = c.post_json(&src.url("/api/chats"), &json!({"chatName": format!("d{i}"), "messages": [{"role": "user", "content": format!("q{i}"), "metadata": {"n": i}}]}), Some(TOKEN)).await;
        assert_eq!(r.status, 201);
    }
    let file = src_dir.path().join("export.json");
    let exported = e2e_tests::export_chats(&src.base_url(), &file);
    assert_eq!(exported.len(), 3);

    let dst_dir = temp_dir();
    let dst = chat::host(dst_dir.path());
    let import = |token: &str| {
        Command::new(host_binary())
            .args(["chats", "import"])
            .arg(&file)
            .args(["--url", &dst.base_url(), "--token", token])
            .output()
            .unwrap()
    };
    let out = import(TOKEN);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("imported 3 dialogs"));
    for d in &exported {
        let got: Dialog = c
            .get(&dst.url(&format!("/api/dialog?id={}", d.id)))
            .await
            .json();
        assert_eq!(&got, d, "dialog survives the round trip unchanged");
    }
    // Importing again changes nothing and says so.
    let out = import(TOKEN);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipped 3"));
    let list: Vec<ChatSummary> = c.get(&dst.url("/api/chats")).await.json();
    assert_eq!(list.len(), 3);
    // A wrong token fails loudly.
    let out = import("wrong");
    assert!(!out.status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn sample_dialogs_import_cleanly() {
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let samples = e2e_tests::workspace_root().join("components/chat/samples/dialogs.json");
    let out = Command::new(host_binary())
        .args(["chats", "import"])
        .arg(&samples)
        .args(["--url", &h.base_url(), "--token", TOKEN])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Vec<ChatSummary> = Client::new().get(&h.url("/api/chats")).await.json();
    assert!(list.len() >= 3, "the samples show a new user some data");
    assert!(list.iter().all(|s| s.num_messages > 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn store_file_uses_spins_layout() {
    e2e_tests::redis::assert_not_in_redis_pass("reads the SQLite file itself");
    let dir = temp_dir();
    let h = chat::host(dir.path());
    let d = create(&Client::new(), &h, &json!({"chatName": "layout"})).await;
    h.stop();
    let db = rusqlite::Connection::open(dir.path().join("sqlite_key_value.db")).unwrap();
    let stored: Vec<u8> = db
        .query_row(
            "SELECT value FROM spin_key_value WHERE store = 'default' AND key = ?1",
            [format!("chat/dialog/{}", d.id)],
            |r| r.get(0),
        )
        .unwrap();
    let back: Dialog = serde_json::from_slice(&stored).unwrap();
    assert_eq!(back, d);
    let pk: String = db
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'spin_key_value'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(pk.contains("PRIMARY KEY (store, key)"), "{pk}");
}

/// A dialog grown by appends of `chunk` characters until the next would pass the dialog
/// size limit: the largest dialog the write API accepts this way.
async fn dialog_at_the_limit(c: &Client, h: &Host, chunk: usize) -> Dialog {
    let d = chat::create(c, h, &json!({"chatName": "at the limit", "messages": []})).await;
    loop {
        let message = json!({"role": "assistant", "content": "x".repeat(chunk)});
        let r = chat::append(c, h, &d.id, &message).await;
        if r.status != 201 {
            assert_eq!(r.status, 413, "{}", r.text());
            break;
        }
    }
    let got: Dialog = c
        .get(&h.url(&format!("/api/dialog?id={}", d.id)))
        .await
        .json();
    let size = serde_json::to_vec(&got).unwrap().len();
    assert!(
        size > edge_api::chat::MAX_DIALOG_BYTES - chunk - 1024,
        "{size} bytes"
    );
    got
}

/// Whatever the write API accepts, export writes and import restores (issue 45, section 4):
/// a dialog grown by appends to the size limit, one of 7.6 MB and one of the most messages
/// a dialog may hold, each created whole, and more dialogs than one listing page holds go
/// out of a `serve`d chat (on the pass's store) and into `up`'s, unchanged.
#[tokio::test(flavor = "multi_thread")]
async fn dialogs_at_the_limits_export_and_import_unchanged() {
    let src_dir = temp_dir();
    let src = chat::builder(src_dir.path())
        .arg("--max-body")
        .arg((16 << 20).to_string())
        .start();
    let c = Client::new();
    let grown = dialog_at_the_limit(&c, &src, 900_000).await;
    let big = json!({"chatName": "created whole", "messages": (0..8)
        .map(|i| json!({"role": "user", "content": format!("{i}{}", "y".repeat(950_000))}))
        .collect::<Vec<_>>()});
    let big = chat::create(&c, &src, &big).await;
    let many = json!({"chatName": "most messages", "messages": (0..edge_api::chat::MAX_MESSAGES_PER_DIALOG)
        .map(|i| json!({"role": "user", "content": format!("m{i}")}))
        .collect::<Vec<_>>()});
    let many = chat::create(&c, &src, &many).await;
    // More dialogs than a page of `/api/chats` lists, loaded by an import.
    let small: Vec<Value> = (0..edge_api::chat::MAX_PAGE + 1)
        .map(|i| json!({"chatName": format!("small {i}"), "messages": [{"role": "user", "content": "hi"}]}))
        .collect();
    let small_file = src_dir.path().join("small.json");
    std::fs::write(&small_file, serde_json::to_vec(&small).unwrap()).unwrap();
    let import = |file: &std::path::Path, url: &str, token: &str| {
        let out = Command::new(host_binary())
            .args(["chats", "import"])
            .arg(file)
            .args(["--url", url, "--token", token])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    import(&small_file, &src.base_url(), TOKEN);

    let file = src_dir.path().join("export.json");
    let exported = e2e_tests::export_chats(&src.base_url(), &file);
    assert_eq!(
        exported.len(),
        small.len() + 3,
        "every dialog, past one page"
    );
    for d in [&grown, &big, &many] {
        assert!(exported.contains(d), "{} exported unchanged", d.id);
    }

    // Into `up`'s chat, with its defaults.
    let stack = Stack::up(&[], 8);
    let said = import(&file, &stack.chat(""), &stack.admin_token);
    assert!(
        said.contains(&format!("imported {} dialogs", exported.len())),
        "{said}"
    );
    for d in &exported {
        let got: Dialog = c
            .get(&stack.chat(&format!("/api/dialog?id={}", d.id)))
            .await
            .json();
        assert_eq!(&got, d, "dialog {} restored unchanged", d.id);
    }
}
