//! Reading requests and writing JSON responses.

use edge_api::error::{ApiError, ErrorCode};
use edge_api::routes::Route;
use serde::Serialize;
use spin_sdk::http::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse};
pub use spin_sdk::http::{Response, ResponseOutparam};
use wasi::io::streams::{OutputStream, StreamError};

/// Default request-body cap inside a component. The native host enforces its own (flag
/// `--max-body`); this one protects a component served by any host.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// How much of a request's body a component reads: one cap for every request (a `usize`),
/// or one chosen from the request's method, path and headers ([`PerRequest`]), so a route
/// that takes large bodies from an authenticated writer does not open them to everyone.
pub trait BodyLimit {
    /// The cap for `head` (a request whose body is not read yet).
    fn for_request(&self, head: &ApiRequest) -> usize;
}

impl BodyLimit for usize {
    fn for_request(&self, _: &ApiRequest) -> usize {
        *self
    }
}

/// A cap chosen per request by a function of its head.
pub struct PerRequest<F>(pub F);

impl<F: Fn(&ApiRequest) -> usize> BodyLimit for PerRequest<F> {
    fn for_request(&self, head: &ApiRequest) -> usize {
        (self.0)(head)
    }
}

/// A request with its body read, ready for routing.
#[derive(Debug, Clone)]
pub struct ApiRequest {
    /// Upper-case method name.
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Raw query string (without `?`), possibly empty.
    pub query: String,
    /// Headers with lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl ApiRequest {
    /// First value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// First value of a query parameter, percent-decoded.
    pub fn query_param(&self, name: &str) -> Option<String> {
        form_urlencoded::parse(self.query.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }

    /// A query parameter that must be present and non-empty.
    pub fn required_query(&self, name: &str, what: &str) -> Result<String, ApiError> {
        match self.query_param(name) {
            Some(v) if !v.trim().is_empty() => Ok(v.trim().to_owned()),
            _ => Err(ApiError::new(
                ErrorCode::MissingField,
                format!("no {what} specified: query parameter `{name}` is required"),
            )),
        }
    }

    /// Parses the body as JSON into `T` (400 with the field named on failure).
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, ApiError> {
        edge_api::json::parse_body(&self.body)
    }

    /// The token of an `Authorization: Bearer <token>` header.
    pub fn bearer_token(&self) -> Option<&str> {
        let value = self.header("authorization")?;
        let (scheme, token) = value.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    }

    /// The path below the route the host matched, for components mounted under a prefix.
    /// Spin sends it as `spin-path-info`; without that header the whole path is used.
    pub fn path_info(&self) -> &str {
        match self.header("spin-path-info") {
            Some(p) if p.starts_with('/') => p,
            _ => &self.path,
        }
    }
}

/// Reads the request, capping the body at what `limit` allows for it.
pub fn read_request(req: IncomingRequest, limit: &impl BodyLimit) -> Result<ApiRequest, ApiError> {
    let mut method = req.method().to_string();
    method.make_ascii_uppercase();
    if method == "HEAD" {
        // HEAD is GET without the body (RFC 9110, 9.3.2); the HTTP server leaves the body out.
        method.replace_range(.., "GET");
    }
    let mut path = req.path_with_query().unwrap_or_else(|| "/".to_owned());
    let query = match path.find('?') {
        Some(at) => {
            let query = path[at + 1..].to_owned();
            path.truncate(at);
            query
        }
        None => String::new(),
    };
    // The names and values the host handed over are used as they are (lower-cased in
    // place, a value kept as text when it is UTF-8): no copy of each header.
    let headers: Vec<(String, String)> = req
        .headers()
        .entries()
        .into_iter()
        .map(|(mut name, value)| {
            name.make_ascii_lowercase();
            let value = String::from_utf8(value)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            (name, value)
        })
        .collect();
    let declared = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.trim().parse::<u64>().ok());
    let mut request = ApiRequest {
        method,
        path,
        query,
        headers,
        body: Vec::new(),
    };
    let max_body = limit.for_request(&request);
    if declared.is_some_and(|n| n > max_body as u64) {
        return Err(too_large(max_body));
    }
    // No route reads a GET's body, so it is left unread: on a warm host that is half the
    // host calls of a `/health`.
    if request.method != "GET" {
        request.body = read_body(&req, max_body, declared)?;
    }
    Ok(request)
}

/// The request's body, at most `max_body` bytes. Blocking reads: each returns what has
/// arrived (all of it at once where the host has read the body first, as `runtime-host`
/// does), and an instance serves one request at a time on every host, so blocking holds up
/// nothing else. A body of the `declared` length is complete without the read that would
/// find the stream closed.
fn read_body(
    req: &IncomingRequest,
    max_body: usize,
    declared: Option<u64>,
) -> Result<Vec<u8>, ApiError> {
    let unreadable = |why: String| {
        ApiError::new(
            ErrorCode::InvalidJson,
            format!("could not read request body: {why}"),
        )
    };
    let incoming = req
        .consume()
        .map_err(|()| unreadable("the body was already consumed".into()))?;
    let stream = incoming
        .stream()
        .map_err(|()| unreadable("the body has no stream".into()))?;
    let mut body = Vec::new();
    loop {
        match stream.blocking_read(READ_CHUNK) {
            Ok(chunk) if body.len() + chunk.len() > max_body => return Err(too_large(max_body)),
            Ok(chunk) => {
                body.extend_from_slice(&chunk);
                if declared == Some(body.len() as u64) {
                    return Ok(body);
                }
            }
            Err(StreamError::Closed) => return Ok(body),
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(unreadable(e.to_debug_string()));
            }
        }
    }
}

/// 413 for a body over `max_body` bytes.
fn too_large(max_body: usize) -> ApiError {
    ApiError::new(
        ErrorCode::PayloadTooLarge,
        format!("request body exceeds the limit of {max_body} bytes"),
    )
}

/// Bytes asked for per read of a request body.
const READ_CHUNK: u64 = 64 * 1024;

/// Sends `resp` through `out`, in as few host calls as its body allows (one write for a
/// body of up to 4 KiB), with its `content-length`. Written here rather than by the SDK's
/// handler glue, which spends four stream calls on the smallest body and sends it chunked.
pub fn respond(out: ResponseOutparam, resp: Response) {
    let status = *resp.status();
    let length = resp.body().len().to_string().into_bytes();
    let fields: Vec<(String, Vec<u8>)> = resp
        .headers()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("content-length"))
        .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
        .chain(std::iter::once(("content-length".to_owned(), length)))
        .collect();
    // What the handler built cannot be sent: the caller gets a 500 saying why instead.
    let refuse = |out, why: String| {
        let err = ApiError::internal(why);
        eprintln!("error: {err}");
        respond(out, error(&err));
    };
    let head = match Fields::from_list(&fields) {
        Ok(head) => head,
        Err(e) => return refuse(out, format!("the response has an invalid header: {e:?}")),
    };
    let outgoing = OutgoingResponse::new(head);
    // A new response's status is 200 already.
    if status != 200 && outgoing.set_status_code(status).is_err() {
        return refuse(out, format!("the response has an invalid status {status}"));
    }
    let Ok(body) = outgoing.body() else {
        eprintln!("error: the response body could not be opened");
        return;
    };
    ResponseOutparam::set(out, outgoing);
    let Ok(stream) = body.write() else {
        eprintln!("error: the response body could not be written");
        return;
    };
    // The client may have gone away: nothing is left to tell it then.
    let written = write_all(&stream, resp.body());
    drop(stream);
    if written.is_ok() {
        let _ = OutgoingBody::finish(body, None);
    }
}

/// Writes `bytes` to `stream` and flushes it.
fn write_all(stream: &OutputStream, mut bytes: &[u8]) -> Result<(), StreamError> {
    // `blocking-write-and-flush` takes at most 4096 bytes (WASI 0.2 streams).
    if bytes.len() <= 4096 {
        return stream.blocking_write_and_flush(bytes);
    }
    while !bytes.is_empty() {
        let room = stream.check_write()?;
        if room == 0 {
            stream.subscribe().block();
            continue;
        }
        let n = usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len());
        stream.write(&bytes[..n])?;
        bytes = &bytes[n..];
    }
    stream.blocking_flush()
}

/// A JSON response with the given status.
pub fn json<T: Serialize + ?Sized>(status: u16, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => json_bytes(status, body),
        Err(e) => error(&unserialisable(e)),
    }
}

/// 500 for an answer that could not be turned into JSON.
pub fn unserialisable(e: serde_json::Error) -> ApiError {
    ApiError::internal(format!("could not serialise response: {e}"))
}

/// A response with the given status whose body is JSON already serialised (`nosniff`: no
/// browser reads it as anything else).
pub fn json_bytes(status: u16, body: Vec<u8>) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .header("x-content-type-options", "nosniff")
        .body(body)
        .build()
}

/// The error body with the error's status.
pub fn error(err: &ApiError) -> Response {
    let mut builder = Response::builder();
    builder
        .status(err.status)
        .header("content-type", "application/json")
        .header("x-content-type-options", "nosniff")
        .header(edge_api::error::ERROR_CODE_HEADER, err.code.as_str());
    if err.code == ErrorCode::Unauthorized {
        builder.header("www-authenticate", "Bearer");
    }
    if matches!(
        err.code,
        ErrorCode::StoreContention | ErrorCode::StoreUnavailable
    ) {
        builder.header("retry-after", "1");
    }
    builder.body(err.body().to_json()).build()
}

/// 405 with an `Allow` header listing what the route does accept.
pub fn method_not_allowed(method: &str, path: &str, allowed: &[&str]) -> Response {
    let allow = allowed.join(", ");
    let err = ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!("{method} is not allowed on {path}; allowed: {allow}"),
    );
    let mut resp = error(&err);
    resp.set_header("allow", allow);
    resp
}

/// The template of the route in `table` that answers `method` on `path`; otherwise the
/// answer to send instead: 404 for an unknown path, 405 (with `Allow`) for a known path and
/// another method.
pub fn route_for(
    table: &'static [Route],
    method: &str,
    path: &str,
) -> Result<&'static str, Result<Response, ApiError>> {
    match edge_api::routes::find(table, path) {
        None => Err(Err(no_route(path))),
        Some(r) if !r.methods.contains(&method) => {
            Err(Ok(method_not_allowed(method, path, r.methods)))
        }
        Some(r) => Ok(r.path),
    }
}

/// 500 for a route the table lists but the component's dispatch does not handle.
pub fn unhandled_route(path: &str) -> ApiError {
    ApiError::internal(format!("route {path} is listed but has no handler"))
}

/// 404 for a path no route matches.
pub fn no_route(path: &str) -> ApiError {
    let path = if path.is_empty() { "/" } else { path };
    ApiError::not_found(format!("no route for {path}"))
}

/// Runs a component's handler: reads the request (body capped as `limit` says), calls
/// `handler`, and turns any error into the JSON error body.
pub async fn serve<F>(req: IncomingRequest, limit: impl BodyLimit, handler: F) -> Response
where
    F: AsyncFnOnce(ApiRequest) -> Result<Response, ApiError>,
{
    let request = match read_request(req, &limit) {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    match handler(request).await {
        Ok(resp) => resp,
        Err(e) => {
            if e.status >= 500 {
                eprintln!("error: {e}");
            }
            error(&e)
        }
    }
}
