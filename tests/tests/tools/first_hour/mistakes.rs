//! Mistakes on the app port get the message that helps (issue 46 §4): a model endpoint
//! without its model's prefix, and a misspelt model, are 404 naming the models (before,
//! `POST` to either was 405 "allowed: GET, HEAD", as the console's catch-all took them).

use e2e_tests::{Client, Stack};

#[tokio::test(flavor = "multi_thread")]
async fn model_endpoints_without_a_model_and_misspelt_models_are_404_naming_the_models() {
    let stack = Stack::up(&[], 8);
    let c = Client::new();
    let body = serde_json::json!({"input_type": "text", "data": {"text": "CCO"}});
    for path in ["/predict", "/models/molprp/predict", "/health"] {
        let r = c.post_json(&stack.app(path), &body, None).await;
        r.assert_error(404, "not_found");
        let why = r.value()["error"].as_str().unwrap_or_default().to_owned();
        assert!(
            why.contains("molprop") && why.contains("iris"),
            "{path}: {why}"
        );
    }
    let r = c.post_json(&stack.app("/predict"), &body, None).await;
    let why = r.value()["error"].as_str().unwrap_or_default().to_owned();
    assert!(why.contains("/models/"), "{why}");
    // GET /health is the host's own health, for load balancers (docs/deploy.md); the POST
    // above, meant for a model, still got the 404 naming the models.
    let r = c.get(&stack.app("/health")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.value(), serde_json::json!({"status": "ok"}));
    // The console's own files keep their method rule.
    let r = c.post_json(&stack.app("/console.json"), &body, None).await;
    assert_eq!(r.status, 405, "{}", r.text());
}
