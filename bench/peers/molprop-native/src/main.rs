//! molprop natively behind hyper: the model and the SDK's `/predict` pipeline
//! (`model_sdk::predict`) that the component runs, without WebAssembly, per-request
//! instances or the key-value store (metrics are in-process counters here). The benchmark
//! compares `runtime-host` against it to show what the sandbox costs.
//!
//! Usage: `molprop-native [ADDR]` (default 127.0.0.1:0); prints `listening on http://ADDR`.
//! `molprop-native --file LIBRARY.smi [PROPERTY]` instead runs the model over a SMILES file
//! in one loop on one thread (no HTTP, no JSON request parsing), the native reference of
//! `runtime-host predict`, and prints `N molecules in S s (R molecules/s)`.

use bytes::Bytes;
use edge_api::model::{Health, Metrics, SPEC_VERSION};
use edge_api::{ApiError, ErrorCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use model_sdk::{Model, predict};
use molprop::MolProp;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The same body cap as the components' default.
const MAX_BODY: usize = 1 << 20;

struct State {
    started: Instant,
    served: AtomicU64,
    latency_us: AtomicU64,
}

fn json(status: u16, value: &impl serde::Serialize) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            serde_json::to_vec(value).expect("serialisable"),
        )))
        .expect("valid response")
}

fn error(e: &ApiError) -> Response<Full<Bytes>> {
    json(e.status, &e.body())
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    match (method, path.as_str()) {
        (Method::GET, "/health") => json(
            200,
            &Health {
                status: "ok".into(),
                model: MolProp.name().into(),
                version: SPEC_VERSION.into(),
                model_version: None,
            },
        ),
        (Method::GET, "/metrics") => {
            let served = state.served.load(Ordering::Relaxed);
            let total = state.latency_us.load(Ordering::Relaxed);
            json(
                200,
                &Metrics {
                    uptime_s: state.started.elapsed().as_secs_f64(),
                    requests_served: served,
                    avg_latency_ms: if served == 0 {
                        0.0
                    } else {
                        total as f64 / served as f64 / 1000.0
                    },
                    last_error: None,
                },
            )
        }
        (Method::POST, "/predict") => {
            let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => {
                    return error(&ApiError::new(
                        ErrorCode::PayloadTooLarge,
                        "request body too large",
                    ));
                }
            };
            match predict::run(&MolProp, &body) {
                Ok(p) => {
                    state.served.fetch_add(1, Ordering::Relaxed);
                    state
                        .latency_us
                        .fetch_add(p.elapsed.as_micros() as u64, Ordering::Relaxed);
                    match p.answer {
                        Ok(response) => json(200, &response),
                        Err(e) => error(&e),
                    }
                }
                Err(e) => error(&e),
            }
        }
        _ => error(&ApiError::not_found(format!("no route for {path}"))),
    }
}

/// The model over every line of a SMILES file, one molecule after another.
fn score_file(path: &str, property: &str) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::BufRead;
    let started = Instant::now();
    let (mut n, mut failed) = (0u64, 0u64);
    let mut data = serde_json::Map::new();
    data.insert("property".into(), property.into());
    for line in std::io::BufReader::new(std::fs::File::open(path)?).lines() {
        let line = line?;
        let Some(smiles) = line.split_whitespace().next() else {
            continue;
        };
        data.insert("text".into(), smiles.into());
        n += 1;
        if MolProp.predict(model_sdk::InputType::Text, &data).is_err() {
            failed += 1;
        }
    }
    let s = started.elapsed().as_secs_f64();
    println!(
        "{n} molecules in {s:.2} s ({:.0} molecules/s), {failed} failed",
        n as f64 / s
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--file") {
        let path = args.get(2).ok_or("--file needs a SMILES file")?;
        return score_file(path, args.get(3).map_or("logp", String::as_str));
    }
    let addr = args.get(1).cloned().unwrap_or_else(|| "127.0.0.1:0".into());
    predict::self_test(&MolProp).map_err(|e| format!("self-test failed: {e}"))?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    let state = Arc::new(State {
        started: Instant::now(),
        served: AtomicU64::new(0),
        latency_us: AtomicU64::new(0),
    });
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(state, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}
