//! The pure parts of fetching: which URLs are accepted, where redirects lead, and what the
//! caller is told. The requests themselves are tested end to end (tests/tests/host/outbound.rs).

use super::messages::{self, Hop, Waiting};
use super::urls::{authority, host_port, is_redirect, parse, path_with_query, redirect_target};
use super::{FetchError, MAX_URL_BYTES, get, get_all};
use edge_api::error::ErrorCode as ApiCode;
use std::time::{Duration, Instant};
use url::Url;
use wasi::http::types::{DnsErrorPayload, ErrorCode};

fn url(text: &str) -> Url {
    parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn bad_url(text: &str) -> String {
    match parse(text) {
        Err(FetchError::BadUrl(m)) => m,
        other => panic!("{text}: expected BadUrl, got {other:?}"),
    }
}

#[test]
fn absolute_http_and_https_urls_are_accepted() {
    for ok in [
        "http://example.org/a.png",
        "https://example.org:8443/x/y?z=1",
        "HTTPS://Example.ORG",
        "http://127.0.0.1:8080/",
        "http://[::1]:9000/a",
        "https://bücher.example/bild.jpg",
    ] {
        url(ok);
    }
}

#[test]
fn relative_other_scheme_credentials_and_overlong_urls_are_bad() {
    let m = bad_url("/images/cat.png");
    assert!(
        m.contains("not an absolute URL") && m.contains("http://"),
        "{m}"
    );
    let m = bad_url("cat.png");
    assert!(m.contains("`cat.png`"), "{m}");
    for other in [
        "ftp://example.org/a.png",
        "file:///etc/passwd",
        "data:image/png;base64,AAAA",
    ] {
        let m = bad_url(other);
        assert!(m.contains("only http:// and https://"), "{other}: {m}");
    }
    let m = bad_url("https://alice:s3cret@example.org/a.png");
    assert!(m.contains("user name or password"), "{m}");
    assert!(
        !m.contains("s3cret") && !m.contains("alice"),
        "credentials quoted: {m}"
    );
    bad_url("https://alice@example.org/a.png");
    let long = format!("https://example.org/{}", "a".repeat(MAX_URL_BYTES));
    let m = bad_url(&long);
    assert!(m.contains("2048") && m.contains("bytes long"), "{m}");
    // Exactly at the limit is still a URL.
    let limit = format!("https://example.org/{}", "a".repeat(MAX_URL_BYTES - 20));
    assert_eq!(limit.len(), MAX_URL_BYTES);
    url(&limit);
    // A long bad URL is quoted shortened, not whole.
    let m = bad_url(&format!("nonsense {}", "x".repeat(1000)));
    assert!(m.len() < 400 && m.contains('…'), "{m}");
}

#[test]
fn a_request_is_sent_with_host_port_and_path_but_no_fragment() {
    let u = url("https://example.org:8443/a/b.png?size=2#part");
    assert_eq!(authority(&u), "example.org:8443");
    assert_eq!(path_with_query(&u), "/a/b.png?size=2");
    assert_eq!(host_port(&u), "example.org:8443");
    let u = url("http://example.org");
    assert_eq!(authority(&u), "example.org");
    assert_eq!(path_with_query(&u), "/");
    assert_eq!(host_port(&u), "example.org:80");
    let u = url("https://[::1]/x");
    assert_eq!(authority(&u), "[::1]");
    assert_eq!(host_port(&u), "[::1]:443");
    // International names go out in their ASCII form.
    assert_eq!(
        authority(&url("https://bücher.example/")),
        "xn--bcher-kva.example"
    );
}

#[test]
fn redirects_resolve_relative_locations_against_the_current_url() {
    let here = url("https://example.org/images/a/cat.png?x=1");
    let to = |loc: &str| redirect_target(&here, loc).unwrap().to_string();
    assert_eq!(to("dog.png"), "https://example.org/images/a/dog.png");
    assert_eq!(to("../b/dog.png"), "https://example.org/images/b/dog.png");
    assert_eq!(to("/root.png"), "https://example.org/root.png");
    assert_eq!(
        to("//cdn.example.net/c.png"),
        "https://cdn.example.net/c.png"
    );
    assert_eq!(to("?x=2"), "https://example.org/images/a/cat.png?x=2");
    assert_eq!(to("http://other.example:81/d"), "http://other.example:81/d");
}

#[test]
fn a_redirect_to_another_scheme_or_with_credentials_fails() {
    let here = url("https://example.org/cat.png");
    for (loc, said) in [
        ("file:///etc/passwd", "only http:// and https://"),
        ("ftp://example.org/x", "only http:// and https://"),
        ("https://u:p@example.org/x", "user name or password"),
        ("http://[::1", "not a valid URL"),
    ] {
        match redirect_target(&here, loc) {
            Err(FetchError::Failed(m)) => {
                assert!(m.contains("https://example.org/cat.png redirected"), "{m}");
                assert!(m.contains(said), "{loc}: {m}");
            }
            other => panic!("{loc}: {other:?}"),
        }
    }
}

#[test]
fn only_the_redirect_statuses_are_followed() {
    for s in [301, 302, 303, 307, 308] {
        assert!(is_redirect(s), "{s}");
    }
    for s in [200, 204, 300, 304, 305, 400, 404, 500] {
        assert!(!is_redirect(s), "{s}");
    }
}

fn hop<'a>(u: &'a Url, from: Option<&'a Url>) -> Hop<'a> {
    Hop { url: u, from }
}

#[test]
fn a_refusal_names_host_and_port_the_hop_and_what_to_do() {
    let first = url("https://photos.example/cat.png");
    let there = url("http://10.0.0.5/cat.png");
    let e = messages::transport(&hop(&there, Some(&first)), &ErrorCode::HttpRequestDenied);
    let FetchError::NotAllowed(m) = &e else {
        panic!("{e:?}")
    };
    assert!(m.contains("may not reach 10.0.0.5:80"), "{m}");
    assert!(
        m.contains("redirected from https://photos.example/cat.png"),
        "{m}"
    );
    for hint in [
        "allowed_outbound_hosts",
        "model.toml [network]",
        "--allow-outbound",
        "spin.toml",
    ] {
        assert!(m.contains(hint), "{hint}: {m}");
    }
    assert_eq!(e.code(), ApiCode::UrlNotAllowed);
}

#[test]
fn transport_failures_say_what_went_wrong_where() {
    let u = url("https://files.example:8443/a.wav");
    let h = hop(&u, None);
    let said = |code: ErrorCode| match messages::transport(&h, &code) {
        FetchError::Failed(m) => m,
        other => panic!("{code:?}: {other:?}"),
    };
    let m = said(ErrorCode::ConnectionRefused);
    assert!(
        m.contains("files.example:8443 refused the connection"),
        "{m}"
    );
    let m = said(ErrorCode::DnsError(DnsErrorPayload {
        rcode: Some("NXDOMAIN".into()),
        info_code: None,
    }));
    assert!(
        m.contains("files.example could not be looked up (NXDOMAIN)"),
        "{m}"
    );
    let m = said(ErrorCode::TlsCertificateError);
    assert!(
        m.contains("TlsCertificateError") && m.contains("certificate"),
        "{m}"
    );
    let m = said(ErrorCode::ConnectionTerminated);
    assert!(m.contains("closed the connection"), "{m}");
    let m = said(ErrorCode::LoopDetected);
    assert!(m.ends_with("LoopDetected"), "{m}");
    assert!(
        m.starts_with("could not fetch https://files.example:8443/a.wav"),
        "{m}"
    );
}

#[test]
fn size_status_redirect_and_deadline_messages() {
    let first = url("https://a.example/x");
    let u = url("https://b.example/y.png");
    let h = hop(&u, Some(&first));
    let e = messages::declared_too_large(&h, 5_000_000, 1_000_000);
    assert!(
        matches!(&e, FetchError::TooLarge(m) if m.contains("5000000 bytes") && m.contains("1000000")),
        "{e:?}"
    );
    assert_eq!(e.code(), ApiCode::MediaTooLarge);
    let e = messages::read_too_large(&h, 1024);
    assert!(
        matches!(&e, FetchError::TooLarge(m) if m.contains("more than the limit of 1024")),
        "{e:?}"
    );
    let e = messages::bad_status(&h, 404);
    assert!(
        matches!(&e, FetchError::Failed(m) if m.contains("answered HTTP 404")),
        "{e:?}"
    );
    assert_eq!(e.code(), ApiCode::FetchFailed);
    let e = messages::too_many_redirects(&first, &h);
    assert!(
        matches!(&e, FetchError::Failed(m) if m.starts_with("https://a.example/x redirected more than 3 times")),
        "{e:?}"
    );
    let e = messages::redirect_without_location(&h, 302);
    assert!(
        matches!(&e, FetchError::Failed(m) if m.contains("no Location")),
        "{e:?}"
    );
    let allowed = Duration::from_millis(2500);
    let e = messages::timed_out(&h, allowed, Waiting::Answer);
    assert!(
        matches!(&e, FetchError::Failed(m) if m.contains("no answer came within the 2.5 s")),
        "{e:?}"
    );
    let e = messages::timed_out(&h, allowed, Waiting::Body(10));
    assert!(
        matches!(&e, FetchError::Failed(m) if m.contains("only 10 bytes")),
        "{e:?}"
    );
}

#[test]
fn natively_a_good_url_is_not_fetched_and_a_bad_one_is_still_reported() {
    let deadline = Instant::now() + Duration::from_secs(1);
    match get("https://example.org/a.png", 1024, deadline) {
        Err(FetchError::Failed(m)) => assert!(m.contains("only inside a WebAssembly"), "{m}"),
        other => panic!("{other:?}"),
    }
    let all = get_all(&["nope", "https://example.org/"], 1024, deadline);
    assert!(matches!(all[0], Err(FetchError::BadUrl(_))), "{all:?}");
    assert!(matches!(all[1], Err(FetchError::Failed(_))), "{all:?}");
    assert_eq!(FetchError::BadUrl("x".into()).code(), ApiCode::InvalidField);
    assert_eq!(FetchError::Failed("why".into()).to_string(), "why");
}
