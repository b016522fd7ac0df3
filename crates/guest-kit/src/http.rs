//! Reading requests and writing JSON responses.

use edge_api::error::{ApiError, ErrorCode};
use edge_api::routes::Route;
use futures::StreamExt;
use serde::Serialize;
use spin_sdk::http::IncomingRequest;
pub use spin_sdk::http::Response;

/// Default request-body cap inside a component. The native host enforces its own (flag
/// `--max-body`); this one protects a component served by any host.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

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

/// Reads the request, capping the body at `max_body` bytes.
pub async fn read_request(req: IncomingRequest, max_body: usize) -> Result<ApiRequest, ApiError> {
    let method = match req.method().to_string().to_ascii_uppercase() {
        // HEAD is GET without the body (RFC 9110, 9.3.2); the HTTP server leaves the body out.
        m if m == "HEAD" => "GET".to_owned(),
        m => m,
    };
    let path_with_query = req.path_with_query().unwrap_or_else(|| "/".to_owned());
    let (path, query) = match path_with_query.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (path_with_query, String::new()),
    };
    let headers: Vec<(String, String)> = req
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                String::from_utf8_lossy(&v).into_owned(),
            )
        })
        .collect();
    let too_large = || {
        ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("request body exceeds the limit of {max_body} bytes"),
        )
    };
    let declared = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut stream = req.into_body_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidJson,
                format!("could not read request body: {e:?}"),
            )
        })?;
        if body.len() + chunk.len() > max_body {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(ApiRequest {
        method,
        path,
        query,
        headers,
        body,
    })
}

/// A JSON response with the given status.
pub fn json<T: Serialize + ?Sized>(status: u16, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(body)
            .build(),
        Err(e) => error(&ApiError::internal(format!(
            "could not serialise response: {e}"
        ))),
    }
}

/// The error body with the error's status.
pub fn error(err: &ApiError) -> Response {
    let mut builder = Response::builder();
    builder
        .status(err.status)
        .header("content-type", "application/json")
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

/// Runs a component's handler: reads the request (body capped at `max_body`), calls
/// `handler`, and turns any error into the JSON error body.
pub async fn serve<F>(req: IncomingRequest, max_body: usize, handler: F) -> Response
where
    F: AsyncFnOnce(ApiRequest) -> Result<Response, ApiError>,
{
    let request = match read_request(req, max_body).await {
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
