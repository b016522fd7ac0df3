//! The chats page, long lists and the pages' accessibility, in the browser.

use super::*;

/// The chat list, a dialog, a refused and an accepted append, a service's error.
pub(crate) async fn chats(browser: &Browser, stack: &Stack, c: &Client) {
    // Chats: the list, then the sample dialog's messages by role.
    browser.goto(&stack.app("/#/chats")).await;
    browser
        .wait_text("table.chats", |t| t.contains("Welcome to the chat service"))
        .await;
    browser.screenshot("chats").await;
    browser.click("table.chats a[href='#/chats/welcome']").await;
    let dialog: Value = c.get(&stack.app("/api/dialog?id=welcome")).await.value();
    let messages = browser
        .wait_text("#messages", |t| {
            t.contains("What can I do with this service?")
        })
        .await;
    for m in dialog["messages"].as_array().unwrap() {
        assert!(
            messages.contains(m["content"].as_str().unwrap()),
            "{messages}"
        );
    }
    let shown = browser
        .eval("return document.querySelectorAll('#messages li').length")
        .await;
    assert_eq!(shown, json!(dialog["messages"].as_array().unwrap().len()));

    // A wrong admin token: the chat service's 403 message, as it wrote it.
    let refused = c
        .post_json(
            &stack.chat("/api/dialog/messages?id=welcome"),
            &json!({"role": "user", "content": "x"}),
            Some("wrong-token"),
        )
        .await;
    let refusal = refused.assert_error(403, "forbidden");
    browser.type_into("#admin-token", "wrong-token").await;
    browser
        .type_into("#message-content", "Hello from the browser")
        .await;
    browser.click("#append-form button[type=submit]").await;
    let status = browser
        .wait_text("#append-status", |t| t.contains("Could not append"))
        .await;
    assert!(
        status.contains(&refusal.error),
        "{status} / {}",
        refusal.error
    );
    browser.screenshot("dialog-wrong-token").await;

    // The right token appends, and the message is stored.
    browser.type_into("#admin-token", &stack.admin_token).await;
    browser.click("#append-form button[type=submit]").await;
    browser
        .wait_text("#append-status", |t| t.contains("Appended"))
        .await;
    browser
        .wait_text("#messages", |t| t.contains("Hello from the browser"))
        .await;
    let stored: Value = c.get(&stack.app("/api/dialog?id=welcome")).await.value();
    let last = stored["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "Hello from the browser");
    assert_eq!(last["role"], "user");
    browser.screenshot("dialog").await;

    // An error from a service is its message on the page, never a blank one.
    browser.goto(&stack.app("/#/chats/no-such-dialog")).await;
    let missing = c.get(&stack.app("/api/dialog?id=no-such-dialog")).await;
    let missing = missing.assert_error(404, "not_found");
    let shown = browser.wait_text("main .error", |t| !t.is_empty()).await;
    assert!(shown.contains(&missing.error), "{shown}");
}

/// Many chats and a long dialog stay usable: a page at a time.
pub(crate) async fn long_lists(browser: &Browser, stack: &Stack, c: &Client) {
    // Many chats and a long dialog: a page at a time, "show more" for the rest.
    let long: Vec<Value> = (0..250)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message number {i}")}))
        .collect();
    let created = c
        .post_json(
            &stack.chat("/api/chats"),
            &json!({"id": "long", "chatName": "A long dialog", "messages": long}),
            Some(&stack.admin_token),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text());
    for i in 0..60 {
        let r = c
            .post_json(
                &stack.chat("/api/chats"),
                &json!({"chatName": format!("Chat {i}"), "messages": []}),
                Some(&stack.admin_token),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let total = c
        .get(&stack.chat("/api/chats"))
        .await
        .value()
        .as_array()
        .unwrap()
        .len();
    let rows = "return document.querySelectorAll('table.chats tbody tr').length";
    browser.goto(&stack.app("/#/chats")).await;
    browser
        .wait_text(".pager", |t| {
            t.contains(&format!("Showing 50 of {total} chats"))
        })
        .await;
    assert_eq!(browser.eval(rows).await, json!(50));
    browser.click(".pager button.more").await;
    browser
        .wait_text(".pager", |t| {
            t.contains(&format!("Showing {total} of {total} chats"))
        })
        .await;
    assert_eq!(browser.eval(rows).await, json!(total));
    let more_hidden = "return document.querySelector('.pager button.more').hidden";
    assert_eq!(browser.eval(more_hidden).await, json!(true));
    browser.type_into("#chat-filter", "long dialog").await;
    browser
        .wait_text("table.chats", |t| t.contains("A long dialog"))
        .await;
    assert_eq!(browser.eval(rows).await, json!(1));
    browser.goto(&stack.app("/#/chats/long")).await;
    browser
        .wait_text(".pager", |t| t.contains("Showing 100 of 250 messages"))
        .await;
    browser.click(".pager button.more").await;
    browser
        .wait_text(".pager", |t| t.contains("Showing 200 of 250 messages"))
        .await;
    let last_shown =
        "return document.querySelector('#messages li:last-child .content').textContent";
    assert_eq!(browser.eval(last_shown).await, json!("message number 199"));
}

/// Contrast, labels, focus, a phone-width screen.
pub(crate) async fn accessibility(browser: &Browser, stack: &Stack) {
    // Contrast: every visible text on each page at WCAG AA or better.
    for page in [
        "/#/models",
        "/#/models/molprop",
        "/#/try/molprop",
        "/#/chats/welcome",
    ] {
        browser.goto(&stack.app(page)).await;
        browser.wait_text("main h1", |t| !t.is_empty()).await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(browser.low_contrast_texts().await, json!([]), "{page}");
    }
    // The check itself: grey #999 on white (2.8:1) is caught.
    browser
        .eval("const p = document.createElement('p'); p.style.color = '#999'; p.textContent = 'pale'; document.querySelector('main').append(p); return null")
        .await;
    let caught = browser.low_contrast_texts().await;
    assert!(caught.to_string().contains("pale"), "{caught}");

    // Every form control has a label; navigation moves the focus to the new page's heading.
    browser.goto(&stack.app("/#/try/molprop")).await;
    browser.wait_text("#predict-form", |t| !t.is_empty()).await;
    let unlabelled = browser
        .eval(
            "return [...document.querySelectorAll('input, select, textarea')]
               .filter((e) => !e.labels || e.labels.length === 0).map((e) => e.id)",
        )
        .await;
    assert_eq!(unlabelled, json!([]), "controls without a label");
    browser.click("nav a[data-section='chats']").await;
    browser.wait_text("main h1", |t| t == "Chats").await;
    let focused = browser
        .eval("return document.activeElement.textContent")
        .await;
    assert_eq!(focused, json!("Chats"));

    // The models page once the models have served requests (the README's picture).
    browser.goto(&stack.app("/#/models")).await;
    browser
        .wait_text("#served-models", |t| {
            t.contains("molprop") && t.contains("Requests")
        })
        .await;
    browser.screenshot("models-in-use").await;

    // A phone-width screen: nothing wider than the screen but the tables' own scroll boxes.
    phone_width(browser).await;
    browser.goto(&stack.app("/#/models")).await;
    browser
        .wait_text("#registrations table", |t| {
            t.contains("runtime-host/molprop")
        })
        .await;
    assert_no_sideways_scroll(browser).await;
    browser.screenshot("models-phone").await;
}
