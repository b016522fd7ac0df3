//! The deployments' admin API, on the app port under `/admin/`, for whoever operates the stack: list
//! the deployments with their version and source, deploy a model from a path, undeploy one,
//! reload one (its source loaded again as a new version, taking over only if it passes its
//! self-test). Every call needs `Authorization: Bearer <token>` (`$UP_ADMIN_TOKEN`, else the
//! file `admin_token` in the data directory, readable by its owner only).
//!
//! | Method and path | Answer |
//! |---|---|
//! | `GET /admin/deployments` | `{"deployments": [...]}` |
//! | `POST /admin/deployments` `{"path": "...", "name": "..."}` | 201 and the deployment, once it serves |
//! | `DELETE /admin/deployments/{name}` | 200 once it no longer takes requests |
//! | `POST /admin/deployments/{name}/reload` | 200 and the deployment, on its new version |

use crate::services::deployments::live::{Listing, LiveSet, Refused};
use crate::services::model::spec::{model_spec, valid_name};
use edge_api::error::ErrorCode;
use host_core::http::responses::{self, HostResponse};
use host_core::http::router::HostRoute;
use host_core::support::token::{Admission, Token};
use http_body_util::BodyExt;
use hyper::Method;
use hyper::body::Incoming;
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The admin API's paths on the app port, as a Spin route.
pub const ROUTE: &str = "/admin/...";

/// Largest request body the admin API reads.
const MAX_BODY: usize = 64 * 1024;

/// The admin API's route, answered by the host.
pub struct AdminRoute {
    live: Arc<LiveSet>,
    token: Token,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DeployRequest {
    /// A component (`.wasm`) or a model directory (with a `model.toml`) on this machine.
    path: std::path::PathBuf,
    /// Default: the file's or directory's name.
    name: Option<String>,
}

impl AdminRoute {
    pub fn new(live: Arc<LiveSet>, token: Token) -> Self {
        Self { live, token }
    }

    /// Where the token is, for `up`'s table.
    pub fn token_note(&self) -> &str {
        &self.token.note
    }

    async fn respond(&self, req: hyper::Request<Incoming>) -> HostResponse {
        match self.token.admits_headers(req.headers()) {
            Admission::Admitted => {}
            Admission::Missing => {
                return responses::unauthorized(
                    "the admin API needs `Authorization: Bearer <token>` (see `up`'s table for where the token is)",
                );
            }
            Admission::Wrong => {
                return responses::error(ErrorCode::Forbidden, "wrong admin token");
            }
        }
        let path = req.uri().path().trim_end_matches('/').to_owned();
        let rest = path.strip_prefix("/admin/deployments");
        match (req.method().clone(), rest) {
            (Method::GET, Some("")) => {
                let list = self.live.list().await;
                responses::json(200, json!({ "deployments": list }).to_string())
            }
            (Method::POST, Some("")) => self.deploy(req).await,
            (method, Some(rest)) if rest.starts_with('/') => {
                let mut parts = rest[1..].splitn(2, '/');
                let name = parts.next().unwrap_or_default().to_owned();
                match (method, parts.next()) {
                    (Method::DELETE, None) => self.undeploy(&name).await,
                    (Method::POST, Some("reload")) => {
                        let failed = "was not reloaded (what served, if anything, keeps serving)";
                        answer_listed(200, self.live.reload(&name).await, &name, failed)
                    }
                    (m, None) => not_allowed(&m, &path, "DELETE"),
                    (m, Some("reload")) => not_allowed(&m, &path, "POST"),
                    _ => not_found(&path),
                }
            }
            (m, Some("")) => not_allowed(&m, &path, "GET, POST"),
            _ => not_found(&path),
        }
    }

    async fn deploy(&self, req: hyper::Request<Incoming>) -> HostResponse {
        let body = match http_body_util::Limited::new(req.into_body(), MAX_BODY)
            .collect()
            .await
        {
            Ok(b) => b.to_bytes(),
            Err(_) => {
                return responses::error(
                    ErrorCode::PayloadTooLarge,
                    format!("the admin API reads bodies of up to {MAX_BODY} bytes"),
                );
            }
        };
        let request: DeployRequest = match serde_json::from_slice(&body) {
            Ok(r) => r,
            Err(e) => {
                let code = if e.is_syntax() || e.is_eof() {
                    ErrorCode::InvalidJson
                } else {
                    ErrorCode::InvalidField
                };
                return responses::error(
                    code,
                    format!("expected {{\"path\": \"...\", \"name\": \"...\"}}: {e}"),
                );
            }
        };
        let mut spec = match model_spec(&request.path) {
            Ok(spec) if request.path.is_absolute() => spec,
            Ok(_) => {
                return responses::error(
                    ErrorCode::InvalidField,
                    "`path` must be absolute (it is read by the host, not by the client)",
                );
            }
            Err(e) => return responses::error(ErrorCode::InvalidField, format!("{e:#}")),
        };
        if let Some(name) = request.name {
            spec.name = name;
        }
        if let Err(why) = valid_name(&spec.name) {
            return responses::error(ErrorCode::InvalidField, why);
        }
        let name = spec.name.clone();
        let failed = "could not be deployed";
        answer_listed(201, self.live.deploy(spec).await, &name, failed)
    }

    async fn undeploy(&self, name: &str) -> HostResponse {
        if self.live.remove(name).await {
            let body = json!({"success": true, "message": format!("{name} no longer takes requests; it stops once those in flight finish")});
            responses::json(200, body.to_string())
        } else {
            no_such(name)
        }
    }
}

impl HostRoute for AdminRoute {
    fn answer(
        &self,
        req: hyper::Request<Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        Box::pin(self.respond(req))
    }
}

/// The admin API's answer about deployment `name`; `failed` says what a refusal means for it.
fn answer_listed(
    status: u16,
    outcome: Result<Listing, Refused>,
    name: &str,
    failed: &str,
) -> HostResponse {
    match outcome {
        Ok(listed) => responses::json(
            status,
            json!({"success": true, "deployment": listed}).to_string(),
        ),
        Err(refused) => {
            let mut resp = responses::error(refused.error_code(), refused.message(name, failed));
            if let Refused::Busy = refused {
                resp.headers_mut().insert(
                    hyper::header::RETRY_AFTER,
                    hyper::header::HeaderValue::from_static("2"),
                );
            }
            resp
        }
    }
}

fn no_such(name: &str) -> HostResponse {
    let unknown = Refused::Unknown;
    responses::error(unknown.error_code(), unknown.message(name, ""))
}

fn not_found(path: &str) -> HostResponse {
    responses::error(ErrorCode::NotFound, format!("no admin route {path}"))
}

fn not_allowed(method: &Method, path: &str, allow: &'static str) -> HostResponse {
    let mut resp = responses::error(
        ErrorCode::MethodNotAllowed,
        format!("{method} is not allowed on {path}; allowed: {allow}"),
    );
    resp.headers_mut().insert(
        hyper::header::ALLOW,
        hyper::header::HeaderValue::from_static(allow),
    );
    resp
}
