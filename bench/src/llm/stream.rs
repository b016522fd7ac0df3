//! The one client that measures both servers: a chat completion with `stream: true`, read as
//! server-sent events as they arrive, each event timed on arrival. Both servers get the same
//! bytes from the same code, so a difference in the figures is the servers'.

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A server under test: where it listens and the bearer token it wants (ours has one).
#[derive(Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

/// What one streamed answer showed.
#[derive(Debug, Clone)]
pub struct Streamed {
    /// When the request was written.
    pub sent: Instant,
    /// When the first and the last chunk carrying text arrived.
    pub first: Option<Instant>,
    pub last: Option<Instant>,
    /// Chunks carrying text: one per generated token on both servers (each streams token
    /// by token), give or take a token whose bytes end mid-character.
    pub chunks: usize,
    /// `usage` of the stream's last chunk, where the server sends it (ours does when
    /// `stream_options.include_usage` asks; llama-cpp-python does not).
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub text: String,
}

impl Streamed {
    /// Seconds from the request to its first token.
    pub fn time_to_first(&self) -> Option<f64> {
        self.first.map(|f| (f - self.sent).as_secs_f64())
    }

    /// Tokens per second from the first token to the last: decoding alone, the prompt's
    /// reading left out.
    pub fn decode_rate(&self) -> Option<f64> {
        let (first, last) = (self.first?, self.last?);
        let secs = (last - first).as_secs_f64();
        (self.chunks > 1 && secs > 0.0).then(|| (self.chunks - 1) as f64 / secs)
    }

    /// The tokens generated: the server's own count where it gave one, else the chunks.
    pub fn tokens(&self) -> u64 {
        self.completion_tokens.unwrap_or(self.chunks as u64)
    }
}

/// Longest one answer may take before the bench gives up on it.
const TIMEOUT: Duration = Duration::from_secs(300);

/// POSTs `body` to `/v1/chat/completions` and reads the answer's events to `[DONE]`; a
/// status other than 200, an `error` event or a stream that ends early is an error.
pub async fn chat(to: &Endpoint, body: &Value) -> Result<Streamed> {
    tokio::time::timeout(TIMEOUT, chat_unbounded(to, body))
        .await
        .with_context(|| format!("no complete answer from {} within {TIMEOUT:?}", to.addr))?
}

async fn chat_unbounded(to: &Endpoint, body: &Value) -> Result<Streamed> {
    let stream = tokio::net::TcpStream::connect(to.addr)
        .await
        .with_context(|| format!("connecting to {}", to.addr))?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut req = hyper::Request::post("/v1/chat/completions")
        .header("host", to.addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "text/event-stream");
    if let Some(token) = &to.token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let req = req.body(Full::new(Bytes::from(body.to_string())))?;
    let sent = Instant::now();
    let resp = sender.send_request(req).await?;
    let status = resp.status();
    let mut body = resp.into_body();
    if status != 200 {
        let text = body.collect().await?.to_bytes();
        bail!("{status}: {}", String::from_utf8_lossy(&text));
    }
    let mut out = Streamed {
        sent,
        first: None,
        last: None,
        chunks: 0,
        prompt_tokens: None,
        completion_tokens: None,
        text: String::new(),
    };
    let mut pending = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        let arrived = Instant::now();
        pending.extend_from_slice(&data);
        // Whole lines only; the rest waits for the next frame.
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            if read_line(line.trim_end(), arrived, &mut out)? {
                return Ok(out);
            }
        }
    }
    bail!("the stream from {} ended without `data: [DONE]`", to.addr)
}

/// Takes one line of the event stream into `out`; `true` at `[DONE]`. Lines other than
/// `data:` (blank separators, comments, pings) say nothing here.
fn read_line(line: &str, arrived: Instant, out: &mut Streamed) -> Result<bool> {
    let Some(data) = line.strip_prefix("data:").map(str::trim_start) else {
        return Ok(false);
    };
    if data == "[DONE]" {
        return Ok(true);
    }
    let event: Value =
        serde_json::from_str(data).with_context(|| format!("an event that is not JSON: {data}"))?;
    if let Some(error) = event.get("error") {
        bail!("the server failed mid-stream: {error}");
    }
    let piece = event["choices"][0]["delta"]["content"].as_str();
    if let Some(piece) = piece.filter(|p| !p.is_empty()) {
        out.first.get_or_insert(arrived);
        out.last = Some(arrived);
        out.chunks += 1;
        out.text.push_str(piece);
    }
    if let Some(usage) = event.get("usage").filter(|u| u.is_object()) {
        out.prompt_tokens = usage["prompt_tokens"].as_u64();
        out.completion_tokens = usage["completion_tokens"].as_u64();
    }
    Ok(false)
}
