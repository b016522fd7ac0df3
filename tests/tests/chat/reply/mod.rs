//! Chats that answer (issue 60): `POST /api/dialog/reply?id=` under `runtime-host`, over real
//! HTTP, with the real language model (SmolLM2-135M-Instruct from its GGUF file). Replies are
//! kept short (8-16 tokens) and greedy where their text is compared. What the route refuses
//! is in `refusals`.

mod refusals;

use e2e_tests::chat::{self, create};
use e2e_tests::{Client, temp_dir};
use edge_api::chat::{Dialog, Message, Role};
use edge_api::language_model::{CONTEXT_TOKENS, MODEL};
use serde_json::{Value, json};
use std::time::Duration;

/// Short, greedy: the same dialog always gets the same reply.
fn greedy(max_tokens: u32) -> Value {
    json!({"max_tokens": max_tokens, "temperature": 0})
}

async fn dialog(c: &Client, h: &e2e_tests::Host, id: &str) -> Dialog {
    c.get(&h.url(&format!("/api/dialog?id={id}"))).await.json()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_is_generated_appended_once_and_read_back() {
    let dir = temp_dir();
    let h = chat::with_model(dir.path()).start();
    let c = Client::new();
    let body = json!({"chatName": "answers", "messages": [
        {"role": "system", "content": "You are a helpful assistant. Answer in one short sentence."},
        {"role": "user", "content": "Name a colour of the sky."}
    ]});
    let d = create(&c, &h, &body).await;
    let r = chat::reply(&c, &h, &d.id, &greedy(12)).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let answer = r.value();
    let message: Message = serde_json::from_value(answer["message"].clone()).unwrap();
    assert_eq!(message.role, Role::Assistant);
    assert_eq!(message.model.as_deref(), Some(MODEL));
    assert!(!message.content.trim().is_empty(), "{answer}");
    let generated = answer["usage"]["generatedTokens"].as_u64().unwrap();
    let prompt = answer["usage"]["promptTokens"].as_u64().unwrap();
    assert!((1..=12).contains(&generated), "{answer}");
    // Two turns and the opening of the assistant's: a few dozen tokens.
    assert!((20..200).contains(&prompt), "{answer}");
    assert_eq!(
        answer["context"],
        json!({"messagesUsed": 2, "messagesLeftOut": 0})
    );

    // Stored as the dialog's third message, exactly as answered; the summary follows.
    let got = dialog(&c, &h, &d.id).await;
    assert_eq!(got.messages.len(), 3);
    assert_eq!(got.messages[2], message);
    assert!(got.updated >= message.created);
    let list: Value = c.get(&h.url("/api/chats")).await.value();
    assert_eq!(list[0]["numMessages"], 3);

    // Greedy decoding: the same dialog elsewhere gets the same words (by its GUID here).
    let twin = create(&c, &h, &body).await;
    let again = chat::reply(&c, &h, &twin.guid, &greedy(12)).await;
    assert_eq!(again.status, 201, "{}", again.text());
    assert_eq!(
        again.value()["message"]["content"],
        message.content.as_str()
    );

    // The reply is part of the next prompt: the dialog grew by the answer and a question.
    let next = json!({"role": "user", "content": "And at night?"});
    assert_eq!(chat::append(&c, &h, &d.id, &next).await.status, 201);
    let second = chat::reply(&c, &h, &d.id, &greedy(8)).await;
    assert_eq!(second.status, 201, "{}", second.text());
    let grown = second.value()["usage"]["promptTokens"].as_u64().unwrap();
    assert!(
        grown > prompt + generated,
        "{grown} after {prompt} + {generated}"
    );
    assert_eq!(second.value()["context"]["messagesUsed"], 4);
    assert_eq!(dialog(&c, &h, &d.id).await.messages.len(), 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_replies_and_appends_are_each_kept_once() {
    let dir = temp_dir();
    let h = chat::with_model(dir.path()).start();
    let c = Client::new();
    let d = create(
        &c,
        &h,
        &json!({"chatName": "busy", "messages": [{"role": "user", "content": "Say hello."}]}),
    )
    .await;
    let params = greedy(8);
    let replies = (0..4).map(|_| chat::reply(&c, &h, &d.id, &params));
    let extra: Vec<_> = (0..4)
        .map(|i| json!({"role": "user", "content": format!("more {i}")}))
        .collect();
    let appends = extra.iter().map(|m| chat::append(&c, &h, &d.id, m));
    let (replies, appends) = tokio::join!(
        futures::future::join_all(replies),
        futures::future::join_all(appends)
    );
    let mut ids = Vec::new();
    for r in &replies {
        assert_eq!(r.status, 201, "{}", r.text());
        ids.push(r.value()["message"]["id"].as_str().unwrap().to_owned());
    }
    for r in &appends {
        assert_eq!(r.status, 201, "{}", r.text());
        ids.push(r.value()["id"].as_str().unwrap().to_owned());
    }
    let got = dialog(&c, &h, &d.id).await;
    assert_eq!(got.messages.len(), 9, "nothing lost, nothing doubled");
    for id in &ids {
        let times = got.messages.iter().filter(|m| &m.id == id).count();
        assert_eq!(times, 1, "message {id}");
    }
    let generated = got.messages.iter().filter(|m| m.role == Role::Assistant);
    assert_eq!(generated.count(), 4);
}

/// A dialog of `turns` alternating questions and answers of `text`, after a system message.
fn long_dialog(turns: usize, text: &str) -> Value {
    let mut messages = vec![json!({"role": "system", "content": "Answer briefly."})];
    for i in 0..turns {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        messages.push(json!({"role": role, "content": format!("{i}: {text}")}));
    }
    json!({"chatName": "long", "messages": messages})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_past_the_context_is_answered_from_its_latest_messages() {
    let dir = temp_dir();
    // Each reply reads a prompt of nearly the whole context (2,048 tokens): seconds on two
    // idle cores, and several times that on a loaded CI machine, so past the default 30 s.
    let h = chat::with_model(dir.path())
        .arg("--deadline")
        .arg("120s")
        .start();
    // And the client waits as long as the deadline (and a little for the answer).
    let c = Client::waiting(Duration::from_secs(130));
    // English-like text (about 4 bytes a token) and digits (about 2: the component's first
    // estimate is too long and it tries again with fewer messages). Each dialog is several
    // times the context.
    let words = "the quick brown fox jumps over the lazy dog near the river bank ".repeat(6);
    let digits = "7 1 8 2 8 1 8 2 8 4 5 9 0 4 5 2 3 5 3 6 ".repeat(10);
    for text in [words, digits] {
        let d = create(&c, &h, &long_dialog(41, &text)).await;
        let r = chat::reply(&c, &h, &d.id, &greedy(16)).await;
        assert_eq!(r.status, 201, "{}", r.text());
        let answer = r.value();
        let used = answer["context"]["messagesUsed"].as_u64().unwrap();
        let left_out = answer["context"]["messagesLeftOut"].as_u64().unwrap();
        assert_eq!(used + left_out, 42, "{answer}");
        assert!(left_out > 0, "the whole dialog cannot fit: {answer}");
        assert!(
            used >= 3,
            "the system message and the latest turns: {answer}"
        );
        let prompt = answer["usage"]["promptTokens"].as_u64().unwrap() as usize;
        assert!(prompt + 16 <= CONTEXT_TOKENS, "{answer}");
        // Most of the context is used, not a sliver of it.
        assert!(prompt > CONTEXT_TOKENS / 3, "{answer}");
        assert_eq!(dialog(&c, &h, &d.id).await.messages.len(), 43);
    }

    // A latest message longer than the whole context is refused, and nothing is stored.
    let huge = "word ".repeat(5000);
    let d = create(
        &c,
        &h,
        &json!({"chatName": "huge", "messages": [{"role": "user", "content": huge}]}),
    )
    .await;
    let e = chat::reply(&c, &h, &d.id, &greedy(8))
        .await
        .assert_error(400, "input_too_long");
    assert!(e.error.contains("context"), "{}", e.error);
    assert_eq!(dialog(&c, &h, &d.id).await.messages.len(), 1);
}
