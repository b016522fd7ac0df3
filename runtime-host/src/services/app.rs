//! The app: every service of the stack on one port and one origin, routed by path the way
//! `spin.toml` routes them under `spin up` (the registry's routes, chat under `/api/...`,
//! each model under `/models/<name>/...` and, for the Open Inference Protocol's clients,
//! `/v2/models/<name>/...`, the console at `/...`). The console and any other
//! browser page then talk to one origin under either host, with no CORS. The routing itself
//! is `host_core::http::router`'s; this module knows which service is where.

use edge_api::error::ErrorCode;
use host_core::http::responses::{self, HostResponse};
use host_core::http::router::{AppRouter, HostRoute};
use host_core::http::slot::ServerSlot;
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

/// Every route of a model, in `spin.toml`'s order: its own prefix, and the Open Inference
/// Protocol's `/v2/models/<name>/...` (the model SDK rebuilds the protocol path from the
/// `spin-component-route` this route sends, so a client given the app's URL picks the model
/// by name).
pub fn model_routes(name: &str) -> [String; 2] {
    [model_route(name), format!("/v2/models/{name}/...")]
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
        for route in model_routes(name) {
            app.add(&route, slot);
        }
    }
    app.route(CONSOLE_ROUTE, console)
}

/// Where a load balancer checks that the host serves (`up`'s answer: `services::deployments::health`).
pub const HEALTH_PATH: &str = "/health";

/// The console's configuration (`{"models": [...]}`, the models its pages list).
pub const CONSOLE_CONFIG_PATH: &str = "/console.json";

/// `GET /console.json` on `up`'s app port, answered by the host: the models routed now, those
/// of the start first in their order (the console component's `models` variable, which is
/// all Spin has), then those a watched directory or the admin API added since, so the
/// console's pages list every model serving. Other methods go on to the console.
pub struct ConsoleConfig {
    /// The app this route is part of (weak: the app holds the route).
    pub app: std::sync::Weak<AppRouter>,
    /// The models deployed at start, in their order.
    pub at_start: Vec<String>,
}

impl HostRoute for ConsoleConfig {
    fn answer(
        &self,
        _req: hyper::Request<hyper::body::Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        let routed = self
            .app
            .upgrade()
            .map(|app| app.names_under("/models/"))
            .unwrap_or_default();
        let mut models: Vec<&String> = self
            .at_start
            .iter()
            .filter(|n| routed.contains(n))
            .collect();
        let added: Vec<&String> = routed.iter().filter(|n| !models.contains(n)).collect();
        models.extend(added);
        let body = serde_json::json!({ "models": models }).to_string();
        Box::pin(std::future::ready(responses::json(200, body)))
    }

    fn takes(&self, method: &hyper::Method) -> bool {
        method == hyper::Method::GET
    }
}

/// The models' parent path; a path under it that no model's own route claims names no
/// model.
pub const MODELS_ROUTE: &str = "/models/...";

/// `/models/<name>/...` for a name no model is routed at: 404 `not_found` naming the models
/// the app routes now, those deployed at start, by a watched directory and through the
/// admin API alike. The console answers the same under Spin, where the models are those
/// `spin.toml` lists (its `models` variable); on `up`'s app port the host answers it, as the
/// console knows only the models of the start. Answered where no model's route is more
/// specific ([`AppRouter::answer_unclaimed`]).
pub struct UnknownModel {
    /// The app this route is part of (weak: the app holds the route).
    pub app: std::sync::Weak<AppRouter>,
}

impl HostRoute for UnknownModel {
    fn answer(
        &self,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        let path = req.uri().path();
        let rest = path.strip_prefix("/models/").unwrap_or_default();
        let name = rest.split('/').next().unwrap_or_default();
        let names = self
            .app
            .upgrade()
            .map(|app| app.names_under("/models/"))
            .unwrap_or_default();
        let message = format!(
            "no model {name:?} is deployed here; the models are: {}",
            names.join(", ")
        );
        Box::pin(std::future::ready(responses::error(
            ErrorCode::NotFound,
            message,
        )))
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
                model_routes(&component),
                "model component {component}"
            );
        }
    }

    /// `up` grants its own services no outbound hosts (`Access::nothing`) and its models
    /// only what `--allow-outbound` and their manifests name, none by default: as `spin up`
    /// grants, where spin.toml declares no component `allowed_outbound_hosts`.
    #[test]
    fn spin_toml_allows_no_component_outbound_hosts() {
        let doc: toml::Table = toml::from_str(include_str!("../../../spin.toml")).unwrap();
        let components = doc["component"].as_table().expect("[component.*]");
        assert!(components.len() >= 7);
        for (name, c) in components {
            let hosts = c.get("allowed_outbound_hosts").and_then(|h| h.as_array());
            assert!(
                hosts.is_none_or(|h| h.is_empty()),
                "{name} declares outbound hosts: grant them under `up` too"
            );
        }
    }
}
