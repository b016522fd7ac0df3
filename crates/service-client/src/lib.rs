//! A small HTTP/1.1 client for calls to the services that are not a user's: `runtime-host`'s
//! own (register, heartbeat, process reports, chat import and export), `check` and the
//! bench. One place, so every such request carries the same `User-Agent` and a deadline.

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

/// `User-Agent` of every request the host itself sends. A `runtime-host` serving such a
/// request logs it at DEBUG: heartbeats and process checks are not news for the console.
pub const USER_AGENT: &str = concat!("runtime-host/", env!("CARGO_PKG_VERSION"));

/// Whether `user_agent` is a `runtime-host`'s ([`USER_AGENT`], of any version).
/// Percent-encodes `value` for a query string or a form body: everything but the unreserved
/// characters of RFC 3986 (letters, digits, `-`, `_`, `.`, `~`).
pub fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub fn is_host_user_agent(user_agent: &str) -> bool {
    user_agent.starts_with("runtime-host/")
}

pub struct HttpClient {
    inner: Client<HttpConnector, Full<Bytes>>,
    timeout: Duration,
}

/// Status, headers and body of an answer.
pub struct Reply {
    pub status: u16,
    /// Read where the body alone does not say how to read it (the Open Inference Protocol's
    /// `Inference-Header-Content-Length`).
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_slice(&self.body).with_context(|| {
            format!(
                "unexpected answer (HTTP {}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The `error` text of an error body, or the raw body.
    pub fn error_text(&self) -> String {
        serde_json::from_slice::<edge_api::ErrorBody>(&self.body)
            .map(|e| format!("{} ({})", e.error, e.error_code))
            .unwrap_or_else(|_| String::from_utf8_lossy(&self.body).into_owned())
    }
}

impl HttpClient {
    pub fn new(timeout: Duration) -> Self {
        Self {
            inner: Client::builder(TokioExecutor::new()).build_http(),
            timeout,
        }
    }

    pub async fn send(
        &self,
        method: hyper::Method,
        url: &str,
        body: Option<Vec<u8>>,
        bearer: Option<&str>,
    ) -> Result<Reply> {
        let bearer = bearer.map(|token| format!("Bearer {token}"));
        let headers: Vec<(&str, &str)> = bearer
            .iter()
            .map(|b| (hyper::header::AUTHORIZATION.as_str(), b.as_str()))
            .collect();
        self.send_with(method, url, body, &headers).await
    }

    /// [`Self::send`] with headers of the caller's (a `content-type` of its own replaces
    /// JSON's, for a body that is not JSON).
    pub async fn send_with(
        &self,
        method: hyper::Method,
        url: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Result<Reply> {
        let mut req = hyper::Request::builder()
            .method(method.clone())
            .uri(url)
            .header(hyper::header::USER_AGENT, USER_AGENT);
        let own_type = headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("content-type"));
        if body.is_some() && !own_type {
            req = req.header(hyper::header::CONTENT_TYPE, "application/json");
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .with_context(|| format!("invalid URL `{url}`"))?;
        let exchange = async {
            let resp = self.inner.request(req).await?;
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let body = resp.into_body().collect().await?.to_bytes();
            anyhow::Ok(Reply {
                status,
                headers,
                body,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .with_context(|| format!("{method} {url}: no answer within {:?}", self.timeout))?
            .with_context(|| format!("{method} {url}: is the service running?"))
    }
}
