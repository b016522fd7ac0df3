//! A component for the host's own tests. Each route exercises one host guarantee:
//!
//! | route                    | does                                              |
//! |--------------------------|---------------------------------------------------|
//! | `GET /ok`                | answers 200 at once                               |
//! | `GET /trap`              | panics (a wasm trap)                              |
//! | `GET /loop`              | spins forever (only a deadline stops it)          |
//! | `GET /alloc`             | allocates without bound (only the memory cap stops it) |
//! | `GET /sleep?ms=N`        | blocks in a host call for N ms                    |
//! | `GET /linger?ms=N`       | answers at once, then keeps the instance busy N ms |
//! | `POST /echo`             | answers the body's length                         |
//! | `POST /kv/incr?key=K`    | atomically increments counter K                   |
//! | `POST /kv/append?key=K&item=I` | appends I to a JSON list by compare-and-swap |
//! | `GET /kv/get?key=K`      | reads a JSON value                                |
//! | `GET /kv/keys?prefix=P`  | every key starting with P, through all of list-keys' pages |
//! | `POST /kv/contend?key=K` | updates K while changing it behind its own back, so every compare-and-swap loses; K ends as the number of attempts |
//! | `GET /var?name=N`        | reads an application variable                     |
//! | `GET /fetch?url=U[&follow=1]` | makes an outgoing HTTP request (wasi-http) and relays it; with `follow`, follows one redirect itself |
//! | `GET /get?url=U[&url=U2…]&max=B&ms=D` | fetches each U with `guest_kit::fetch` (all at once), at most B bytes, within D ms |
//! | `GET /instance`          | how many requests this instance has served, this one included |
//! | `GET /fail`              | answers 500 without trapping                      |
//! | `GET /grow?mib=N`        | keeps N MiB allocated in this instance (a global) and answers |
//! | `GET /file?path=P`       | reads file P (from a read-only mount) and answers its text |
//! | `POST /file?path=P`      | tries to write file P; answers whether that was refused |
//! | `POST /llm/embed?model=M` | `fermyon:spin/llm` generate-embeddings of the body's JSON list of texts |
//! | `GET /llm/infer?model=M` | `fermyon:spin/llm` infer with a fixed prompt      |
//! | `POST /llm/infer?model=M` | infer with the body's `{"prompt", "options": {"max_tokens", "repeat_penalty", "repeat_penalty_last_n", "temperature", "top_k", "top_p"}}` (each option Spin's default when left out) |
//!
//! The `/llm/` routes answer 200 with `{"embeddings", "tokens"}` or `{"text"}` (`POST
//! /llm/infer` adds `prompt_tokens` and `generated_tokens`), or with
//! `{"error": "<variant>", "message"}` when the host refused: the host's answer, unfiltered.
//!
//! `/instance` counts in a global on purpose: it shows the host reusing an instance.

use guest_kit::http::{self, ApiRequest, DEFAULT_MAX_BODY, Response};
use guest_kit::kv::{Change, Store};
use guest_kit::{ApiError, config};
use serde_json::{Value, json};
use spin_sdk::http::IncomingRequest;
use spin_sdk::http_component;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Requests this instance has served (globals live as long as the instance).
static SERVED: AtomicU64 = AtomicU64::new(0);
/// How long `/linger` keeps the instance busy after its answer is out.
static LINGER_MS: AtomicU64 = AtomicU64::new(0);
/// Memory held on purpose by `/grow`.
static HELD: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

#[http_component]
async fn handle(req: IncomingRequest, out: guest_kit::ResponseOutparam) {
    SERVED.fetch_add(1, Ordering::Relaxed);
    guest_kit::respond(out, guest_kit::serve(req, DEFAULT_MAX_BODY, route).await);
    let linger = LINGER_MS.swap(0, Ordering::Relaxed);
    if linger > 0 {
        std::thread::sleep(std::time::Duration::from_millis(linger));
    }
}

/// One outgoing GET (wasi-http never follows a redirect); the host's refusal or a failure
/// to connect is a 500 whose message carries wasi-http's error code.
async fn fetch(url: &str) -> Result<Response, ApiError> {
    let outgoing = spin_sdk::http::Request::get(url).build();
    spin_sdk::http::send(outgoing)
        .await
        .map_err(|e| ApiError::internal(format!("outgoing request failed: {e}")))
}

/// `/get`: what `guest_kit::fetch` made of each URL. One URL answers as that fetch did
/// (200 with what came, or its error as the 400 a model gives); several answer 200 with a
/// list of `{"fetched"}` or `{"error", "error_code"}`.
fn fetched(req: &ApiRequest) -> Result<Response, ApiError> {
    let urls: Vec<String> = form_urlencoded::parse(req.query.as_bytes())
        .filter(|(k, _)| k == "url")
        .map(|(_, v)| v.into_owned())
        .collect();
    if urls.is_empty() {
        return Err(ApiError::new(
            guest_kit::ErrorCode::MissingField,
            "query parameter `url` is required",
        ));
    }
    let number = |name: &str, default: u64| {
        req.query_param(name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(default)
    };
    let (max, ms) = (number("max", 1 << 20), number("ms", 5000));
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    let started = std::time::Instant::now();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let mut results = guest_kit::fetch::get_all(&refs, max, deadline);
    let took_ms = started.elapsed().as_millis() as u64;
    let describe = |f: &guest_kit::fetch::Fetched| {
        json!({
            "length": f.bytes.len(),
            "content_type": f.content_type,
            "url": f.url,
            "text": String::from_utf8_lossy(&f.bytes[..f.bytes.len().min(64)]),
            "took_ms": took_ms,
        })
    };
    if results.len() == 1 {
        return match results.remove(0) {
            Ok(f) => Ok(http::json(200, &describe(&f))),
            Err(e) => Err(ApiError::new(e.code(), e.message())),
        };
    }
    let each: Vec<Value> = results
        .iter()
        .map(|r| match r {
            Ok(f) => json!({"fetched": describe(f)}),
            Err(e) => json!({"error": e.message(), "error_code": e.code().as_str()}),
        })
        .collect();
    Ok(http::json(
        200,
        &json!({"results": each, "took_ms": took_ms}),
    ))
}

/// `body["options"]` as the interface's parameters, Spin's default for each one left out.
fn infer_options(body: &Value) -> spin_sdk::llm::InferencingParams {
    let o = &body["options"];
    let d = spin_sdk::llm::InferencingParams::default();
    let float = |k: &str, d: f32| o[k].as_f64().map_or(d, |v| v as f32);
    let int = |k: &str, d: u32| o[k].as_u64().map_or(d, |v| v as u32);
    spin_sdk::llm::InferencingParams {
        max_tokens: int("max_tokens", d.max_tokens),
        repeat_penalty: float("repeat_penalty", d.repeat_penalty),
        repeat_penalty_last_n_token_count: int(
            "repeat_penalty_last_n",
            d.repeat_penalty_last_n_token_count,
        ),
        temperature: float("temperature", d.temperature),
        top_k: int("top_k", d.top_k),
        top_p: float("top_p", d.top_p),
    }
}

fn llm_error(e: spin_sdk::llm::Error) -> Value {
    use spin_sdk::llm::Error;
    match e {
        Error::ModelNotSupported => json!({"error": "model-not-supported", "message": null}),
        Error::RuntimeError(m) => json!({"error": "runtime-error", "message": m}),
        Error::InvalidInput(m) => json!({"error": "invalid-input", "message": m}),
    }
}

async fn route(req: ApiRequest) -> Result<Response, ApiError> {
    match req.path.as_str() {
        "/fetch" => {
            let url = req.required_query("url", "url")?;
            let mut resp = fetch(&url).await?;
            let location = resp
                .header("location")
                .and_then(|v| v.as_str())
                .map(str::to_owned);
            if req.query_param("follow").is_some()
                && let Some(next) = location
            {
                resp = fetch(&next).await?;
            }
            let body: Value = serde_json::from_slice(resp.body()).unwrap_or(Value::Null);
            Ok(http::json(
                200,
                &json!({"status": *resp.status(), "body": body}),
            ))
        }
        "/get" => fetched(&req),
        "/ok" => Ok(http::json(200, &json!({"ok": true}))),
        "/instance" => Ok(http::json(
            200,
            &json!({"served": SERVED.load(Ordering::Relaxed)}),
        )),
        "/fail" => Err(ApiError::internal("testbed: deliberate 500")),
        "/grow" => {
            let mib: usize = req
                .query_param("mib")
                .and_then(|v| v.parse().ok())
                .unwrap_or(1);
            let mut held = HELD.lock().unwrap();
            held.push(std::hint::black_box(vec![1u8; mib << 20]));
            let total: usize = held.iter().map(Vec::len).sum();
            Ok(http::json(200, &json!({"held_mib": total >> 20})))
        }
        "/trap" => panic!("testbed: deliberate trap"),
        "/loop" => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "/alloc" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(std::hint::black_box(vec![1u8; 1 << 20]));
            }
        }
        "/sleep" => {
            let ms: u64 = req
                .query_param("ms")
                .and_then(|v| v.parse().ok())
                .unwrap_or(1000);
            std::thread::sleep(std::time::Duration::from_millis(ms));
            Ok(http::json(200, &json!({"slept_ms": ms})))
        }
        "/linger" => {
            let ms: u64 = req
                .query_param("ms")
                .and_then(|v| v.parse().ok())
                .unwrap_or(300);
            LINGER_MS.store(ms, Ordering::Relaxed);
            Ok(http::json(200, &json!({"lingers_ms": ms})))
        }
        "/echo" => Ok(http::json(200, &json!({"length": req.body.len()}))),
        "/file" if req.method == "GET" => {
            let path = req.required_query("path", "file path")?;
            Ok(match std::fs::read_to_string(&path) {
                Ok(text) => http::json(200, &json!({"text": text})),
                Err(e) => http::json(200, &json!({"error": e.to_string()})),
            })
        }
        "/file" => {
            let path = req.required_query("path", "file path")?;
            let written = std::fs::write(&path, b"overwritten by the guest");
            Ok(http::json(
                200,
                &json!({"refused": written.is_err(), "error": written.err().map(|e| e.to_string())}),
            ))
        }
        "/kv/incr" => {
            let key = req.required_query("key", "key")?;
            let value = Store::open_default()?.increment(&key, 1)?;
            Ok(http::json(200, &json!({"value": value})))
        }
        "/kv/append" => {
            let key = req.required_query("key", "key")?;
            let item = req.required_query("item", "item")?;
            let len = Store::open_default()?.update(&key, |current: Option<Vec<String>>| {
                let mut list = current.unwrap_or_default();
                list.push(item.clone());
                let len = list.len();
                Ok((Change::Put(list), len))
            })?;
            Ok(http::json(200, &json!({"length": len})))
        }
        "/kv/contend" => {
            let key = req.required_query("key", "key")?;
            let store = Store::open_default()?;
            let mut attempts = 0u32;
            store.update(&key, |_: Option<u32>| {
                attempts += 1;
                // Another writer, every time: the swap that follows cannot win.
                store.set_json(&key, &attempts)?;
                Ok((Change::Put(0), ()))
            })?;
            Ok(http::json(200, &json!({"attempts": attempts})))
        }
        "/kv/keys" => {
            let prefix = req.required_query("prefix", "prefix")?;
            let keys = Store::open_default()?.keys_with_prefix(&prefix)?;
            Ok(http::json(200, &json!({"keys": keys})))
        }
        "/kv/get" => {
            let key = req.required_query("key", "key")?;
            let value: Option<Value> = Store::open_default()?.get_json(&key)?;
            Ok(http::json(200, &json!({"value": value})))
        }
        "/llm/embed" => {
            let model = req.required_query("model", "AI model")?;
            // A bare array, as the interface takes it (API bodies must be objects).
            let texts: Vec<String> = serde_json::from_slice(&req.body)
                .map_err(|e| ApiError::invalid("body", format!("an array of texts: {e}")))?;
            Ok(http::json(
                200,
                &match spin_sdk::llm::llm::generate_embeddings(&model, &texts) {
                    Ok(r) => {
                        json!({"embeddings": r.embeddings, "tokens": r.usage.prompt_token_count})
                    }
                    Err(e) => llm_error(e),
                },
            ))
        }
        "/llm/infer" if req.method == "POST" => {
            let model = req.required_query("model", "AI model")?;
            let body: Value = serde_json::from_slice(&req.body)
                .map_err(|e| ApiError::invalid("body", format!("a JSON object: {e}")))?;
            let prompt = body["prompt"].as_str().unwrap_or_default();
            let model = spin_sdk::llm::InferencingModel::Other(&model);
            Ok(http::json(
                200,
                &match spin_sdk::llm::infer_with_options(model, prompt, infer_options(&body)) {
                    Ok(r) => json!({
                        "text": r.text,
                        "prompt_tokens": r.usage.prompt_token_count,
                        "generated_tokens": r.usage.generated_token_count,
                    }),
                    Err(e) => llm_error(e),
                },
            ))
        }
        "/llm/infer" => {
            let model = req.required_query("model", "AI model")?;
            Ok(http::json(
                200,
                &match spin_sdk::llm::llm::infer(&model, "Say hello.", None) {
                    Ok(r) => json!({"text": r.text}),
                    Err(e) => llm_error(e),
                },
            ))
        }
        "/var" => {
            let name = req.required_query("name", "variable name")?;
            Ok(http::json(200, &json!({"value": config::variable(&name)?})))
        }
        _ => Err(http::no_route(&req.path)),
    }
}
