//! The Open Inference Protocol (KServe v2, Triton's HTTP/REST API) beside v1.2, for every
//! model on the SDK: standard clients (tritonclient, KServe's `InferenceRESTClient`) call the
//! same model and get the same numbers as `/predict`, because every inference is run as a
//! v1.2 batch ([`signature`] says how tensors map to `data` and back).
//!
//! Routes, below wherever the model is served (its own port, `/models/<name>` under Spin, or
//! an app route `/v2/models/<name>/...` that picked it by name):
//! `GET /v2`, `GET /v2/health/live`, `GET /v2/health/ready`, `GET /v2/models/{name}[/versions/{v}]`,
//! `GET .../ready`, `POST .../infer`. Errors are `{"error": "..."}`: 400 for a bad request,
//! 404 for an unknown model, version or path, 405 for a wrong method, 415 for a compressed
//! body, 503 for a batch past its time budget, 500 for a fault.
//! Binary tensor data (Triton's extension) in both directions.

mod datatype;
mod decimal;
pub mod infer;
#[cfg(test)]
mod infer_tests;
mod outputs;
pub mod signature;
pub mod tensor;
#[cfg(test)]
mod unavailable_tests;
pub mod wire;

use crate::Model;
pub use datatype::Datatype;
use guest_kit::http::{ApiRequest, Response};
use serde_json::{Value, json};
pub use signature::{Binding, InputSpec, OutputSpec, Signature, Source};
use std::cell::RefCell;
use std::rc::Rc;

/// What the server calls itself in `GET /v2`.
pub const SERVER_NAME: &str = "lightweight-model-runtime";
/// The protocol extensions served.
pub const EXTENSIONS: &[&str] = &["binary_tensor_data"];
/// The header Spin (and `runtime-host`'s app router) sends with the route that matched.
const COMPONENT_ROUTE: &str = "spin-component-route";
/// The app route that picks a model by name, without its trailing `/...`.
const BY_NAME: &str = "/v2/models/";

/// A protocol error: its status and what went wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct OipError {
    pub status: u16,
    pub message: String,
    /// The methods the path takes, sent as `Allow` with a 405 (RFC 9110, 15.5.6).
    pub allow: Option<String>,
}

impl OipError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            allow: None,
        }
    }

    /// 405: `method` on `path`, which takes only `allowed`.
    pub fn not_allowed(method: &str, path: &str, allowed: &str) -> Self {
        Self {
            allow: Some(allowed.to_owned()),
            ..Self::new(
                405,
                format!("{method} is not allowed on {path}; allowed: {allowed}"),
            )
        }
    }

    /// 400: a request the protocol or the model cannot take.
    pub fn bad(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }

    fn response(&self) -> Response {
        let mut response = json_response(self.status, &json!({"error": self.message}));
        if let Some(allow) = &self.allow {
            response.set_header("allow", allow.clone());
        }
        response
    }
}

/// The protocol path of `req` when it is one, and whether an app route already picked this
/// model by the name in it.
pub(crate) fn path(req: &ApiRequest) -> Option<(String, bool)> {
    if let Some(route) = req.header(COMPONENT_ROUTE)
        && route.starts_with(BY_NAME)
    {
        // The path below the route as sent: empty for the route itself
        // (`/v2/models/<name>`), where `path_info` would give the whole path instead.
        let below = req.header("spin-path-info").unwrap_or_default();
        return Some((format!("{route}{}", below.trim_end_matches('/')), true));
    }
    let info = req.path_info().trim_end_matches('/');
    (info == "/v2" || info.starts_with("/v2/")).then(|| (info.to_owned(), false))
}

/// Answers the protocol request `req` at `path`.
pub(crate) fn serve<M: Model>(model: &M, req: &ApiRequest, path: &str, by_name: bool) -> Response {
    match route(model, req, path, by_name) {
        Ok(response) => response,
        Err(e) => {
            if e.status >= 500 {
                eprintln!("error: {}", e.message);
            }
            e.response()
        }
    }
}

/// The protocol's answers of a model that could not be loaded: live, never ready (400 with
/// the reason, as a 4xx says false, at every readiness path, versioned or not), the server's
/// own metadata (the server runs; tritonclient reads it before anything else), and 503 with
/// the reason for anything of the model's.
pub(crate) fn serve_unavailable(reason: &str, req: &ApiRequest, path: &str) -> Response {
    let why = format!("model not ready: {reason}");
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let reads = matches!(
        segments.as_slice(),
        ["v2"]
            | ["v2", "health", "live" | "ready"]
            | ["v2", "models", _, "ready"]
            | ["v2", "models", _, "versions", _, "ready"]
    );
    if reads && req.method != "GET" {
        return OipError::not_allowed(&req.method, path, "GET").response();
    }
    match segments.as_slice() {
        ["v2"] => json_response(200, &server_metadata()),
        ["v2", "health", "live"] => json_response(200, &json!({"live": true})),
        _ if reads => json_response(400, &json!({"ready": false, "error": why})),
        _ => OipError::new(503, why).response(),
    }
}

/// `GET /v2`: the server's name, version and extensions.
fn server_metadata() -> Value {
    json!({"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION"), "extensions": EXTENSIONS})
}

fn route<M: Model>(
    model: &M,
    req: &ApiRequest,
    path: &str,
    by_name: bool,
) -> Result<Response, OipError> {
    // Each segment percent-decoded (RFC 3986, 2.1): a client may send a version
    // `sha256:ab` as `sha256%3Aab`, and both name the same version.
    let decoded: Vec<String> = path.split('/').skip(1).map(percent_decoded).collect();
    let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();
    let method = req.method.as_str();
    let only = |allowed: &str| -> Result<(), OipError> {
        if method == allowed {
            Ok(())
        } else {
            Err(OipError::not_allowed(method, path, allowed))
        }
    };
    match segments.as_slice() {
        ["v2"] => {
            only("GET")?;
            Ok(json_response(200, &server_metadata()))
        }
        ["v2", "health", "live"] => {
            only("GET")?;
            Ok(json_response(200, &json!({"live": true})))
        }
        ["v2", "health", "ready"] => {
            only("GET")?;
            Ok(readiness(model))
        }
        ["v2", "models", name, rest @ ..] => {
            let (signature, version) = described(model);
            if !by_name && *name != model.name() {
                return Err(OipError::not_found(format!(
                    "unknown model '{name}': this deployment serves '{}'",
                    model.name()
                )));
            }
            let rest = match rest {
                ["versions", v, rest @ ..] if **v == *version => rest,
                ["versions", v, ..] => {
                    return Err(OipError::not_found(format!(
                        "model '{name}' has no version '{v}'; it serves version '{version}'"
                    )));
                }
                rest => rest,
            };
            match rest {
                [] => {
                    only("GET")?;
                    Ok(json_response(
                        200,
                        &signature.metadata(model.name(), &version),
                    ))
                }
                ["ready"] => {
                    only("GET")?;
                    Ok(readiness(model))
                }
                ["infer"] => {
                    only("POST")?;
                    infer(model, req, &signature, &version)
                }
                _ => Err(OipError::not_found(format!("no route for {path}"))),
            }
        }
        _ => Err(OipError::not_found(format!("no route for {path}"))),
    }
}

/// The model's signature, and the version the metadata and every answer name (the model's,
/// else the one the host deployed, else `1`). Neither changes within a deployment, so an
/// instance builds them once: measured, building molprop's signature and `/info` on every
/// request cost a fifth of its throughput.
/// A model's name, signature and version, kept by [`described`].
type Described = (String, Rc<Signature>, Rc<str>);

fn described<M: Model>(model: &M) -> (Rc<Signature>, Rc<str>) {
    thread_local! {
        static DESCRIBED: RefCell<Option<Described>> = const { RefCell::new(None) };
    }
    if let Some((_, signature, version)) = DESCRIBED.with_borrow(|d| {
        d.as_ref()
            .filter(|(name, ..)| name == model.name())
            .cloned()
    }) {
        return (signature, version);
    }
    let version: Rc<str> = model
        .info()
        .model_version
        .or_else(crate::deployment::version)
        .unwrap_or_else(|| "1".to_owned())
        .into();
    let signature = Rc::new(model.signature());
    DESCRIBED.set(Some((
        model.name().to_owned(),
        signature.clone(),
        version.clone(),
    )));
    (signature, version)
}

/// 200 `{"ready": true}` exactly when v1.2 `/health` answers 200; else 400 (the protocol:
/// a 4xx says false) with why.
fn readiness<M: Model>(model: &M) -> Response {
    match crate::deployment::ready(model) {
        Ok(()) => json_response(200, &json!({"ready": true})),
        Err(e) => json_response(400, &json!({"ready": false, "error": e.message})),
    }
}

fn infer<M: Model>(
    model: &M,
    req: &ApiRequest,
    signature: &Signature,
    version: &str,
) -> Result<Response, OipError> {
    if let Some(encoding) = req.header("content-encoding")
        && !encoding.eq_ignore_ascii_case("identity")
    {
        // 415: the body's coding is what is unsupported (RFC 9110, 15.5.16).
        return Err(OipError::new(
            415,
            format!("content-encoding {encoding} is not accepted; send the body uncompressed"),
        ));
    }
    let answer = infer::run(
        model,
        signature,
        version,
        &req.body,
        req.header(wire::HEADER_LENGTH),
        |ran| crate::deployment::record(model.name(), ran.items, ran.elapsed, ran.error),
    )?;
    let mut builder = Response::builder();
    builder
        .status(200)
        .header("x-content-type-options", "nosniff");
    match answer.header_length {
        Some(n) => builder
            .header("content-type", "application/octet-stream")
            .header(wire::HEADER_LENGTH, n.to_string()),
        None => builder.header("content-type", "application/json"),
    };
    Ok(builder.body(answer.body).build())
}

/// `segment` with each `%XX` replaced by its byte; the segment as sent where that is not
/// UTF-8 or a `%` starts no escape.
fn percent_decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (hex(bytes.get(i + 1)), hex(bytes.get(i + 2)))
        {
            out.push((high * 16 + low) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| segment.to_owned())
}

fn json_response(status: u16, value: &Value) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    guest_kit::http::json_bytes(status, body)
}
