//! What every request passes before any service sees it, on every port (docs/DECISIONS.md
//! "Requests from browsers and hosts"):
//!
//! - headers only the host may set (Spin's routing headers, the registry's caller header:
//!   [`crate::headers::is_host_only`]) are removed, so no client can choose a route or
//!   pose as another process;
//! - the request target is a path (origin form): an absolute-form target
//!   (`GET http://evil.example/health`) is what a client sends a proxy, and this host is none;
//!   answering it would let the target's host and the `Host` header disagree about which
//!   site a request is for (400, naming the target's scheme and host);
//! - `Host`: HTTP/1.0 may omit it (the listener's address stands in), HTTP/1.1 may not (400);
//!   on a loopback listener it must name this machine, so a web page that rebinds its own
//!   DNS name to 127.0.0.1 cannot read or drive the services (DNS rebinding);
//! - a state-changing request from a browser page must come from the service's own origin:
//!   a page elsewhere can send a "simple" cross-site `POST` (e.g. `text/plain`) without any
//!   CORS preflight, and would otherwise register, unregister or shut down models.
//!   Clients that send no `Origin` (curl, SDKs, the host itself) are not affected.

use crate::headers;
use crate::responses::{self, HostResponse};
use edge_api::error::ErrorCode;
use host_support::hostname::hostname;
use hyper::header::{HOST, HeaderValue, ORIGIN};
use hyper::{Method, Request, Version};
use std::net::{IpAddr, SocketAddr};

/// Checks and cleans `req` in place; `Err` is the answer to send instead.
pub fn admit<B>(req: &mut Request<B>, local: SocketAddr) -> Result<(), Box<HostResponse>> {
    strip_host_only_headers(req);
    if let Some(refused) = absolute_form(req) {
        return Err(Box::new(refused));
    }
    let bad_host = |why: String| Err(Box::new(responses::error(ErrorCode::InvalidField, why)));
    if req.headers().get_all(HOST).iter().count() > 1 {
        return bad_host("a request carries one Host header (RFC 9112, section 3.2)".into());
    }
    if let Some(value) = req.headers().get(HOST)
        && !value.to_str().is_ok_and(is_host_and_port)
    {
        let shown = String::from_utf8_lossy(value.as_bytes()).into_owned();
        return bad_host(format!(
            "Host {shown:?} is not a host name or address with an optional port \
             (RFC 9110, section 7.2)"
        ));
    }
    let host = match req.headers().get(HOST).and_then(|h| h.to_str().ok()) {
        Some(h) => h.to_owned(),
        None if req.version() <= Version::HTTP_10 => {
            let stand_in = local.to_string();
            let value = HeaderValue::from_str(&stand_in).expect("an address is a valid header");
            req.headers_mut().insert(HOST, value);
            stand_in
        }
        None => {
            return Err(Box::new(responses::error(
                ErrorCode::MissingField,
                "HTTP/1.1 requests must carry a Host header (RFC 9112, section 3.2)",
            )));
        }
    };
    if local.ip().is_loopback() && !is_this_machine(host_name(&host)) {
        return Err(Box::new(responses::error(
            ErrorCode::Forbidden,
            format!(
                "Host `{host}` is not a name of this machine; use localhost or 127.0.0.1 \
                 (or start the host with --allowed-host {})",
                host_name(&host)
            ),
        )));
    }
    if changes_state(req.method())
        && let Some(origin) = req.headers().get(ORIGIN)
    {
        let origin = origin.to_str().unwrap_or("");
        if !same_origin(origin, &host) {
            return Err(Box::new(responses::error(
                ErrorCode::Forbidden,
                format!(
                    "cross-origin request refused: a page from `{origin}` may not change \
                     anything here (requests without an Origin header are not affected)"
                ),
            )));
        }
    }
    Ok(())
}

/// The 400 for a request target in absolute form (or authority form: a `CONNECT`), `None`
/// for a path.
fn absolute_form<B>(req: &Request<B>) -> Option<HostResponse> {
    let uri = req.uri();
    if uri.scheme().is_none() && uri.authority().is_none() {
        return None;
    }
    let scheme = uri
        .scheme_str()
        .map(|s| format!("{s}://"))
        .unwrap_or_default();
    let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
    Some(responses::error(
        ErrorCode::InvalidField,
        format!(
            "the request target names a host (`{scheme}{authority}`): this server is no \
             proxy and takes a path only, e.g. `GET /health` with the host in the Host header \
             (RFC 9112, section 3.2)"
        ),
    ))
}

fn strip_host_only_headers<B>(req: &mut Request<B>) {
    let headers = req.headers_mut();
    let forged: Vec<_> = headers
        .keys()
        .filter(|k| headers::is_host_only(k.as_str()))
        .cloned()
        .collect();
    for name in forged {
        headers.remove(name);
    }
}

fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Whether `value` is `uri-host [":" port]` (RFC 9110, section 7.2): an IP literal in
/// brackets or a name of the characters a host may have, then at most a numeric port. No
/// user information (`a@b`) and no second colon, which a lax parser would read as a name of
/// this machine followed by somebody else's.
fn is_host_and_port(value: &str) -> bool {
    let (name_ok, port) = match value.strip_prefix('[') {
        Some(rest) => {
            let Some((literal, after)) = rest.split_once(']') else {
                return false;
            };
            let port = match after {
                "" => None,
                more => match more.strip_prefix(':') {
                    Some(port) => Some(port),
                    None => return false,
                },
            };
            (literal.parse::<std::net::Ipv6Addr>().is_ok(), port)
        }
        None => {
            let (name, port) = match value.split_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (value, None),
            };
            let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._~%".contains(&b);
            (!name.is_empty() && name.bytes().all(allowed), port)
        }
    };
    let port_ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok();
    name_ok && port.is_none_or(port_ok)
}

/// The name part of a `Host` value: `[::1]:80` → `::1`, `localhost:80` → `localhost`.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

fn is_this_machine(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    if let Ok(ip) = name.parse::<IpAddr>() {
        // Any address of this machine: a loopback listener answers on loopback only, but a
        // client may name the machine by one of its addresses through a port forward.
        return ip.to_canonical().is_loopback() || ip.is_unspecified();
    }
    if hostname().is_ok_and(|h| h.eq_ignore_ascii_case(&name)) {
        return true;
    }
    // The extra names of `--allowed-host` (the process's settings).
    crate::settings::current()
        .allowed_hosts
        .iter()
        .any(|n| n.eq_ignore_ascii_case(&name))
}

/// Whether `origin` (`scheme://host[:port]`) is the origin of a request sent to `host`.
fn same_origin(origin: &str, host: &str) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false; // `null` (sandboxed pages, file://) and garbage
    };
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => "80",
        "https" => "443",
        _ => return false,
    };
    let with_port = |a: &str| -> String {
        let a = a.to_ascii_lowercase();
        let has_port = match a.rfind(']') {
            Some(end) => a[end..].contains(':'),
            None => a.contains(':'),
        };
        if has_port {
            a
        } else {
            format!("{a}:{default_port}")
        }
    };
    with_port(authority.trim_end_matches('/')) == with_port(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().method(method).uri("/register");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap()
    }

    const LOOPBACK: &str = "127.0.0.1:5000";

    #[test]
    fn cross_origin_writes_are_refused_and_same_origin_ones_pass() {
        let local = LOOPBACK.parse().unwrap();
        let mut evil = request(
            Method::POST,
            &[
                ("host", "127.0.0.1:5000"),
                ("origin", "http://evil.example"),
            ],
        );
        assert!(admit(&mut evil, local).is_err());
        let mut null = request(
            Method::POST,
            &[("host", "127.0.0.1:5000"), ("origin", "null")],
        );
        assert!(admit(&mut null, local).is_err());
        let mut own = request(
            Method::POST,
            &[
                ("host", "localhost:5000"),
                ("origin", "http://localhost:5000"),
            ],
        );
        assert!(admit(&mut own, local).is_ok());
        let mut read = request(
            Method::GET,
            &[
                ("host", "127.0.0.1:5000"),
                ("origin", "http://evil.example"),
            ],
        );
        assert!(
            admit(&mut read, local).is_ok(),
            "reads stay readable (CORS guards them)"
        );
        let mut tool = request(Method::POST, &[("host", "127.0.0.1:5000")]);
        assert!(admit(&mut tool, local).is_ok());
    }

    #[test]
    fn rebound_names_are_refused_on_loopback_only() {
        let mut rebound = request(Method::GET, &[("host", "attacker.example:5000")]);
        assert!(admit(&mut rebound, LOOPBACK.parse().unwrap()).is_err());
        let mut remote = request(Method::GET, &[("host", "models.lab.example:5000")]);
        assert!(admit(&mut remote, "10.1.2.3:5000".parse().unwrap()).is_ok());
        for ok in [
            "localhost",
            "LOCALHOST:1",
            "[::1]:5000",
            "127.0.0.2",
            "app.localhost",
        ] {
            let mut r = request(Method::GET, &[("host", ok)]);
            assert!(admit(&mut r, LOOPBACK.parse().unwrap()).is_ok(), "{ok}");
        }
    }

    #[test]
    fn a_host_header_is_one_host_and_port() {
        let local = LOOPBACK.parse().unwrap();
        for bad in [
            "127.0.0.1:41001@evil.com",
            "evil.com@127.0.0.1",
            "127.0.0.1:5000:1",
            "127.0.0.1:",
            "127.0.0.1:99999",
            "[::1",
            "[::1]x",
            "a b",
            "",
        ] {
            let mut r = request(Method::GET, &[("host", bad)]);
            assert!(admit(&mut r, local).is_err(), "{bad}");
        }
        let mut twice = request(
            Method::GET,
            &[("host", "127.0.0.1:5000"), ("host", "evil.example")],
        );
        assert!(admit(&mut twice, local).is_err());
    }

    #[test]
    fn missing_host_and_forged_headers() {
        let local = LOOPBACK.parse().unwrap();
        let mut old = request(Method::GET, &[("spin-path-info", "/metrics")]);
        *old.version_mut() = Version::HTTP_10;
        assert!(admit(&mut old, local).is_ok());
        assert_eq!(old.headers()[HOST], LOOPBACK);
        assert!(old.headers().get("spin-path-info").is_none());
        let mut new = request(Method::GET, &[("runtime-host-caller", "x; pids=1")]);
        assert!(admit(&mut new, local).is_err(), "HTTP/1.1 needs Host");
        assert!(new.headers().get("runtime-host-caller").is_none());
    }

    /// Issue 56, item 11: `GET http://evil.example/health` is refused, whatever `Host` says.
    #[test]
    fn absolute_form_targets_are_refused() {
        let local = LOOPBACK.parse().unwrap();
        for target in [
            "http://evil.example/health",
            "http://127.0.0.1:5000/health",
            "https://localhost/registry",
        ] {
            let mut r = Request::builder()
                .uri(target)
                .header("host", "127.0.0.1:5000")
                .body(())
                .unwrap();
            let refused = admit(&mut r, local).expect_err(target);
            assert_eq!(refused.status(), 400, "{target}");
        }
        let mut connect = Request::builder()
            .method(Method::CONNECT)
            .uri("evil.example:443")
            .header("host", "127.0.0.1:5000")
            .body(())
            .unwrap();
        assert!(admit(&mut connect, local).is_err());
        let mut path = request(Method::GET, &[("host", "127.0.0.1:5000")]);
        assert!(admit(&mut path, local).is_ok());
    }

    #[test]
    fn origins() {
        assert!(same_origin("http://localhost:8080", "localhost:8080"));
        assert!(same_origin("http://LocalHost", "localhost:80"));
        assert!(same_origin("http://[::1]:5000", "[::1]:5000"));
        assert!(!same_origin("https://localhost:8080", "localhost:80"));
        assert!(!same_origin("http://localhost:8081", "localhost:8080"));
        assert!(!same_origin("null", "localhost"));
    }
}
