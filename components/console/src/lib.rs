//! The web console as a WebAssembly component: one page, its style sheet and its JavaScript
//! modules, all compiled in (`assets/`), so the same `.wasm` serves the console under
//! `spin up` (route `/...` in `spin.toml`) and on `runtime-host up`'s app port.
//!
//! The page talks to the other services on the same origin (`/registry`, `/api/...`,
//! `/models/<name>/...`), which is why it needs no CORS anywhere. The only thing it cannot
//! find out by itself is which models the app serves under `/models/`: under Spin nothing
//! registers them, so the `models` variable lists their names, and `/console.json` hands that
//! list to the page. (`runtime-host up` answers `/console.json` and `/models/<unknown>/...`
//! itself, with the models routed at that moment.)
//!
//! | method    | path              | answer                                      |
//! |-----------|-------------------|---------------------------------------------|
//! | GET, HEAD | /                 | the page                                    |
//! | GET, HEAD | /assets/{file}    | a style sheet, script module or icon        |
//! | GET       | /console.json     | `{"models": [...]}`: names under /models/   |
//! | GET, HEAD | /depict.svg       | `?smiles=`: the molecule drawn (SVG)        |
//! | any       | /models/{name}/...| 404: no such model (each model has its own route), naming the models |
//! | any       | anything else     | 404 (a model endpoint such as `/predict`: saying models are under `/models/<name>/`) |

mod assets;
mod depict;

use guest_kit::http::{self, ApiRequest, Response};
use guest_kit::{ApiError, ErrorCode};
use serde_json::json;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

/// The console takes no request bodies; anything larger is refused before routing.
const MAX_BODY: usize = 16 * 1024;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    guest_kit::respond(
        out,
        guest_kit::serve(req, MAX_BODY, async |r| route(&r)).await,
    );
}

fn route(req: &ApiRequest) -> Result<Response, ApiError> {
    let path = req.path_info();
    let head = req.method == "HEAD";
    // Every model has a route of its own: a path under /models/ that reached the catch-all
    // names no model, whatever the method.
    if let Some(rest) = path.strip_prefix("/models/") {
        let name = rest.split('/').next().unwrap_or_default();
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!(
                "no model {name:?} is deployed here; the models are: {}",
                model_names().join(", ")
            ),
        ));
    }
    // A path the console does not serve is 404 whatever the method (a POST to /predict on
    // the app port is a model endpoint without its model's prefix, not a wrong method).
    let console_path = matches!(path, "/" | "/index.html" | "/console.json" | "/depict.svg")
        || path.starts_with("/assets/");
    if !console_path {
        return Err(not_here(path));
    }
    if !matches!(req.method.as_str(), "GET" | "HEAD") {
        return Ok(http::method_not_allowed(
            &req.method,
            path,
            &["GET", "HEAD"],
        ));
    }
    if path == "/depict.svg" {
        return depict::depict(req, head);
    }
    if path == "/console.json" {
        return Ok(http::json(200, &json!({ "models": model_names() })));
    }
    let name = match path {
        "/" | "/index.html" => "index.html",
        _ => path
            .strip_prefix("/assets/")
            .ok_or_else(|| http::no_route(path))?,
    };
    let asset = assets::find(name).ok_or_else(|| {
        ApiError::new(
            ErrorCode::NotFound,
            format!("the console has no file {path}"),
        )
    })?;
    Ok(assets::respond(asset, req.header("if-none-match"), head))
}

/// 404 for a path no service of the app serves; a model endpoint's says where models are.
fn not_here(path: &str) -> ApiError {
    // The model endpoints of interface B live under each model's prefix on the app port.
    if edge_api::model::ROUTES.iter().any(|r| r.path == path) {
        let names = model_names();
        let example = names.first().map_or("<name>", String::as_str);
        return ApiError::new(
            ErrorCode::NotFound,
            format!(
                "no route for {path} here: on the app port each model answers under \
                 /models/<name>/ (e.g. /models/{example}{path}); the models are: {}",
                names.join(", ")
            ),
        );
    }
    ApiError::new(
        ErrorCode::NotFound,
        format!("the console has no file {path}"),
    )
}

/// The `models` variable: model names separated by commas or white space. Names that could
/// not be a path segment are dropped (the page builds `/models/<name>/` from them).
fn model_names() -> Vec<String> {
    let raw = guest_kit::config::variable("models")
        .ok()
        .flatten()
        .unwrap_or_default();
    raw.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| {
            !n.is_empty()
                && n.len() <= 200
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && n.chars().any(|c| c != '.')
        })
        .map(str::to_owned)
        .collect()
}
