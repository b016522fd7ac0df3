//! Responses the host itself writes (errors raised before or instead of the guest's answer),
//! in the same JSON error body the components use.

use bytes::Bytes;
use edge_api::error::{ApiError, ErrorCode};
use host_runtime::limits::DeadlineExceeded;
use http_body_util::{BodyExt, Full};
use std::time::Duration;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

pub type HostResponse = hyper::Response<HyperOutgoingBody>;

pub fn body_from(bytes: impl Into<Bytes>) -> HyperOutgoingBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A JSON answer; `nosniff` so no browser reads it as anything else (an error quoting a
/// request's text must never run as a page).
pub fn json(status: u16, body: impl Into<Bytes>) -> HostResponse {
    hyper::Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .body(body_from(body))
        .expect("static response parts are valid")
}

pub fn error(code: ErrorCode, message: impl Into<String>) -> HostResponse {
    let err = ApiError::new(code, message);
    let mut resp = json(err.status, err.body().to_json());
    resp.headers_mut().insert(
        crate::headers::ERROR_CODE,
        hyper::header::HeaderValue::from_static(code.as_str()),
    );
    if code == ErrorCode::Overloaded {
        resp.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("1"),
        );
    }
    resp
}

/// The 401 for a request without the secret a route needs (`unauthorized`, with
/// `WWW-Authenticate: Bearer`); `message` says how to send it, never what it is.
pub fn unauthorized(message: impl Into<String>) -> HostResponse {
    let mut resp = error(ErrorCode::Unauthorized, message);
    resp.headers_mut().insert(
        hyper::header::WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static("Bearer"),
    );
    resp
}

/// The 405 for a host path that only reads (`GET`, `HEAD`); `None` for those methods.
pub fn unless_get(method: &hyper::Method, path: &str) -> Option<HostResponse> {
    if method == hyper::Method::GET || method == hyper::Method::HEAD {
        return None;
    }
    let mut resp = error(
        ErrorCode::MethodNotAllowed,
        format!("{method} is not allowed on {path}; allowed: GET"),
    );
    resp.headers_mut().insert(
        hyper::header::ALLOW,
        hyper::header::HeaderValue::from_static("GET"),
    );
    Some(resp)
}

fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

pub fn internal(message: String) -> HostResponse {
    tracing::error!(error = %message, "request failed");
    error(ErrorCode::InternalError, message)
}

pub fn timeout(budget: Duration) -> HostResponse {
    error(
        ErrorCode::Timeout,
        format!("the request exceeded its deadline of {}", human(budget)),
    )
}

/// Maps a guest failure onto the error body: deadline, memory cap, or a plain fault.
pub fn classify_failure(
    err: anyhow::Error,
    memory_exceeded: bool,
    budget: Duration,
) -> HostResponse {
    if err.chain().any(|c| c.is::<DeadlineExceeded>()) {
        return timeout(budget);
    }
    if memory_exceeded {
        tracing::error!(error = %format!("{err:#}"), "component exceeded its memory limit");
        return error(
            ErrorCode::MemoryLimitExceeded,
            "the component exceeded its memory limit and was stopped",
        );
    }
    // Every slot of the instance pool is busy (several services share one pool in `up`):
    // a capacity condition, not a fault.
    if err
        .chain()
        .any(|c| c.is::<wasmtime::PoolConcurrencyLimitError>())
    {
        return error(
            ErrorCode::Overloaded,
            "every instance slot of this host is busy; retry shortly",
        );
    }
    // The first line of a trap names it ("wasm trap: unreachable"); the backtrace stays in
    // the log, not in the response.
    let summary = match err.downcast_ref::<wasmtime::Trap>() {
        Some(trap) => format!("the component trapped: {trap}"),
        None => format!("the component failed: {}", err.root_cause()),
    };
    tracing::error!(error = %format!("{err:#}"), "component failed");
    error(ErrorCode::InternalError, summary)
}
