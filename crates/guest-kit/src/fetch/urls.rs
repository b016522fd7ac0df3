//! Which URLs are fetched, and where a redirect leads: pure rules, checked before any request
//! so a bad URL costs the host nothing.
// Natively only the tests use what the WebAssembly client calls.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use super::{FetchError, MAX_URL_BYTES};
use url::{Position, Url};

/// The longest stretch of a caller's text quoted back in a message.
const QUOTED: usize = 120;

/// `text` as a URL this module fetches: absolute, `http` or `https`, with a host, no
/// credentials, at most [`MAX_URL_BYTES`] long.
pub(crate) fn parse(text: &str) -> Result<Url, FetchError> {
    if text.len() > MAX_URL_BYTES {
        return Err(FetchError::BadUrl(format!(
            "the URL is {} bytes long, over the limit of {MAX_URL_BYTES}: send the file \
             itself (base64) or a shorter URL",
            text.len()
        )));
    }
    let url = Url::parse(text).map_err(|e| {
        FetchError::BadUrl(format!(
            "`{}` is not an absolute URL ({e}): give a full http:// or https:// address",
            quote(text)
        ))
    })?;
    check(&url).map_err(FetchError::BadUrl)?;
    Ok(url)
}

/// Why `url` is not fetched, if it is not: what [`parse`] refuses beyond syntax.
fn check(url: &Url) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "`{}` is a {}: URL; only http:// and https:// URLs are fetched",
            shown(url),
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        // The credentials are not quoted back: the message may end up in a log.
        return Err(format!(
            "`{}` carries a user name or password (user:password@); credentials are never \
             sent from a URL: use a URL that needs none",
            shown(url)
        ));
    }
    match url.host_str() {
        Some(host) if !host.is_empty() => Ok(()),
        _ => Err(format!(
            "`{}` names no host: give a full http:// or https:// address",
            quote(url.as_str())
        )),
    }
}

/// Where a redirect from `current` with `Location: location` leads (a relative location is
/// resolved against `current`), if that is a URL this module fetches.
pub(crate) fn redirect_target(current: &Url, location: &str) -> Result<Url, FetchError> {
    let from = shown(current);
    let next = current.join(location).map_err(|e| {
        FetchError::Failed(format!(
            "{from} redirected to `{}`, which is not a valid URL ({e})",
            quote(location)
        ))
    })?;
    if next.as_str().len() > MAX_URL_BYTES {
        return Err(FetchError::Failed(format!(
            "{from} redirected to a URL over {MAX_URL_BYTES} bytes long"
        )));
    }
    check(&next)
        .map_err(|why| FetchError::Failed(format!("{from} redirected elsewhere: {why}")))?;
    Ok(next)
}

/// Whether `status` is a redirect this module follows. All are followed with a GET (the
/// only method sent), so 303 and 307/308 need no difference.
pub(crate) fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The request's authority: host and port as written (no credentials, which [`check`]
/// refuses anyway), the port left out where it is the scheme's default.
pub(crate) fn authority(url: &Url) -> &str {
    &url[Position::BeforeHost..Position::AfterPort]
}

/// The request's path and query (never the fragment, which is the client's own).
pub(crate) fn path_with_query(url: &Url) -> &str {
    match &url[Position::BeforePath..Position::AfterQuery] {
        "" => "/",
        p => p,
    }
}

/// `host:port`, the port spelled out, as `allowed_outbound_hosts` entries name it.
pub(crate) fn host_port(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// `url` as quoted in a message: without credentials or fragment, shortened when long.
pub(crate) fn shown(url: &Url) -> String {
    let mut bare = url.clone();
    let _ = bare.set_username("");
    let _ = bare.set_password(None);
    bare.set_fragment(None);
    quote(bare.as_str())
}

/// `text` cut to [`QUOTED`] characters (an ellipsis marks the cut).
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}
