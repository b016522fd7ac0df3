//! One log line for every request the host answers, on every port, written where every
//! request passes ([`crate::listener`]): the component's answers, the host's own (a 404 of
//! the app, a 413, a 401, a request the guard refused), the metrics and admin routes.
//!
//! What only the inner layers know rides back on the answer ([`Served`], an extension of the
//! response): the route matched (the router's, or the interface's route template a component
//! server recognised) and the model that answered. The line is written once the answer's
//! body is sent (or given up), so it can say how many bytes went out; a body of known length
//! is logged at once. Whether a line is wanted is asked first (`support::request_log`): a
//! filtered-out request costs no more than it did.

use crate::responses::HostResponse;
use bytes::Bytes;
use host_support::request_log::{self, RequestRecord};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use hyper::header::HeaderValue;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tracing::Level;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

/// The route a request matched, as the log names it.
#[derive(Clone, Debug)]
pub enum RouteName {
    /// An interface's route template (`/predict`, `/heartbeat/{port}`).
    Template(&'static str),
    /// An app's route in Spin's syntax (`/models/molprop/...`), or a host route's.
    Pattern(Arc<str>),
}

impl RouteName {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Template(t) => t,
            Self::Pattern(p) => p,
        }
    }
}

/// What the layers that answered a request say about it, carried on the answer.
#[derive(Clone, Debug, Default)]
pub struct Served {
    pub route: Option<RouteName>,
    pub model: Option<Arc<str>>,
}

/// Names the route `resp` answered, unless an inner layer already did (its name is the
/// more precise: the template `/predict` rather than the app's `/models/molprop/...`).
pub fn note_route(resp: &mut HostResponse, route: RouteName) {
    let served = resp.extensions_mut().get_or_insert_default::<Served>();
    if served.route.is_none() {
        served.route = Some(route);
    }
}

/// Names the model deployment that answered `resp`.
pub fn note_model(resp: &mut HostResponse, model: &Arc<str>) {
    resp.extensions_mut()
        .get_or_insert_default::<Served>()
        .model = Some(model.clone());
}

/// What the log line needs from a request, taken as it arrives.
pub struct Arrival {
    id: HeaderValue,
    method: hyper::Method,
    path: String,
    bytes_in: Option<u64>,
    started: Instant,
    from_host: bool,
    port: u16,
    peer: SocketAddr,
}

impl Arrival {
    /// `req`, with id `id`, arrived on port `port` from `peer`.
    pub fn new<B>(req: &hyper::Request<B>, id: HeaderValue, port: u16, peer: SocketAddr) -> Self {
        let bytes_in = req
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse().ok());
        Self {
            id,
            method: req.method().clone(),
            path: req.uri().path().to_owned(),
            bytes_in,
            started: Instant::now(),
            from_host: is_host_traffic(req),
            port,
            peer,
        }
    }

    /// Logs the request answered by `resp` (when its line is wanted), once its body is
    /// sent. The host's own traffic (heartbeats, process checks) is DEBUG unless it failed
    /// ([`quiet`]).
    pub fn finish(self, mut resp: HostResponse) -> HostResponse {
        let status = resp.status().as_u16();
        let Some(level) = request_log::wanted(quiet(self.from_host, status)) else {
            return resp;
        };
        let line = Line {
            served: resp.extensions_mut().remove::<Served>().unwrap_or_default(),
            took: self.started.elapsed(),
            arrival: self,
            status,
            level,
        };
        match resp.body().size_hint().exact() {
            Some(length) => {
                line.write(length);
                resp
            }
            None => resp.map(|inner| {
                CountedBody {
                    inner,
                    sent: 0,
                    line: Some(line),
                }
                .boxed_unsync()
            }),
        }
    }
}

/// A request's line, waiting for the bytes sent.
struct Line {
    arrival: Arrival,
    served: Served,
    status: u16,
    took: Duration,
    level: Level,
}

impl Line {
    fn write(&self, bytes_out: u64) {
        let a = &self.arrival;
        let record = RequestRecord {
            id: a.id.to_str().unwrap_or("-"),
            method: a.method.as_str(),
            path: &a.path,
            route: self.served.route.as_ref().map(RouteName::as_str),
            model: self.served.model.as_deref(),
            status: self.status,
            took: self.took,
            bytes_in: a.bytes_in,
            bytes_out,
            port: a.port,
            peer: a.peer,
        };
        request_log::record(self.level, &record);
    }
}

/// An answer's body, counted as it is sent; its line is written when hyper is done with it
/// (sent whole, or the client left).
struct CountedBody {
    inner: HyperOutgoingBody,
    sent: u64,
    line: Option<Line>,
}

/// The error type of every body the host answers with (wasmtime-wasi-http's).
type WireError = <HyperOutgoingBody as Body>::Error;

impl Body for CountedBody {
    type Data = Bytes;
    type Error = WireError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, WireError>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.sent += data.len() as u64;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CountedBody {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            line.write(self.sent);
        }
    }
}

/// Whether a request's line is DEBUG: the host's own traffic that went well. A refusal
/// (401, 403) never is: anyone can send the host's `User-Agent`, and key guessing under it
/// must still show at INFO.
fn quiet(from_host: bool, status: u16) -> bool {
    from_host && status < 500 && !matches!(status, 401 | 403)
}

/// Whether a request comes from a `runtime-host` (its client's `User-Agent`).
fn is_host_traffic<B>(req: &hyper::Request<B>) -> bool {
    req.headers()
        .get(hyper::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(service_client::is_host_user_agent)
}

#[cfg(test)]
mod tests {
    use super::quiet;

    #[test]
    fn the_hosts_own_traffic_is_quiet_unless_failed_or_refused() {
        assert!(quiet(true, 200));
        assert!(quiet(true, 404));
        assert!(!quiet(false, 200), "a client's request is INFO");
        assert!(!quiet(true, 500), "a failure is INFO");
        for refused in [401, 403] {
            assert!(
                !quiet(true, refused),
                "a spoofed User-Agent hides no {refused}"
            );
        }
    }
}
