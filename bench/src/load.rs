//! HTTP/1.1 load generators. Closed loop ([`run`]): `conns` keep-alive connections, each
//! sending its next request the moment the previous answer is read, for a fixed time. Open
//! loop ([`run_open`]): requests due at a fixed rate whatever the server does, each timed
//! from when it was due, so queueing shows. Latencies go into an HDR histogram
//! (microseconds, 3 significant digits).

use anyhow::{Context, Result};
use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::Method;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One request of a load's mix.
#[derive(Clone)]
pub struct Call {
    pub method: Method,
    pub path: String,
    pub body: Bytes,
    /// Sent as `Authorization: Bearer <token>` (the chat write API).
    pub token: Option<Arc<str>>,
    /// Other headers; a `content-type` here replaces the default JSON one.
    pub headers: Vec<(&'static str, String)>,
}

impl Call {
    pub fn get(path: &str) -> Self {
        Self {
            method: Method::GET,
            path: path.to_owned(),
            body: Bytes::new(),
            token: None,
            headers: Vec::new(),
        }
    }

    pub fn post_json(path: &str, body: &serde_json::Value) -> Self {
        Self {
            method: Method::POST,
            path: path.to_owned(),
            body: Bytes::from(body.to_string()),
            token: None,
            headers: Vec::new(),
        }
    }

    /// A POST of raw bytes with `headers` (the Open Inference Protocol's binary tensors).
    pub fn post_bytes(path: &str, body: Vec<u8>, headers: Vec<(&'static str, String)>) -> Self {
        Self {
            method: Method::POST,
            path: path.to_owned(),
            body: Bytes::from(body),
            token: None,
            headers,
        }
    }

    /// This call with a bearer token.
    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.into());
        self
    }
}

/// What one load run measured.
pub struct Measured {
    /// Answers with status 200 (201 for a write).
    pub ok: u64,
    /// Other statuses and transport errors.
    pub errors: u64,
    pub elapsed: Duration,
    pub latency_us: Histogram<u64>,
}

/// The figures of a [`Measured`] as printed and written to JSON.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Figures {
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
}

impl Measured {
    pub fn empty() -> Self {
        Self {
            ok: 0,
            errors: 0,
            elapsed: Duration::ZERO,
            latency_us: Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds"),
        }
    }

    /// Counts one successful answer that took `latency`.
    pub fn record(&mut self, latency: Duration) {
        self.ok += 1;
        self.latency_us
            .saturating_record((latency.as_micros() as u64).max(1));
    }

    /// Adds another run's counts (its time is added too: runs are sequential).
    pub fn absorb(&mut self, other: Measured) {
        self.ok += other.ok;
        self.errors += other.errors;
        self.elapsed += other.elapsed;
        self.latency_us
            .add(&other.latency_us)
            .expect("same histogram bounds");
    }

    pub fn figures(&self) -> Figures {
        let q = |q: f64| self.latency_us.value_at_quantile(q) as f64 / 1000.0;
        Figures {
            rps: self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9),
            p50_ms: q(0.50),
            p99_ms: q(0.99),
            errors: self.errors,
        }
    }
}

/// The tail of an open-loop run: what was answered, its latency quantiles in ms, and the
/// requests that failed.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Tail {
    /// Requests answered 200.
    pub ok: u64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub errors: u64,
}

impl Measured {
    pub fn tail(&self) -> Tail {
        let q = |q: f64| self.latency_us.value_at_quantile(q) as f64 / 1000.0;
        Tail {
            ok: self.ok,
            rps: self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9),
            p50_ms: q(0.50),
            p99_ms: q(0.99),
            p999_ms: q(0.999),
            errors: self.errors,
        }
    }
}

/// Most connections an open-loop run opens: past it, due requests wait for one (and that
/// wait is counted in their latency).
const OPEN_LOOP_CONNECTIONS: usize = 512;

/// Connections an open-loop run opens before its first request is due: as many as the
/// closed loop's most, which serve the loads measured without queueing on the client.
const OPEN_LOOP_PREOPENED: usize = 64;

/// Longest an open-loop request may take, from when it was due, before it counts as failed.
const OPEN_LOOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Sends `calls` (cycled) to `addr` at `rate` requests per second for `duration`, each on a
/// free keep-alive connection (a new one while fewer than [`OPEN_LOOP_CONNECTIONS`] are
/// open). A request's latency runs from when it was due, not from when it was sent: the
/// closed loop sends less to a slow server and hides its queue ("coordinated omission").
/// The schedule is kept by a thread of its own, sleeping with the kernel's high-resolution
/// timers (tokio's timer ticks in whole milliseconds).
pub async fn run_open(
    addr: SocketAddr,
    rate: f64,
    duration: Duration,
    calls: Arc<[Call]>,
) -> Result<Measured> {
    let total = (rate * duration.as_secs_f64()).round() as usize;
    // Connections opened before the schedule starts: hundreds of connects at once in its
    // first milliseconds overflowed the server's queue of half-open connections, and a
    // dropped SYN is retried after a second, which showed as a 1 s p99.9 on either side.
    let mut ready = Vec::with_capacity(OPEN_LOOP_PREOPENED);
    for _ in 0..OPEN_LOOP_PREOPENED {
        ready.push(connect(addr).await?);
    }
    let idle: Arc<std::sync::Mutex<Vec<Sender>>> = Arc::new(std::sync::Mutex::new(ready));
    let start = Instant::now() + Duration::from_millis(20);
    let (due_tx, mut due_rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Instant)>();
    std::thread::spawn(move || {
        for i in 0..total {
            let due = start + Duration::from_secs_f64(i as f64 / rate);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if due_tx.send((i, due)).is_err() {
                return;
            }
        }
    });
    let open = Arc::new(tokio::sync::Semaphore::new(OPEN_LOOP_CONNECTIONS));
    let mut tasks = tokio::task::JoinSet::new();
    while let Some((i, due)) = due_rx.recv().await {
        let (calls, idle, open) = (calls.clone(), idle.clone(), open.clone());
        tasks.spawn(async move {
            let _turn = open.acquire_owned().await.ok()?;
            let exchange = async {
                // A connection the server has closed meanwhile (idle too long) is replaced.
                let pooled = idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
                let mut sender = match pooled.filter(|s| !s.is_closed()) {
                    Some(s) => s,
                    None => connect(addr).await.ok()?,
                };
                let call = &calls[i % calls.len()];
                let resp = sender.send_request(request(addr, call).ok()?).await.ok()?;
                let status = resp.status().as_u16();
                resp.into_body().collect().await.ok()?;
                idle.lock().unwrap_or_else(|p| p.into_inner()).push(sender);
                Some((status, due.elapsed()))
            };
            // A request unanswered this long counts as failed (and its connection is dropped).
            tokio::time::timeout(OPEN_LOOP_TIMEOUT, exchange)
                .await
                .ok()?
        });
    }
    let mut m = Measured::empty();
    while let Some(done) = tasks.join_next().await {
        match done.ok().flatten() {
            Some((200, latency)) => m.record(latency),
            _ => m.errors += 1,
        }
    }
    m.elapsed = start.elapsed();
    Ok(m)
}

/// Runs `calls` (cycled; each connection starts at its own offset) against `addr` over
/// `conns` connections for `duration`.
pub async fn run(
    addr: SocketAddr,
    conns: usize,
    duration: Duration,
    calls: Arc<[Call]>,
) -> Result<Measured> {
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(conns);
    for i in 0..conns {
        let calls = calls.clone();
        tasks.push(tokio::spawn(async move {
            connection(addr, deadline, &calls, i * 37).await
        }));
    }
    let mut total = Measured::empty();
    for t in tasks {
        total.absorb(t.await.context("load connection panicked")??);
    }
    total.elapsed = started.elapsed();
    Ok(total)
}

type Sender = http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    stream.set_nodelay(true)?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

fn request(addr: SocketAddr, call: &Call) -> Result<hyper::Request<Full<Bytes>>> {
    let mut req = hyper::Request::builder()
        .method(call.method.clone())
        .uri(&call.path)
        .header("host", addr.to_string());
    if !call.headers.iter().any(|(k, _)| *k == "content-type") {
        req = req.header("content-type", "application/json");
    }
    for (name, value) in &call.headers {
        req = req.header(*name, value);
    }
    let req = match &call.token {
        Some(token) => req.header("authorization", format!("Bearer {token}")),
        None => req,
    };
    Ok(req.body(Full::new(call.body.clone()))?)
}

/// One connection's loop; reconnects after a transport error (counted as an error).
async fn connection(
    addr: SocketAddr,
    deadline: Instant,
    calls: &[Call],
    offset: usize,
) -> Result<Measured> {
    let mut m = Measured::empty();
    let mut sender = connect(addr).await?;
    let mut i = offset;
    while Instant::now() < deadline {
        let call = &calls[i % calls.len()];
        i += 1;
        let req = request(addr, call)?;
        let sent = Instant::now();
        let outcome = async {
            let resp = sender.send_request(req).await?;
            let status = resp.status().as_u16();
            resp.into_body().collect().await?;
            Ok::<_, anyhow::Error>(status)
        }
        .await;
        match outcome {
            // 200, or 201 for a write that made something (a chat append).
            Ok(200 | 201) => m.record(sent.elapsed()),
            Ok(_) => m.errors += 1,
            Err(_) => {
                m.errors += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
                sender = connect(addr).await?;
            }
        }
    }
    Ok(m)
}
