//! One port for a whole app, routed by path the way Spin routes `spin.toml`'s triggers: an
//! exact route beats a wildcard, and of two wildcards the longer prefix wins. Like Spin, the
//! router tells the component which part of the path is its own in `spin-path-info` (and
//! the route it matched in the other `spin-*` headers); headers of that family sent by a
//! client were dropped on arrival (the guard).
//!
//! Components' routes can come and go while the app serves (a model deployed or removed).
//! The host may answer some paths itself ([`HostRoute`]: its metrics, an admin API); those
//! are consulted before any component's. Others it answers only where no component's route
//! is more specific ([`AppRouter::answer_unclaimed`]: the Open Inference Protocol's `/v2`,
//! whose `/v2/models/<name>/...` belong to the models). Which routes an app has is its
//! owner's business: the router knows no service.

use crate::access_log::{self, RouteName};
use crate::headers;
use crate::listener::Handler;
use crate::responses::{self, HostResponse};
use crate::slot::ServerSlot;
use edge_api::error::ErrorCode;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

/// A path the host answers itself, in place of any component.
pub trait HostRoute: Send + Sync + 'static {
    fn answer(
        &self,
        req: hyper::Request<Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>>;

    /// Whether the host answers `method` here; the other methods go on to the app's own
    /// routes, as if the host did not take the path.
    fn takes(&self, _method: &hyper::Method) -> bool {
        true
    }
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
    spin_route: Arc<str>,
    pattern: Pattern,
    target: Arc<ServerSlot>,
}

/// A path the host answers, with its route as the log names it.
type HostEntry = (Pattern, Arc<dyn HostRoute>, Arc<str>);

/// Every component of one app, by path, and the paths the host answers itself.
#[derive(Default)]
pub struct AppRouter {
    routes: RwLock<Vec<Arc<Route>>>,
    host_routes: RwLock<Vec<HostEntry>>,
    /// Host routes that rank with the components' by Spin's precedence.
    unclaimed: RwLock<Vec<HostEntry>>,
}

impl AppRouter {
    /// Adds `target` at `spin_route` (Spin's syntax: `/registry`, `/api/...`).
    pub fn route(self, spin_route: &str, target: &Arc<ServerSlot>) -> Self {
        self.add(spin_route, target);
        self
    }

    /// Routes `spin_route` to `target` from now on, in place of what it routed to before.
    pub fn add(&self, spin_route: &str, target: &Arc<ServerSlot>) {
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        routes.retain(|r| &*r.spin_route != spin_route);
        routes.push(Arc::new(Route {
            spin_route: Arc::from(spin_route),
            pattern: Pattern::parse(spin_route),
            target: target.clone(),
        }));
        // Most specific first, so the first match is the one Spin would pick.
        routes.sort_by_key(|r| std::cmp::Reverse(r.pattern.precedence()));
    }

    /// Stops routing `spin_route` (requests already routed finish).
    pub fn remove(&self, spin_route: &str) {
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        routes.retain(|r| &*r.spin_route != spin_route);
    }

    /// The names components are routed at right under `parent` (`/models/` gives `molprop`
    /// for `/models/molprop/...`), sorted: what the app serves there now, routes added and
    /// removed while it serves included.
    pub fn names_under(&self, parent: &str) -> Vec<String> {
        let routes = self.routes.read().unwrap_or_else(|p| p.into_inner());
        let mut names: Vec<String> = routes
            .iter()
            .filter_map(|r| r.spin_route.strip_prefix(parent))
            .filter_map(|rest| rest.split('/').next())
            .filter(|name| !name.is_empty() && *name != "...")
            .map(str::to_owned)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Answers `spin_route`'s paths in the host from now on, before any component's route.
    pub fn answer_in_host(&self, spin_route: &str, route: Arc<dyn HostRoute>) {
        let mut host = self.host_routes.write().unwrap_or_else(|p| p.into_inner());
        host.push((Pattern::parse(spin_route), route, Arc::from(spin_route)));
    }

    /// Answers `spin_route`'s paths in the host where no component's route is more specific
    /// (an exact route, or a longer prefix): a model's `/v2/models/<name>/...` still reaches
    /// the model, while `/v2/models/<unknown>` gets the host's answer, not the console's.
    pub fn answer_unclaimed(&self, spin_route: &str, route: Arc<dyn HostRoute>) {
        let mut unclaimed = self.unclaimed.write().unwrap_or_else(|p| p.into_inner());
        unclaimed.push((Pattern::parse(spin_route), route, Arc::from(spin_route)));
    }

    /// The host route of [`Self::answer_unclaimed`] that ranks above `component` for `path`.
    fn unclaimed_route(
        &self,
        path: &str,
        component: Option<&Pattern>,
    ) -> Option<(Arc<dyn HostRoute>, Arc<str>)> {
        let unclaimed = self.unclaimed.read().unwrap_or_else(|p| p.into_inner());
        unclaimed
            .iter()
            .filter(|(pattern, ..)| pattern.path_info(path).is_some())
            .filter(|(pattern, ..)| component.is_none_or(|c| pattern.precedence() > c.precedence()))
            .max_by_key(|(pattern, ..)| pattern.precedence())
            .map(|(_, route, name)| (route.clone(), name.clone()))
    }

    fn host_route(
        &self,
        path: &str,
        method: &hyper::Method,
    ) -> Option<(Arc<dyn HostRoute>, Arc<str>)> {
        let host = self.host_routes.read().unwrap_or_else(|p| p.into_inner());
        host.iter()
            .find(|(pattern, route, _)| pattern.path_info(path).is_some() && route.takes(method))
            .map(|(_, route, name)| (route.clone(), name.clone()))
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
        if let Some((route, name)) = self.host_route(&path, req.method()) {
            return answered_at(route.answer(req).await, name);
        }
        let found = self.find(&path);
        if let Some((host, name)) =
            self.unclaimed_route(&path, found.as_ref().map(|(r, _)| &r.pattern))
        {
            return answered_at(host.answer(req).await, name);
        }
        let Some((route, info)) = found else {
            return responses::error(
                ErrorCode::NotFound,
                format!("no route for {path} on this app (see spin.toml for the routes)"),
            );
        };
        // Clients' own `spin-*` headers were removed on arrival (the guard).
        let headers = req.headers_mut();
        let mut set = |name: &'static str, value: &str| {
            if let Ok(v) = HeaderValue::from_str(value) {
                headers.insert(HeaderName::from_static(name), v);
            }
        };
        set(headers::PATH_INFO, &info);
        set(headers::MATCHED_ROUTE, &route.spin_route);
        set(
            headers::COMPONENT_ROUTE,
            route.spin_route.trim_end_matches("/..."),
        );
        set(headers::BASE_PATH, "/");
        set(headers::CLIENT_ADDR, &peer.to_string());
        let resp = route.target.clone().handle(req, peer).await;
        answered_at(resp, route.spin_route.clone())
    }
}

/// `resp`, noted as the answer of the app's route `route` (for the log).
fn answered_at(mut resp: HostResponse, route: Arc<str>) -> HostResponse {
    access_log::note_route(&mut resp, RouteName::Pattern(route));
    resp
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

    struct Nothing;
    impl HostRoute for Nothing {
        fn answer(
            &self,
            _: hyper::Request<Incoming>,
        ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
            Box::pin(async { responses::json(200, "{}") })
        }
    }

    #[test]
    fn host_routes_take_their_paths_whole_segments_only() {
        let app = AppRouter::default();
        app.answer_in_host("/metrics", Arc::new(Nothing));
        app.answer_in_host("/admin/...", Arc::new(Nothing));
        let get = hyper::Method::GET;
        for taken in ["/metrics", "/admin", "/admin/deployments"] {
            assert!(app.host_route(taken, &get).is_some(), "{taken}");
        }
        for left in ["/metrics/x", "/administrator", "/models/a/metrics"] {
            assert!(app.host_route(left, &get).is_none(), "{left}");
        }
    }

    #[test]
    fn a_host_route_leaves_the_methods_it_does_not_take_to_the_app() {
        struct GetOnly;
        impl HostRoute for GetOnly {
            fn answer(
                &self,
                req: hyper::Request<Incoming>,
            ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
                Nothing.answer(req)
            }
            fn takes(&self, method: &hyper::Method) -> bool {
                method == hyper::Method::GET
            }
        }
        let app = AppRouter::default();
        app.answer_in_host("/health", Arc::new(GetOnly));
        assert!(app.host_route("/health", &hyper::Method::GET).is_some());
        assert!(app.host_route("/health", &hyper::Method::POST).is_none());
    }

    #[test]
    fn an_unclaimed_host_route_yields_to_more_specific_components() {
        let app = AppRouter::default();
        app.answer_unclaimed("/v2/...", Arc::new(Nothing));
        let console = Pattern::parse("/...");
        let model = Pattern::parse("/v2/models/iris/...");
        // Above the console's catch-all, for /v2 itself and any path under it.
        for path in ["/v2", "/v2/health/ready", "/v2/models/unknown/infer"] {
            assert!(
                app.unclaimed_route(path, Some(&console)).is_some(),
                "{path}"
            );
            assert!(app.unclaimed_route(path, None).is_some(), "{path}");
        }
        // Below a model's own, longer prefix; and not at all outside /v2.
        assert!(
            app.unclaimed_route("/v2/models/iris/infer", Some(&model))
                .is_none()
        );
        assert!(app.unclaimed_route("/v2x", Some(&console)).is_none());
        assert!(
            app.unclaimed_route("/models/iris", Some(&console))
                .is_none()
        );
    }
}
