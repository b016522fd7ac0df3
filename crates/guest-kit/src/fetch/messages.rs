//! What a failed fetch says to the API caller: what happened to which URL, and what to do.
//! Kept apart from the client so the wording is tested natively.
// Natively only the tests use what the WebAssembly client calls.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use super::urls::{host_port, shown};
use super::{FetchError, MAX_REDIRECTS};
use std::time::Duration;
use url::Url;
use wasi::http::types::ErrorCode;

/// One request of a fetch: its URL, and the URL that redirected to it (if one did), so a
/// refusal at a later hop says how the fetch got there.
pub(crate) struct Hop<'a> {
    pub url: &'a Url,
    pub from: Option<&'a Url>,
}

impl Hop<'_> {
    /// The URL, with how it was reached.
    fn described(&self) -> String {
        match self.from {
            Some(from) => format!("{} (redirected from {})", shown(self.url), shown(from)),
            None => shown(self.url),
        }
    }
}

/// The host refused the request (`HTTP-request-denied`).
pub(crate) fn not_allowed(hop: &Hop) -> FetchError {
    FetchError::NotAllowed(format!(
        "the deployment may not reach {} to fetch {}: its allowed_outbound_hosts does not \
         list it (add it in model.toml [network] or with --allow-outbound; in spin.toml under \
         Spin; under runtime-host an address on this machine or a private network is reached \
         only where listed exactly), or send the file itself (base64)",
        host_port(hop.url),
        hop.described()
    ))
}

/// The body's declared length is over the cap.
pub(crate) fn declared_too_large(hop: &Hop, declared: u64, max_bytes: u64) -> FetchError {
    FetchError::TooLarge(format!(
        "{} is {declared} bytes, over the limit of {max_bytes} bytes: send a smaller file",
        hop.described()
    ))
}

/// The body grew past the cap as it was read.
pub(crate) fn read_too_large(hop: &Hop, max_bytes: u64) -> FetchError {
    FetchError::TooLarge(format!(
        "{} sent more than the limit of {max_bytes} bytes: send a smaller file",
        hop.described()
    ))
}

/// The final answer was not a 200.
pub(crate) fn bad_status(hop: &Hop, status: u16) -> FetchError {
    FetchError::Failed(format!(
        "{} answered HTTP {status}, not 200 with the file: check that the URL serves it \
         publicly",
        hop.described()
    ))
}

/// A redirect past [`MAX_REDIRECTS`].
pub(crate) fn too_many_redirects(first: &Url, hop: &Hop) -> FetchError {
    FetchError::Failed(format!(
        "{} redirected more than {MAX_REDIRECTS} times (the last hop was {}): give the \
         file's final URL",
        shown(first),
        hop.described()
    ))
}

/// A redirect status with no `Location` to follow.
pub(crate) fn redirect_without_location(hop: &Hop, status: u16) -> FetchError {
    FetchError::Failed(format!(
        "{} answered HTTP {status}, a redirect, but said nowhere to go (no Location header)",
        hop.described()
    ))
}

/// What the fetch was doing when its time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waiting {
    /// For the answer's head (connecting included).
    Answer,
    /// For more of the body, this many bytes read so far.
    Body(usize),
}

/// The deadline passed.
pub(crate) fn timed_out(hop: &Hop, allowed: Duration, waiting: Waiting) -> FetchError {
    let doing = match waiting {
        Waiting::Answer => "no answer came".to_owned(),
        Waiting::Body(0) => "the answer came but none of its body".to_owned(),
        Waiting::Body(n) => format!("only {n} bytes of its body came"),
    };
    FetchError::Failed(format!(
        "gave up fetching {}: {doing} within the {:.1} s this request allows; try a faster \
         server or send the file itself (base64)",
        hop.described(),
        allowed.as_secs_f64()
    ))
}

/// A failure wasi-http reported as `code`, sending the request or reading its answer.
pub(crate) fn transport(hop: &Hop, code: &ErrorCode) -> FetchError {
    let at = host_port(hop.url);
    let url = hop.described();
    let host = hop.url.host_str().unwrap_or("");
    let why = match code {
        ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited => {
            return not_allowed(hop);
        }
        ErrorCode::HttpResponseBodySize(_) => {
            return FetchError::TooLarge(format!(
                "{url} sent a body larger than the host accepts: send a smaller file"
            ));
        }
        ErrorCode::DnsTimeout => format!("looking up {host} timed out"),
        ErrorCode::DnsError(e) => match &e.rcode {
            Some(rcode) => format!("{host} could not be looked up ({rcode}): check the host name"),
            None => format!("{host} could not be looked up: check the host name"),
        },
        ErrorCode::DestinationNotFound
        | ErrorCode::DestinationUnavailable
        | ErrorCode::DestinationIpUnroutable => format!("{at} cannot be reached from here"),
        ErrorCode::ConnectionRefused => {
            format!("{at} refused the connection: no server listens there")
        }
        ErrorCode::ConnectionTimeout => format!("connecting to {at} timed out"),
        ErrorCode::ConnectionReadTimeout | ErrorCode::HttpResponseTimeout => {
            format!("{at} stopped sending before the answer was complete (timed out)")
        }
        ErrorCode::ConnectionTerminated | ErrorCode::HttpResponseIncomplete => {
            format!("{at} closed the connection before the answer was complete")
        }
        ErrorCode::TlsProtocolError
        | ErrorCode::TlsCertificateError
        | ErrorCode::TlsAlertReceived(_) => format!(
            "the secure connection to {at} failed ({}): its certificate may not be valid for \
             {host}",
            short(code)
        ),
        ErrorCode::HttpRequestUriInvalid | ErrorCode::HttpRequestUriTooLong => {
            return FetchError::BadUrl(format!(
                "{url} could not be requested ({}): check the URL",
                short(code)
            ));
        }
        ErrorCode::InternalError(Some(detail)) => format!("the host failed: {detail}"),
        other => short(other),
    };
    FetchError::Failed(format!("could not fetch {url}: {why}"))
}

/// A body read that failed without a wasi-http error code (the stream's own text).
pub(crate) fn read_failed(hop: &Hop, detail: &str) -> FetchError {
    FetchError::Failed(format!(
        "could not fetch {}: reading the body failed ({detail})",
        hop.described()
    ))
}

/// wasi-http's name for `code`, without the type's prefix (`TlsCertificateError`).
fn short(code: &ErrorCode) -> String {
    let debug = format!("{code:?}");
    debug
        .strip_prefix("ErrorCode::")
        .unwrap_or(&debug)
        .to_owned()
}

/// The caller's time ran out before a request could even be sent (a hop after the
/// deadline): said the same way as any other timeout.
pub(crate) fn no_time_left(hop: &Hop, allowed: Duration) -> FetchError {
    timed_out(hop, allowed, Waiting::Answer)
}
