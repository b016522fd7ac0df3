//! `--api-key` / `--api-key-file`: a secret every request to a model deployment must carry
//! (`Authorization: Bearer <key>` or `x-api-key: <key>`), on the model's own port and under
//! `up`'s app port (`/models/<name>/...`, `/v2/models/<name>/...`) alike. The probes stay
//! open ([`is_probe`]: the v1.2 `/health` and the Open Inference Protocol's readiness and
//! liveness), so a load balancer needs no secret; the host's own routes (`/health`,
//! `/metrics`, the admin API, chat, the registry) keep their own rules.
//!
//! The key is read and refused by the rules of the other secrets (`support::token`: not
//! empty, not a placeholder, a key file private to its owner) and compared in constant time
//! there; it is never logged, echoed or counted (a 401 says only how to send it).

use anyhow::Result;
use bytes::Bytes;
use host_core::http::headers;
use host_core::http::hooks::{Hook, HookWork};
use host_core::http::responses::{self, HostResponse};
use host_core::support::token::{API_KEY_HEADER, Admission, Token};
use http_body_util::Full;
use hyper::body::Incoming;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The flags, for every command that deploys models (`model`, `up`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ApiKeyArgs {
    /// Require this key on every model route (`Authorization: Bearer KEY` or `x-api-key:
    /// KEY`) except the health probes. Prefer --api-key-file: a command line is visible to
    /// every user of the machine (`ps`).
    #[arg(long, value_name = "KEY", conflicts_with = "api_key_file", value_parser = Hidden::parse)]
    pub api_key: Option<Hidden>,
    /// --api-key, read from FILE (readable by its owner only; made so if it is not). An
    /// empty file or a `change-me` placeholder is refused.
    #[arg(long, value_name = "FILE")]
    pub api_key_file: Option<PathBuf>,
}

/// A secret from the command line: its `Debug` (clap's, a panic's) never shows it.
#[derive(Clone)]
pub struct Hidden(String);

impl Hidden {
    fn parse(value: &str) -> Result<Self, std::convert::Infallible> {
        Ok(Self(value.to_owned()))
    }
}

impl std::fmt::Debug for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<hidden>")
    }
}

impl ApiKeyArgs {
    /// The key the flags give, checked; `None` when the model routes are open.
    pub fn load(&self) -> Result<Option<ApiKey>> {
        let token = match (&self.api_key, &self.api_key_file) {
            (Some(Hidden(key)), _) => Token::from_flag(key, "--api-key")?,
            (None, Some(file)) => Token::from_file(file)?,
            (None, None) => return Ok(None),
        };
        Ok(Some(ApiKey(Arc::new(token))))
    }
}

/// The key a model deployment's requests must carry, as the hook that checks it.
#[derive(Clone)]
pub struct ApiKey(Arc<Token>);

impl ApiKey {
    /// Where the key came from (the flag or the file), never the key: for `up`'s table.
    pub fn note(&self) -> &str {
        &self.0.note
    }
}

impl Hook for ApiKey {
    fn answer_instead(
        &self,
        req: &hyper::Request<Incoming>,
        _peer: SocketAddr,
    ) -> Option<HostResponse> {
        let path = req.uri().path();
        let info = req
            .headers()
            .get(headers::PATH_INFO)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(path);
        let reads = matches!(*req.method(), hyper::Method::GET | hyper::Method::HEAD);
        if reads && (is_probe(info) || is_probe(path)) {
            return None;
        }
        match self.0.admits_key(req.headers()) {
            Admission::Admitted => None,
            Admission::Missing => Some(responses::unauthorized(
                "this model needs its API key: send `Authorization: Bearer <key>` or \
                 `x-api-key: <key>` (the key given to the host with --api-key-file)",
            )),
            Admission::Wrong => Some(responses::unauthorized(
                "wrong API key for this model; send the key given to the host with \
                 --api-key-file",
            )),
        }
    }
    /// The request was admitted (or is a probe): the key goes no further.
    fn before_guest<'a>(
        &'a self,
        req: &'a mut hyper::Request<Full<Bytes>>,
    ) -> Option<HookWork<'a>> {
        strip_key(req.headers_mut());
        None
    }
}

/// Takes the key out of a request about to reach the component: `Authorization` and
/// `x-api-key` are the host's business, and no component (a third party's model among them)
/// ever learns the key that guards every deployment of the host.
fn strip_key(headers: &mut hyper::HeaderMap) {
    headers.remove(hyper::header::AUTHORIZATION);
    headers.remove(API_KEY_HEADER);
}

/// Whether `path` (a model's own, or its path info under the app port) is a probe: the
/// v1.2 `/health`, the protocol's `/v2/health/live` and `/v2/health/ready`, and a model's
/// `/v2/models/<name>[/versions/<v>]/ready`.
pub fn is_probe(path: &str) -> bool {
    if matches!(path, "/health" | "/v2/health/live" | "/v2/health/ready") {
        return true;
    }
    let Some(rest) = path.strip_prefix("/v2/models/") else {
        return false;
    };
    let segments: Vec<&str> = rest.split('/').collect();
    match segments.as_slice() {
        [name, "ready"] | [name, "versions", _, "ready"] => !name.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_probes_are_open() {
        for open in [
            "/health",
            "/v2/health/live",
            "/v2/health/ready",
            "/v2/models/iris/ready",
            "/v2/models/iris/versions/3/ready",
        ] {
            assert!(is_probe(open), "{open}");
        }
        for closed in [
            "/predict",
            "/metrics",
            "/info",
            "/health/x",
            "/v2/models/iris",
            "/v2/models/iris/infer",
            "/v2/models//ready",
            "/v2/models/iris/x/ready",
        ] {
            assert!(!is_probe(closed), "{closed}");
        }
    }

    #[test]
    fn the_key_never_reaches_the_component() {
        let mut headers = hyper::HeaderMap::new();
        headers.insert("authorization", "Bearer k".parse().unwrap());
        headers.insert("x-api-key", "k".parse().unwrap());
        headers.insert("content-type", "application/json".parse().unwrap());
        strip_key(&mut headers);
        assert_eq!(headers.len(), 1, "{headers:?}");
        assert!(headers.contains_key("content-type"));
    }

    #[test]
    fn a_key_from_the_command_line_never_shows_in_debug() {
        let args = ApiKeyArgs {
            api_key: Some(Hidden("s3cret-key".into())),
            api_key_file: None,
        };
        assert!(!format!("{args:?}").contains("s3cret"));
    }
}
