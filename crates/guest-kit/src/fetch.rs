//! Fetching a file by URL from inside a component (an image or a sound a caller names by
//! `data.image_url` / `data.audio_url`), through `wasi:http/outgoing-handler`.
//!
//! The host decides what may be reached (Spin's `allowed_outbound_hosts`, and under
//! `runtime-host` no loopback or private address unless named) and never follows a redirect
//! itself. So this module follows redirects by sending a new request per hop, which the host
//! checks like the first: a redirect cannot lead a fetch where a direct request could not go.
//! Everything is bounded: the number of hops ([`MAX_REDIRECTS`]), the body (`max_bytes`, by
//! its declared length before reading and as read), and the time (one deadline for the
//! whole fetch, redirects included, so a slow server cannot hold a request past its own).
//!
//! Synchronous, blocking on WASI pollables: the model SDK's `predict` is synchronous, and an
//! instance serves one request at a time, so blocking holds up nothing else. Several URLs
//! ([`get_all`]) are sent at once and awaited together.

#[cfg(target_arch = "wasm32")]
mod client;
mod messages;
mod urls;

#[cfg(test)]
mod tests;

use edge_api::error::ErrorCode;
use std::time::Instant;

/// Redirects followed per URL; one more is an error (a loop, or a chain the caller should
/// shorten by giving the final URL).
pub const MAX_REDIRECTS: usize = 3;

/// Longest URL accepted, in bytes: longer ones are refused before any request (what browsers
/// and most servers accept; a data URL or a pasted file is not a URL to fetch).
pub const MAX_URL_BYTES: usize = 2048;

/// The identity sent with every request, so a server's operator can tell what fetched.
pub const USER_AGENT: &str = "lightweight-model-runtime";

/// A fetched file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub bytes: Vec<u8>,
    /// The final response's `Content-Type`, as sent (a server's word, not checked).
    pub content_type: Option<String>,
    /// The URL the file came from, after redirects.
    pub url: String,
}

/// Why a URL was not fetched. Each message is written for the API caller who sent the URL
/// (it becomes the `error` of a 400): what happened, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// Not an absolute http(s) URL (or has user:password@, or is longer than 2,048 bytes).
    BadUrl(String),
    /// The host refused it: wasi-http's `HTTP-request-denied` (allowed_outbound_hosts, or an
    /// address on this machine or a private network). Says which host:port.
    NotAllowed(String),
    /// The body (declared Content-Length, or as read) is over `max_bytes`.
    TooLarge(String),
    /// Anything else: DNS, refused connection, TLS, a non-200 final status, more than
    /// [`MAX_REDIRECTS`] redirects, the deadline passed, a 3xx without Location.
    Failed(String),
}

impl FetchError {
    /// The message for the caller.
    pub fn message(&self) -> &str {
        match self {
            Self::BadUrl(m) | Self::NotAllowed(m) | Self::TooLarge(m) | Self::Failed(m) => m,
        }
    }

    /// The API error code this failure is reported with (all of them 400s: the URL is the
    /// caller's input).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::BadUrl(_) => ErrorCode::InvalidField,
            Self::NotAllowed(_) => ErrorCode::UrlNotAllowed,
            Self::TooLarge(_) => ErrorCode::MediaTooLarge,
            Self::Failed(_) => ErrorCode::FetchFailed,
        }
    }
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for FetchError {}

/// GET `url`, following up to [`MAX_REDIRECTS`] redirects (each a new request, so the host
/// re-checks every hop against its rules; a relative `Location` is resolved against the
/// current URL), reading at most `max_bytes` of body, giving up at `deadline` (connecting,
/// waiting for the answer and every read are all bounded by it).
pub fn get(url: &str, max_bytes: u64, deadline: Instant) -> Result<Fetched, FetchError> {
    let mut results = get_all(&[url], max_bytes, deadline);
    results.pop().unwrap_or_else(|| {
        Err(FetchError::Failed(
            "internal error: a fetch gave no result".into(),
        ))
    })
}

/// [`get`] for several URLs at once: every request is sent first, then all are awaited
/// together, so one slow server does not hold up the others. Results are in the order of
/// `urls`; each URL fails alone.
pub fn get_all(
    urls: &[&str],
    max_bytes: u64,
    deadline: Instant,
) -> Vec<Result<Fetched, FetchError>> {
    let checked: Vec<_> = urls.iter().map(|u| urls::parse(u)).collect();
    #[cfg(target_arch = "wasm32")]
    {
        client::fetch_all(checked, max_bytes, deadline)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        // Native builds (unit tests of the components' code) have no wasi-http to call;
        // a bad URL is still reported as it would be in a component.
        let _ = (max_bytes, deadline);
        checked
            .into_iter()
            .map(|url| {
                url.and_then(|_| {
                    Err(FetchError::Failed(
                        "fetching URLs works only inside a WebAssembly component".into(),
                    ))
                })
            })
            .collect()
    }
}
