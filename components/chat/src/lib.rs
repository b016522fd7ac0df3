//! Interface A as a WebAssembly component: `GET /api/chats`, `GET /api/dialog?id=` (spec 4.1),
//! and the write API docs/DESIGN.md adds beside them (enabled only when the `chat_admin_token`
//! variable is set):
//!
//! | method | path                         | answer                         |
//! |--------|------------------------------|--------------------------------|
//! | GET    | /api/chats?limit=&offset=    | 200 one page of summaries      |
//! | POST   | /api/chats                   | 201 the new dialog             |
//! | POST   | /api/dialog/messages?id=ID   | 201 the stored message         |
//! | POST   | /api/dialog/reply?id=ID      | 201 the model's reply, stored  |
//! | DELETE | /api/dialog?id=ID            | 200 `{success, message, id}`   |
//!
//! With the `sample_dialogs` variable `true`, a store's first request stores the sample
//! dialogs first ([`samples`]).

mod auth;
mod dialogs;
mod params;
mod prompt;
mod records;
mod reply;
mod samples;

use guest_kit::ApiError;
use guest_kit::http::{self, ApiRequest, DEFAULT_MAX_BODY, PerRequest, Response};
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    guest_kit::respond(
        out,
        guest_kit::serve(req, PerRequest(body_limit), async |r| route(r)).await,
    );
}

/// A whole dialog from the admin (`POST /api/chats` with the token) may be as large as a
/// dialog may grow, so an export always imports; every other body is read up to 1 MiB.
fn body_limit(head: &ApiRequest) -> usize {
    let creates = head.method == "POST" && head.path.trim_end_matches('/') == "/api/chats";
    if creates && auth::require_admin(head).is_ok() {
        edge_api::chat::MAX_WRITE_BODY_BYTES
    } else {
        DEFAULT_MAX_BODY
    }
}

fn route(req: ApiRequest) -> Result<Response, ApiError> {
    samples::store_once();
    let path = req.path.trim_end_matches('/').to_owned();
    let template = match http::route_for(&edge_api::chat::ROUTES, &req.method, &path) {
        Ok(t) => t,
        Err(answer) => return answer,
    };
    match (template, req.method.as_str()) {
        ("/api/chats", "GET") => dialogs::list(&req),
        ("/api/chats", "POST") => dialogs::create(&req),
        ("/api/dialog", "GET") => dialogs::get(&req),
        ("/api/dialog", "DELETE") => dialogs::delete(&req),
        ("/api/dialog/messages", "POST") => dialogs::append(&req),
        ("/api/dialog/reply", "POST") => reply::reply(&req),
        _ => Err(http::unhandled_route(&path)),
    }
}
