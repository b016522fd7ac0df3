//! The app port of `up`: every service on one origin, routed by path the way `spin.toml`
//! routes them under `spin up` (the registry's routes, chat under `/api/...`, each model
//! under `/models/<name>/...`, the console at `/...`). The console and any other browser
//! page then talk to one origin under either host, with no CORS.
//!
//! Matching follows Spin: an exact route beats a wildcard, and of two wildcards the longer
//! prefix wins. Like Spin, the router tells the component what part of the path is its own
//! in `spin-path-info` (the model SDK routes on it, so `/models/molprop/health` reaches the
//! model's `/health`); headers of that family sent by the client are dropped on arrival.

use crate::listener::Handler;
use crate::responses::{self, HostResponse};
use crate::slot::ServerSlot;
use edge_api::error::ErrorCode;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use std::net::SocketAddr;
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

/// The header that tells a component which part of the path is its own, as Spin names it.
pub const PATH_INFO: &str = "spin-path-info";

/// A model's route: `/models/<name>/...`.
pub fn model_route(name: &str) -> String {
    format!("/models/{name}/...")
}

/// A Spin route: an exact path, or a prefix followed by `/...` (the prefix itself included).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Exact(String),
    Prefix(String),
}

impl Pattern {
    fn parse(route: &str) -> Self {
        match route.strip_suffix("/...") {
            Some(prefix) => Self::Prefix(prefix.to_owned()),
            None => Self::Exact(route.to_owned()),
        }
    }

    /// The path info when `path` matches: what follows the prefix (empty for exact routes).
    fn path_info<'p>(&self, path: &'p str) -> Option<&'p str> {
        match self {
            Self::Exact(p) => (path == p).then_some(""),
            Self::Prefix(p) => {
                let rest = path.strip_prefix(p.as_str())?;
                (rest.is_empty() || rest.starts_with('/')).then_some(rest)
            }
        }
    }

    /// Higher wins: exact routes, then longer prefixes.
    fn precedence(&self) -> (bool, usize) {
        match self {
            Self::Exact(p) => (true, p.len()),
            Self::Prefix(p) => (false, p.len()),
        }
    }
}

struct Route {
    spin_route: String,
    pattern: Pattern,
    target: Arc<ServerSlot>,
}

/// Every service of one app, by path. Models come and go while it serves
/// ([`AppRouter::add_model`], [`AppRouter::remove_model`]).
#[derive(Default)]
pub struct AppRouter {
    routes: std::sync::RwLock<Vec<Arc<Route>>>,
    /// `up`'s admin API under `/admin/`, once the stack has started.
    admin: std::sync::OnceLock<Arc<crate::up::admin::Admin>>,
}

impl AppRouter {
    /// Adds `target` at `spin_route` (Spin's syntax: `/registry`, `/api/...`).
    pub fn route(self, spin_route: &str, target: &Arc<ServerSlot>) -> Self {
        self.insert(spin_route, target);
        self
    }

    fn insert(&self, spin_route: &str, target: &Arc<ServerSlot>) {
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        routes.retain(|r| r.spin_route != spin_route);
        routes.push(Arc::new(Route {
            spin_route: spin_route.to_owned(),
            pattern: Pattern::parse(spin_route),
            target: target.clone(),
        }));
        // Most specific first, so the first match is the one Spin would pick.
        routes.sort_by_key(|r| std::cmp::Reverse(r.pattern.precedence()));
    }

    /// The routes of `up`'s stack, as `spin.toml` lays them out.
    pub fn for_stack(
        registry: &Arc<ServerSlot>,
        chat: &Arc<ServerSlot>,
        console: &Arc<ServerSlot>,
        models: &[(String, Arc<ServerSlot>)],
    ) -> Self {
        let mut app = REGISTRY_ROUTES
            .iter()
            .fold(Self::default(), |app, r| app.route(r, registry));
        app = CHAT_ROUTES.iter().fold(app, |app, r| app.route(r, chat));
        for (name, slot) in models {
            app.add_model(name, slot);
        }
        app.route(CONSOLE_ROUTE, console)
    }

    /// Serves the admin API under [`crate::up::admin::PREFIX`] from now on.
    pub fn set_admin(&self, admin: Arc<crate::up::admin::Admin>) {
        let _ = self.admin.set(admin);
    }

    /// Serves model `name` at `/models/<name>/...` from now on.
    pub fn add_model(&self, name: &str, slot: &Arc<ServerSlot>) {
        self.insert(&model_route(name), slot);
    }

    /// Stops routing `/models/<name>/...` (requests already routed finish).
    pub fn remove_model(&self, name: &str) {
        let route = model_route(name);
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        routes.retain(|r| r.spin_route != route);
    }

    fn find(&self, path: &str) -> Option<(Arc<Route>, String)> {
        let routes = self.routes.read().unwrap_or_else(|p| p.into_inner());
        routes.iter().find_map(|r| {
            r.pattern
                .path_info(path)
                .map(|info| (r.clone(), info.to_owned()))
        })
    }
}

impl Handler for AppRouter {
    async fn handle(
        self: Arc<Self>,
        mut req: hyper::Request<Incoming>,
        peer: SocketAddr,
    ) -> HostResponse {
        let path = req.uri().path().to_owned();
        // The host's Prometheus metrics: every deployment of this process, on one path no
        // interface uses (models are under /models/<name>/, with their JSON /metrics).
        if path == crate::metrics::exposition::PATH {
            return crate::metrics::exposition::answer(req.method()).await;
        }
        if let Some(admin) = self.admin.get()
            && (path.starts_with(crate::up::admin::PREFIX) || path == "/admin")
        {
            return admin.answer(req).await;
        }
        let Some((route, info)) = self.find(&path) else {
            return responses::error(
                ErrorCode::NotFound,
                format!("no route for {path} on this app (see spin.toml for the routes)"),
            );
        };
        // Clients' own `spin-*` headers were removed on arrival (crate::guard).
        let headers = req.headers_mut();
        let mut set = |name: &'static str, value: &str| {
            if let Ok(v) = HeaderValue::from_str(value) {
                headers.insert(HeaderName::from_static(name), v);
            }
        };
        set(PATH_INFO, &info);
        set("spin-matched-route", &route.spin_route);
        set(
            "spin-component-route",
            route.spin_route.trim_end_matches("/..."),
        );
        set("spin-base-path", "/");
        set("spin-client-addr", &peer.to_string());
        route.target.clone().handle(req, peer).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_routes_and_longer_prefixes_win() {
        let mut patterns: Vec<Pattern> = [
            "/...",
            "/api/...",
            "/registry",
            "/registry/...",
            "/models/molprop/...",
        ]
        .iter()
        .map(|r| Pattern::parse(r))
        .collect();
        patterns.sort_by_key(|p| std::cmp::Reverse(p.precedence()));
        let pick = |path: &str| {
            patterns
                .iter()
                .find_map(|p| p.path_info(path).map(|i| (p.clone(), i.to_owned())))
                .unwrap()
        };
        assert_eq!(
            pick("/registry"),
            (Pattern::Exact("/registry".into()), String::new())
        );
        assert_eq!(pick("/registry/x").0, Pattern::Prefix("/registry".into()));
        assert_eq!(
            pick("/api/chats"),
            (Pattern::Prefix("/api".into()), "/chats".into())
        );
        assert_eq!(
            pick("/models/molprop/health"),
            (Pattern::Prefix("/models/molprop".into()), "/health".into())
        );
        // A prefix matches whole segments only.
        assert_eq!(pick("/apix").0, Pattern::Prefix(String::new()));
        assert_eq!(
            pick("/models/molprop2/health").0,
            Pattern::Prefix(String::new())
        );
        assert_eq!(pick("/").1, "/");
    }

    /// The router and `spin.toml` route the same paths to the same services.
    #[test]
    fn the_routes_are_those_of_spin_toml() {
        let manifest = include_str!("../../spin.toml");
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
