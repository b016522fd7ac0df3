//! The API served on a real listener (the guard included) with the real models, as `up`
//! serves it: errors in OpenAI's shape with the right status, a client that goes away stops
//! its generation, a full queue is 503 with `Retry-After`. Needs the models installed
//! (`cargo xtask install-models`; `cargo xtask test` does it first).

use super::{LlmApi, ROUTES};
use host_core::capabilities::llm::generator::{GenerateError, Generator, Prompt, Request};
use host_core::capabilities::llm::sampling::Params;
use host_core::capabilities::llm::{AiModels, not_installed, smollm2};
use host_core::http::listener::PortBinding;
use host_core::http::router::AppRouter;
use host_core::support::token::Token;
use hyper::Method;
use serde_json::{Value, json};
use service_client::{HttpClient, Reply};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKEN: &str = "llm-api-test-token";
const LM: &str = smollm2::NAME;
const EMBEDDING: &str = edge_api::embedding::MODEL;
/// A prompt the model keeps answering for far longer than the tests wait (greedy, 1,000
/// tokens: about 20 s on 2 cores; a counting prompt once used here ends after 121).
const ENDLESS: &str = "Write a very long essay about the history of Rome.";

fn models() -> AiModels {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.data/ai-models");
    let models = AiModels::new(dir);
    for name in [LM, EMBEDDING] {
        let why = not_installed(name, &models.model_dir(name));
        assert!(models.installed(name), "{why}");
    }
    models
}

/// The API on a loopback port of its own; its URL.
async fn serve(models: AiModels) -> String {
    let token = Token::new(TOKEN.to_owned(), "test".to_owned());
    let api = Arc::new(LlmApi::new(models, token, Duration::from_secs(120)));
    let app = Arc::new(AppRouter::default());
    for route in ROUTES {
        app.answer_in_host(route, api.clone());
    }
    let listening = PortBinding::bind("127.0.0.1:0".parse().unwrap(), "test")
        .await
        .unwrap();
    let url = listening.url();
    let forever = std::future::pending::<()>();
    tokio::spawn(listening.serve(app, forever, Duration::from_secs(1)));
    url
}

async fn send(url: &str, method: Method, body: Option<Vec<u8>>, headers: &[(&str, &str)]) -> Reply {
    HttpClient::new(Duration::from_secs(120))
        .send_with(method, url, body, headers)
        .await
        .unwrap()
}

async fn post(url: &str, body: &Value) -> Reply {
    let auth = format!("Bearer {TOKEN}");
    let headers = [("authorization", auth.as_str())];
    send(
        url,
        Method::POST,
        Some(body.to_string().into_bytes()),
        &headers,
    )
    .await
}

/// Asserts an OpenAI error body with `status` and `code`; its message.
fn openai_error(r: &Reply, status: u16, code: &str) -> String {
    let text = String::from_utf8_lossy(&r.body).into_owned();
    assert_eq!(r.status, status, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], code, "{text}");
    let kind = if status >= 500 {
        "server_error"
    } else {
        "invalid_request_error"
    };
    assert_eq!(v["error"]["type"], kind, "{text}");
    v["error"]["message"].as_str().unwrap().to_owned()
}

fn chat(model: &str, content: &str, max_tokens: u32) -> Value {
    json!({
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "temperature": 0,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_openai_errors_with_the_right_status() {
    let base = serve(models()).await;
    let completions = format!("{base}/v1/chat/completions");
    // No token, a wrong one: 401, and the token is never echoed.
    let body = chat(LM, "Hi", 4).to_string().into_bytes();
    let r = send(&completions, Method::POST, Some(body.clone()), &[]).await;
    openai_error(&r, 401, "missing_api_key");
    assert_eq!(r.headers["www-authenticate"], "Bearer");
    let wrong = [("authorization", "Bearer not-the-token")];
    let r = send(&completions, Method::POST, Some(body.clone()), &wrong).await;
    let why = openai_error(&r, 401, "invalid_api_key");
    assert!(
        !why.contains(TOKEN) && !why.contains("not-the-token"),
        "{why}"
    );
    // A page of another origin may not post, token or not (the guard's 403).
    let auth = format!("Bearer {TOKEN}");
    let foreign = [
        ("authorization", auth.as_str()),
        ("origin", "http://evil.example"),
    ];
    let r = send(&completions, Method::POST, Some(body), &foreign).await;
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    // Bodies: malformed, repeated keys, too large.
    let r = send(
        &completions,
        Method::POST,
        Some(b"{\"model\":".to_vec()),
        &foreign[..1],
    )
    .await;
    openai_error(&r, 400, "invalid_json");
    let twice = br#"{"model": "a", "model": "b", "messages": []}"#.to_vec();
    let r = send(&completions, Method::POST, Some(twice), &foreign[..1]).await;
    openai_error(&r, 400, "invalid_field");
    let huge = json!({"model": LM, "messages": [{"role": "user", "content": "a".repeat(2 << 20)}]});
    openai_error(&post(&completions, &huge).await, 413, "payload_too_large");
    // Models: unknown, the wrong kind; fields this host cannot honour.
    let why = openai_error(
        &post(&completions, &chat("gpt-9", "Hi", 4)).await,
        404,
        "model_not_found",
    );
    assert!(why.contains(LM) && why.contains(EMBEDDING), "{why}");
    openai_error(
        &post(&completions, &chat(EMBEDDING, "Hi", 4)).await,
        400,
        "model_not_supported",
    );
    let mut two = chat(LM, "Hi", 4);
    two["n"] = json!(2);
    openai_error(&post(&completions, &two).await, 400, "invalid_request");
    // A prompt past the model's context is 400, saying so.
    let long = chat(LM, &"word ".repeat(2100), 8);
    let why = openai_error(&post(&completions, &long).await, 400, "invalid_request");
    assert!(why.contains("context"), "{why}");
    let r = post(
        &format!("{base}/embed"),
        &json!({"model": LM, "input": ["x"]}),
    )
    .await;
    openai_error(&r, 400, "model_not_supported");
    let r = post(
        &format!("{base}/v1/embeddings"),
        &json!({"model": EMBEDDING, "input": []}),
    )
    .await;
    openai_error(&r, 400, "invalid_request");
    // Methods and paths.
    let r = send(&completions, Method::GET, None, &foreign[..1]).await;
    openai_error(&r, 405, "method_not_allowed");
    assert_eq!(r.headers["allow"], "POST");
    let r = send(
        &format!("{base}/v1/nothing"),
        Method::GET,
        None,
        &foreign[..1],
    )
    .await;
    openai_error(&r, 404, "not_found");
    // Both models are listed, and each can be read alone.
    let r = send(
        &format!("{base}/v1/models"),
        Method::GET,
        None,
        &foreign[..1],
    )
    .await;
    let listed: Value = r.json().unwrap();
    let ids: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(ids.contains(&LM) && ids.contains(&EMBEDDING), "{listed}");
    let r = send(
        &format!("{base}/v1/models/{LM}"),
        Method::GET,
        None,
        &foreign[..1],
    )
    .await;
    assert_eq!(r.json::<Value>().unwrap()["id"], LM);
    let r = send(
        &format!("{base}/v1/models/gpt-9"),
        Method::GET,
        None,
        &foreign[..1],
    )
    .await;
    openai_error(&r, 404, "model_not_found");
}

/// Sends `body` to `path` on a connection of its own, and hands the connection back.
async fn open(base: &str, path: &str, body: &Value) -> tokio::net::TcpStream {
    let addr = base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {TOKEN}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(body.as_bytes()).await.unwrap();
    conn
}

/// Waits until `generator` has `want` requests waiting or under way.
async fn until_pending(generator: &Generator, want: usize, within: Duration, what: &str) {
    let started = Instant::now();
    while generator.pending() != want {
        assert!(
            started.elapsed() < within,
            "{what}: {} pending after {within:?}, not {want}",
            generator.pending()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_stops_its_generation() {
    let models = models();
    let generator = models.generator(LM).await.unwrap();
    let base = serve(models).await;
    // Undisturbed, the answer runs on: still generating after the time a stop gets below.
    let mut endless = chat(LM, ENDLESS, 1000);
    let conn = open(&base, "/v1/chat/completions", &endless).await;
    until_pending(&generator, 1, Duration::from_secs(10), "taken").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(generator.pending(), 1, "the control answer ended early");
    // Whole answer: the client hangs up while it is made.
    drop(conn);
    until_pending(&generator, 0, Duration::from_secs(3), "after hanging up").await;
    // Streamed: the client reads some chunks, then hangs up.
    endless["stream"] = json!(true);
    let mut conn = open(&base, "/v1/chat/completions", &endless).await;
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while seen.matches("\"content\"").count() < 4 {
        let n = conn.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(seen.contains("text/event-stream"), "{seen}");
    assert_eq!(generator.pending(), 1);
    drop(conn);
    until_pending(
        &generator,
        0,
        Duration::from_secs(3),
        "after a stream's hang-up",
    )
    .await;
    // Spin's `/infer` too.
    let infer = json!({"model": LM, "prompt": ENDLESS, "options": {"maxTokens": 1000}});
    let conn = open(&base, "/infer", &infer).await;
    until_pending(&generator, 1, Duration::from_secs(10), "/infer taken").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(conn);
    until_pending(
        &generator,
        0,
        Duration::from_secs(3),
        "after /infer's hang-up",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_is_503_with_retry_after() {
    let models = models();
    let generator = models.generator(LM).await.unwrap();
    let base = serve(models).await;
    let mut held = Vec::new();
    loop {
        let params = Params {
            max_tokens: 1000,
            ..Params::default()
        };
        let request = Request {
            prompt: Prompt::Text(ENDLESS.to_owned()),
            params,
            deadline: None,
        };
        match generator.submit(request) {
            Ok(s) => held.push(s),
            Err(GenerateError::Busy) => break,
            Err(e) => panic!("{e:?}"),
        }
    }
    for path in ["/v1/chat/completions", "/infer"] {
        let body = match path {
            "/infer" => json!({"model": LM, "prompt": "Hi"}),
            _ => chat(LM, "Hi", 4),
        };
        let r = post(&format!("{base}{path}"), &body).await;
        openai_error(&r, 503, "overloaded");
        assert_eq!(r.headers["retry-after"], "2", "{path}");
    }
    drop(held);
    until_pending(&generator, 0, Duration::from_secs(20), "released").await;
    // And it answers again.
    let r = post(
        &format!("{base}/infer"),
        &json!({"model": LM, "prompt": "Hi", "options": {"maxTokens": 2}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}

#[test]
fn the_table_names_the_token_file_and_what_is_not_installed() {
    let token = || Token::new(TOKEN.to_owned(), "token in /data/llm_api_token".to_owned());
    let empty = std::env::temp_dir().join(format!("no-models-{}", uuid::Uuid::new_v4().simple()));
    let note = LlmApi::new(AiModels::new(empty), token(), Duration::from_secs(1)).table_note();
    assert!(
        note.contains("/data/llm_api_token") && !note.contains(TOKEN),
        "{note}"
    );
    assert!(note.contains(LM) && note.contains(EMBEDDING), "{note}");
    let note = LlmApi::new(models(), token(), Duration::from_secs(1)).table_note();
    assert_eq!(note, "ready (token in /data/llm_api_token)");
}
