//! The app: every service of the stack on one port and one origin, routed by path the way
//! `spin.toml` routes them under `spin up` (the registry's routes, chat under `/api/...`,
//! each model under `/models/<name>/...`, the console at `/...`). The console and any other
//! browser page then talk to one origin under either host, with no CORS. The routing itself
//! is `host_core::http::router`'s; this module knows which service is where.

use host_core::http::responses::{self, HostResponse};
use host_core::http::router::{AppRouter, HostRoute};
use host_core::http::slot::ServerSlot;
use hyper::body::Incoming;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The routes of the registry and of chat, exactly as `spin.toml` lists them.
pub const REGISTRY_ROUTES: &[&str] = &[
    "/register",
    "/heartbeat/...",
    "/unregister/...",
    "/registry",
    "/registry/...",
];
pub const CHAT_ROUTES: &[&str] = &["/api/..."];
pub const CONSOLE_ROUTE: &str = "/...";

/// A model's route: `/models/<name>/...`.
pub fn model_route(name: &str) -> String {
    format!("/models/{name}/...")
}

/// The routes of the stack, as `spin.toml` lays them out.
pub fn router(
    registry: &Arc<ServerSlot>,
    chat: &Arc<ServerSlot>,
    console: &Arc<ServerSlot>,
    models: &[(String, Arc<ServerSlot>)],
) -> AppRouter {
    let mut app = REGISTRY_ROUTES
        .iter()
        .fold(AppRouter::default(), |app, r| app.route(r, registry));
    app = CHAT_ROUTES.iter().fold(app, |app, r| app.route(r, chat));
    for (name, slot) in models {
        app.add(&model_route(name), slot);
    }
    app.route(CONSOLE_ROUTE, console)
}

/// Where a load balancer checks that the host serves.
pub const HEALTH_PATH: &str = "/health";

/// `GET /health` on the app port: 200 `{"status":"ok"}` while the host serves. It reads no
/// store on purpose: with Redis away every host is equally unable to write, and clients
/// should get the store's own 503 `store_unavailable` from a host rather than a load
/// balancer's "no server" page. Once a stop begins the listener closes, and checks fail.
/// Other methods go on to the app's routes: a `POST /health` meant for a model gets the
/// console's 404 naming the models, as before.
pub struct HealthRoute;

impl HostRoute for HealthRoute {
    fn answer(
        &self,
        _req: hyper::Request<Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        Box::pin(std::future::ready(responses::json(
            200,
            r#"{"status":"ok"}"#,
        )))
    }

    fn takes(&self, method: &hyper::Method) -> bool {
        method == hyper::Method::GET || method == hyper::Method::HEAD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The router and `spin.toml` route the same paths to the same services.
    #[test]
    fn the_routes_are_those_of_spin_toml() {
        let manifest = include_str!("../../../spin.toml");
        let doc: toml::Table = toml::from_str(manifest).expect("spin.toml parses");
        let triggers = doc["trigger"]["http"].as_array().expect("[[trigger.http]]");
        let mut by_component: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for t in triggers {
            by_component
                .entry(t["component"].as_str().unwrap().to_owned())
                .or_default()
                .push(t["route"].as_str().unwrap().to_owned());
        }
        assert_eq!(by_component.remove("registry").unwrap(), REGISTRY_ROUTES);
        assert_eq!(by_component.remove("chat").unwrap(), CHAT_ROUTES);
        assert_eq!(by_component.remove("console").unwrap(), [CONSOLE_ROUTE]);
        for (component, routes) in by_component {
            assert_eq!(
                routes,
                [model_route(&component)],
                "model component {component}"
            );
        }
    }
}
