//! `runtime-host up` deploys textgen by default, like the other example models: registered,
//! healthy, on its own port and under the app port's `/models/textgen/`, listed by the
//! console, and tried there in a real browser (Chromium; that part skipped, loudly, where it
//! is not installed).

use e2e_tests::browser::Browser;
use e2e_tests::{Client, Stack};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn up_deploys_textgen_and_the_console_lists_it() {
    let stack = Stack::up(&[], 8);
    let c = Client::new();
    let port = stack.model_port("textgen").await;
    let own = format!("http://127.0.0.1:{port}");
    let health = c.get(&format!("{own}/health")).await;
    assert_eq!(health.status, 200, "{}", health.text());

    let request = json!({"input_type": "text", "data": {"text": "Say hi.", "max_tokens": 6}});
    let direct = c
        .post_json(&format!("{own}/predict"), &request, None)
        .await
        .value();
    let routed = c
        .post_json(&stack.app("/models/textgen/predict"), &request, None)
        .await
        .value();
    assert_eq!(direct["success"], true, "{direct}");
    // Greedy by default: the same request, the same reply, whichever way it came.
    assert_eq!(routed["results"], direct["results"], "{routed}");

    let config = c.get(&stack.app("/console.json")).await.value();
    let models = config["models"].as_array().unwrap();
    assert!(models.contains(&json!("textgen")), "{config}");
    try_it_in_the_console(&stack, &c).await;
}

/// The console's try page: the first example, run from its button, shows the reply the
/// model gives that example filled into its request format.
async fn try_it_in_the_console(stack: &Stack, c: &Client) {
    let Some(browser) = Browser::start("textgen in the console", 1280, 1000).await else {
        return;
    };
    let examples = c
        .get(&stack.app("/models/textgen/test_examples"))
        .await
        .value();
    let first = &examples["examples"][0];
    let mut request = examples["usage_instructions"]["body_format"].clone();
    request["data"]["text"] = first["text"].clone();
    let answer = c
        .post_json(&stack.app("/models/textgen/predict"), &request, None)
        .await
        .value();
    let reply = answer["results"]["text"].as_str().unwrap().to_owned();
    browser.goto(&stack.app("/#/try/textgen")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    browser.click("button.example").await;
    let shown = browser
        .wait_text("#result-area", |t| t.contains("Raw JSON"))
        .await;
    let name = first["name"].as_str().unwrap();
    assert!(shown.contains(&format!("Result: {name}")), "{shown}");
    // The reply's first words (the page may wrap or trim its white space).
    let start: String = reply
        .split_whitespace()
        .take(4)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(shown.contains(&start), "{start:?} shown: {shown}");
    browser.screenshot("try-textgen").await;
    browser.close().await;
}
