//! Property-based: requests generated from the OpenAPI documents, valid and invalid, sent to
//! the real services. A request the document calls valid must get a documented status that
//! is neither 400 (unless its error is a rule the document states in prose) nor 5xx; one it
//! calls invalid (a body or query parameter the schema refuses) must get 400. Generation is
//! seeded, so every run sends the same requests; the JSON Schema validator is the judge of
//! what is valid, the generator only proposes.

mod exercise;
mod generate;

use e2e_tests::chat::{self, TOKEN};
use e2e_tests::contract::Contract;
use e2e_tests::{Client, Host, HostBuilder, component, temp_dir};
use exercise::{Op, exercise, op};
use hyper::Method;

/// Requests of each kind per operation.
const CASES: usize = 100;
const MAINTENANCE: &str = "m41nt";

#[tokio::test(flavor = "multi_thread")]
async fn chat_answers_generated_requests_as_its_document_says() {
    let dir = temp_dir();
    let host = chat::host(dir.path());
    let contract = e2e_tests::contract::load("chat");
    let mut create = op(Method::POST, "/api/chats", Some(TOKEN));
    create.prose_rules = &["duplicate"];
    exercise(
        &contract,
        &host,
        vec![
            op(Method::GET, "/api/chats", None),
            create,
            op(Method::GET, "/api/dialog", None),
            op(Method::POST, "/api/dialog/messages", Some(TOKEN)),
            op(Method::DELETE, "/api/dialog", Some(TOKEN)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn registry_answers_generated_requests_as_its_document_says() {
    let dir = temp_dir();
    // The component served directly, so the test knows the maintenance route's secret
    // (`runtime-host registry` makes a fresh one at each start).
    let host = HostBuilder::new(component("registry"), dir.path())
        .variable("registry_maintenance_token", MAINTENANCE)
        .start();
    let contract = e2e_tests::contract::load("registry");
    let with_port = |method, path: &'static str, target: &str| Op {
        target: target.to_owned(),
        ..op(method, path, None)
    };
    exercise(
        &contract,
        &host,
        vec![
            op(Method::POST, "/register", None),
            with_port(Method::POST, "/heartbeat/{port}", "/heartbeat/5100"),
            with_port(Method::DELETE, "/unregister/{port}", "/unregister/5101"),
            op(Method::GET, "/registry", None),
            op(
                Method::POST,
                "/registry/maintenance/processes",
                Some(MAINTENANCE),
            ),
        ],
    )
    .await;
    // Without the secret, the route refuses before it reads the body, as documented: 401
    // with no token (the security scheme), 403 with a wrong one.
    let r = Client::new()
        .post_raw(
            &host.url("/registry/maintenance/processes"),
            b"{}".to_vec(),
            None,
        )
        .await;
    r.assert_error(401, "unauthorized");
    let r = Client::new()
        .post_raw(
            &host.url("/registry/maintenance/processes"),
            b"{}".to_vec(),
            Some("guess"),
        )
        .await;
    r.assert_error(403, "forbidden");
}

/// `/predict` of a model deployment, judged by the document it serves itself.
async fn exercise_model(name: &str, host: &Host) {
    let doc = Client::new().get(&host.url("/openapi.json")).await.value();
    let contract = Contract::from_value(&format!("{name} /openapi.json"), doc);
    let mut predict = op(Method::POST, "/predict", None);
    // Its document says `text` and `smiles` must be equal when both are given.
    predict.prose_rules = &["differs from data.text"];
    exercise(&contract, host, vec![predict]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn models_answer_generated_requests_as_their_own_documents_say() {
    let dirs = [temp_dir(), temp_dir()];
    let molprop = HostBuilder::new(component("molprop"), dirs[0].path()).start();
    exercise_model("molprop", &molprop).await;
    let iris = HostBuilder::new(component("onnx-model"), dirs[1].path())
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir("iris"), "/model")
        .start();
    exercise_model("iris", &iris).await;
}
