//! `runtime-host up` deploys textgen by default, like the other example models: registered,
//! healthy, on its own port and under the app port's `/models/textgen/`, and listed by the
//! console.

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
}
