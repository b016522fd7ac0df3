//! Interface C as a WebAssembly component (spec 2.13, 3, 4.3; docs/DESIGN.md "Port registry"):
//!
//! | method | path                                   | answer                                   |
//! |--------|----------------------------------------|------------------------------------------|
//! | POST   | /register                              | 200 registration response                |
//! | POST   | /heartbeat/{port}                      | 200 `{success, port, last_heartbeat, expires_at}` |
//! | DELETE | /unregister/{port}?registration_id=ID  | 200 `{success, message, freed_port}`     |
//! | GET    | /registry                              | 200 `{success, count, registrations}`    |
//! | POST   | /registry/maintenance/processes        | host only: process liveness reports      |
//!
//! Expired leases need no background task: every write sweeps them, and every read ignores
//! them, so an expired registration is gone the moment its lease ends.

mod caller;
mod handlers;
mod maintenance;
mod records;
mod settings;

use guest_kit::http::{self, ApiRequest, DEFAULT_MAX_BODY, Response};
use guest_kit::{ApiError, ErrorCode};
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    guest_kit::respond(
        out,
        guest_kit::serve(req, DEFAULT_MAX_BODY, async |r| route(r)).await,
    );
}

/// Parses the `{port}` path segment.
fn port_segment(segment: &str) -> Result<u16, ApiError> {
    // Digits only, no sign or leading zero: one port, one spelling.
    let canonical = !segment.is_empty()
        && segment.bytes().all(|b| b.is_ascii_digit())
        && !segment.starts_with('0');
    segment
        .parse::<u16>()
        .ok()
        .filter(|p| *p > 0 && canonical)
        .ok_or_else(|| {
            ApiError::invalid(
                "port",
                format!("`{segment}` is not a port number (1-65535)"),
            )
        })
}

fn route(req: ApiRequest) -> Result<Response, ApiError> {
    let path = req.path.trim_end_matches('/').to_owned();
    if path == "/heartbeat" || path == "/unregister" {
        return Err(ApiError::new(
            ErrorCode::MissingField,
            format!("{path} needs a port: {path}/{{port}}"),
        ));
    }
    let template = match http::route_for(&edge_api::registry::ROUTES, &req.method, &path) {
        Ok(t) => t,
        Err(answer) => return answer,
    };
    let port = || port_segment(path.rsplit('/').next().unwrap_or_default());
    match template {
        "/register" => handlers::register(&req),
        "/heartbeat/{port}" => handlers::heartbeat(&req, port()?),
        "/unregister/{port}" => handlers::unregister(&req, port()?),
        "/registry" => handlers::list(),
        "/registry/maintenance/processes" => maintenance::processes(&req),
        _ => Err(http::unhandled_route(&path)),
    }
}
