//! Responses the host itself writes (errors raised before or instead of the guest's answer),
//! in the same JSON error body the components use.

use bytes::Bytes;
use edge_api::error::{ApiError, ErrorCode};
use http_body_util::{BodyExt, Full};
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

pub type HostResponse = hyper::Response<HyperOutgoingBody>;

pub fn body_from(bytes: impl Into<Bytes>) -> HyperOutgoingBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

pub fn json(status: u16, body: impl Into<Bytes>) -> HostResponse {
    hyper::Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(body_from(body))
        .expect("static response parts are valid")
}

pub fn error(code: ErrorCode, message: impl Into<String>) -> HostResponse {
    let err = ApiError::new(code, message);
    let mut resp = json(err.status, err.body().to_json());
    if code == ErrorCode::Overloaded {
        resp.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("1"),
        );
    }
    resp
}
