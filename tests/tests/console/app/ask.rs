//! The dialog page's box that asks the language model (issue 60), in the browser against a
//! real `up`, whose chat service is granted the model: a message written in the box is
//! appended, the model's reply is generated and stored after it, and both appear on the page.

use super::*;
use edge_api::chat::{Dialog, Role};

const QUESTION: &str = "Name a colour of the sky.";

pub(crate) async fn ask_the_assistant(browser: &Browser, stack: &Stack, c: &Client) {
    let dialog = json!({"id": "ask", "chatName": "Ask the assistant", "messages": [
        {"role": "system", "content": "You are a helpful assistant. Answer in one short sentence."}
    ]});
    let created = c
        .post_json(&stack.chat("/api/chats"), &dialog, Some(&stack.admin_token))
        .await;
    assert_eq!(created.status, 201, "{}", created.text());
    browser.goto(&stack.app("/#/chats/ask")).await;
    browser.wait_text("#ask-form", |t| !t.is_empty()).await;

    // An empty message is refused on the page: nothing is sent.
    browser.type_into("#admin-token", &stack.admin_token).await;
    browser.click("#ask-form button[type=submit]").await;
    browser
        .wait_text("#ask-status", |t| t.contains("the message is empty"))
        .await;

    // A short reply (8 tokens at most), so the test stays quick on two cores.
    browser.type_into("#ask-content", QUESTION).await;
    browser.type_into("#ask-max-tokens", "8").await;
    browser.click("#ask-form button[type=submit]").await;
    let status = browser
        .wait_text("#ask-status", |t| {
            t.contains("Replied in") || t.contains("no reply")
        })
        .await;
    assert!(status.contains("Replied in"), "{status}");

    // Stored: the question, then the model's reply, each once.
    let stored: Dialog = c.get(&stack.app("/api/dialog?id=ask")).await.json();
    assert_eq!(stored.messages.len(), 3, "{stored:?}");
    let (question, reply) = (&stored.messages[1], &stored.messages[2]);
    assert_eq!(
        (question.role, question.content.as_str()),
        (Role::User, QUESTION)
    );
    assert_eq!(reply.role, Role::Assistant);
    assert_eq!(
        reply.model.as_deref(),
        Some(edge_api::language_model::MODEL)
    );
    assert!(!reply.content.is_empty(), "{stored:?}");

    // Shown: both, the reply last, as the service stored it; the box is empty again.
    let shown = browser
        .wait_text("#messages", |t| t.contains(QUESTION))
        .await;
    assert!(shown.contains(&reply.content), "{shown}");
    let last = browser
        .eval("return document.querySelector('#messages li:last-child .content').textContent")
        .await;
    assert_eq!(last, json!(reply.content));
    let role = browser
        .eval("return document.querySelector('#messages li:last-child .role').textContent")
        .await;
    assert_eq!(role, json!("assistant"));
    let by = browser
        .eval("return document.querySelector('#messages li:last-child .by').textContent")
        .await;
    assert_eq!(
        by,
        json!(edge_api::language_model::MODEL),
        "the model's name as written"
    );
    assert_eq!(
        browser
            .eval("return document.querySelector('#ask-content').value")
            .await,
        json!("")
    );
    browser.screenshot("dialog-ask").await;
}
