//! What every endpoint of the language-model API answers with: JSON, errors in OpenAI's shape
//! (`{"error": {"message", "type", "code", "param"}}`, which the `openai` clients turn into
//! their exceptions and Spin's OpenAI client reads the message of), and request bodies read
//! within a cap and parsed by the rules every service of the host follows.

use edge_api::json::parse_body;
use host_core::capabilities::llm::generator::{GenerateError, RETRY_AFTER_SECONDS};
use host_core::http::responses::{self, HostResponse};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Largest request body read: a whole context of text is far less; a client sending more is
/// refused before it costs memory.
pub const MAX_BODY: usize = 1024 * 1024;

/// A JSON answer.
pub fn answer(status: u16, value: &Value) -> HostResponse {
    responses::json(status, value.to_string())
}

/// An error as OpenAI writes one: `type` says whose fault it is (the request's below 500,
/// the server's from 500), `code` which rule it broke.
pub fn error(status: u16, code: &str, message: impl Into<String>) -> HostResponse {
    let kind = if status >= 500 {
        "server_error"
    } else {
        "invalid_request_error"
    };
    let body = json!({"error": {
        "message": message.into(),
        "type": kind,
        "code": code,
        "param": null,
    }});
    answer(status, &body)
}

/// 405 with the methods the path takes.
pub fn not_allowed(method: &hyper::Method, path: &str, allow: &'static str) -> HostResponse {
    let mut resp = error(
        405,
        "method_not_allowed",
        format!("{method} is not allowed on {path}; allowed: {allow}"),
    );
    resp.headers_mut()
        .insert(hyper::header::ALLOW, HeaderValue::from_static(allow));
    resp
}

/// The generator's refusal as an answer: a bad request is 400, a full queue 503 with
/// `Retry-After` (the client's cue to come back, not to give up), a failed model 500.
pub fn refused(e: GenerateError) -> HostResponse {
    match e {
        GenerateError::Invalid(m) => error(400, "invalid_request", m),
        GenerateError::Busy => {
            let mut resp = error(
                503,
                "overloaded",
                format!(
                    "the model is busy: every stream is taken and the queue is full; try again \
                     in {RETRY_AFTER_SECONDS} s"
                ),
            );
            resp.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                HeaderValue::from(RETRY_AFTER_SECONDS),
            );
            resp
        }
        GenerateError::Runtime(m) => error(500, "model_error", m),
    }
}

/// The request's body as `T`: at most [`MAX_BODY`] bytes (413 past it), one JSON object
/// without repeated keys or deep nesting (400 naming the field otherwise, as on every other
/// service). Fields `T` does not know are ignored: OpenAI's clients send many this host has
/// no use for.
pub async fn read_json<T: DeserializeOwned>(
    req: hyper::Request<Incoming>,
) -> Result<T, HostResponse> {
    let body = match http_body_util::Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(error(
                413,
                "payload_too_large",
                format!("request bodies here are at most {MAX_BODY} bytes"),
            ));
        }
        Err(e) => {
            return Err(error(
                400,
                "invalid_body",
                format!("the request body could not be read: {e}"),
            ));
        }
    };
    parse_body(&body).map_err(|e| error(e.status, e.code.as_str(), e.message))
}
