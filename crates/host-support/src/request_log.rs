//! The request log: one line per request served, in the layout of every other log line
//! (`tracing_subscriber`'s full format), but put together here and queued straight to the
//! log writer ([`crate::log_writer`]).
//!
//! Why by hand: through the fmt layer the line cost about 11,500 instructions per request
//! (`core::fmt` assembling it piece by piece, styles written even with colours off, the
//! latency formatted into a `String` first), 11 % of everything the host executes for a
//! `/health` (callgrind, docs/BENCHMARKS.md). Here it is appended byte by byte. Whether a
//! line is wanted is still tracing's decision (`RUNTIME_HOST_LOG`, target `request`), so
//! filtering works as for any other line.
//!
//! With `--log-format json` ([`LogFormat::Json`]) the line is one JSON object with the keys
//! tracing's JSON lines have (`timestamp`, `level`, `target`) and the request's fields,
//! written by `serde_json` from [`JsonLine`].

use crate::log_writer::{self, LogFormat};
use chrono::{Datelike, Timelike};
use serde::Serialize;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};
use tracing::Level;

/// The log target of these lines: `RUNTIME_HOST_LOG=request=off` (or `warn`) silences them.
pub const REQUEST_LOG: &str = "request";

/// One request, as the log tells it.
pub struct RequestRecord<'a> {
    /// Its `x-request-id` (the client's, or one the host made).
    pub id: &'a str,
    pub method: &'a str,
    /// The path without its query.
    pub path: &'a str,
    /// The route it matched: an interface's route template (`/predict`,
    /// `/heartbeat/{port}`), else the app's route (`/models/molprop/...`); `None` when
    /// nothing matched (a 404 of the app, a request the guard refused).
    pub route: Option<&'a str>,
    /// The model deployment that answered, for a model's request.
    pub model: Option<&'a str>,
    pub status: u16,
    /// From arrival to the answer's head.
    pub took: Duration,
    /// The request body's length where the client declared it (`Content-Length`).
    pub bytes_in: Option<u64>,
    /// The answer body's bytes sent (fewer than its length when the client left early).
    pub bytes_out: u64,
    /// The port the request arrived on (which service of the process it reached).
    pub port: u16,
    pub peer: SocketAddr,
}

/// The level to log a request at, or `None` when its line is not wanted: DEBUG when
/// `routine` (the host's own traffic that went well), else INFO (requests from outside are
/// what a person watching the log wants to see). Asked first, so nothing is gathered for a
/// line nobody reads.
pub fn wanted(routine: bool) -> Option<Level> {
    // `enabled!` takes its level as a constant: one branch per level.
    if routine {
        tracing::enabled!(target: REQUEST_LOG, Level::DEBUG).then_some(Level::DEBUG)
    } else {
        tracing::enabled!(target: REQUEST_LOG, Level::INFO).then_some(Level::INFO)
    }
}

/// Logs `served` at `level` (from [`wanted`]), in the process's format.
pub fn record(level: Level, served: &RequestRecord<'_>) {
    let now = SystemTime::now();
    let line = match log_writer::format() {
        LogFormat::Text => format_line(now, level, served, log_writer::colours()),
        LogFormat::Json => json_line(now, level, served),
    };
    log_writer::queue(line.as_bytes());
}

/// The JSON line of a request: tracing's keys, then the request's.
#[derive(Serialize)]
struct JsonLine<'a> {
    timestamp: &'a str,
    level: &'a str,
    target: &'static str,
    request_id: &'a str,
    method: &'a str,
    route: Option<&'a str>,
    path: &'a str,
    model: Option<&'a str>,
    status: u16,
    duration_ms: f64,
    bytes_in: Option<u64>,
    bytes_out: u64,
    port: u16,
    peer: String,
}

fn json_line(now: SystemTime, level: Level, served: &RequestRecord<'_>) -> String {
    let mut timestamp = String::with_capacity(27);
    push_timestamp(&mut timestamp, now);
    let line = JsonLine {
        timestamp: &timestamp,
        level: level.as_str(),
        target: REQUEST_LOG,
        request_id: served.id,
        method: served.method,
        route: served.route,
        path: served.path,
        model: served.model,
        status: served.status,
        duration_ms: served.took.as_micros() as f64 / 1000.0,
        bytes_in: served.bytes_in,
        bytes_out: served.bytes_out,
        port: served.port,
        peer: served.peer.to_string(),
    };
    // Strings and numbers only: serialising cannot fail.
    let mut out = serde_json::to_string(&line).unwrap_or_default();
    out.push('\n');
    out
}

/// `2026-11-25T21:49:33.216254Z  INFO request: method=GET path="/health" status=200
/// latency_ms=0.87 peer=127.0.0.1:56780 request_id=1f3a9c0e5b7d2a64-2a`, with a newline.
fn format_line(now: SystemTime, level: Level, served: &RequestRecord<'_>, ansi: bool) -> String {
    let style = |code: &'static str| if ansi { code } else { "" };
    let (dim, italic, reset) = (style("\x1b[2m"), style("\x1b[3m"), style("\x1b[0m"));
    let mut line = String::with_capacity(128);
    line.push_str(dim);
    push_timestamp(&mut line, now);
    line.push_str(reset);
    line.push(' ');
    let (colour, name) = if level == Level::DEBUG {
        ("\x1b[34m", "DEBUG")
    } else {
        ("\x1b[32m", " INFO")
    };
    line.push_str(style(colour));
    line.push_str(name);
    line.push_str(reset);
    line.push(' ');
    line.push_str(dim);
    line.push_str(REQUEST_LOG);
    line.push(':');
    line.push_str(reset);
    let field = |line: &mut String, name: &str| {
        for part in [" ", italic, name, reset, dim, "=", reset] {
            line.push_str(part);
        }
    };
    field(&mut line, "method");
    line.push_str(served.method);
    field(&mut line, "path");
    push_quoted(&mut line, served.path);
    field(&mut line, "status");
    line.push_str(itoa::Buffer::new().format(served.status));
    field(&mut line, "latency_ms");
    push_millis(&mut line, served.took);
    field(&mut line, "peer");
    push_peer(&mut line, served.peer);
    // Visible ASCII without quotes or spaces (the HTTP layer replaced any other).
    field(&mut line, "request_id");
    push_quoted_if_needed(&mut line, served.id);
    line.push('\n');
    line
}

/// RFC 3339 in UTC with microseconds, as the fmt layer's default timer writes it.
fn push_timestamp(line: &mut String, now: SystemTime) {
    let t = chrono::DateTime::<chrono::Utc>::from(now);
    push_padded(line, t.year().max(0) as u32, 4);
    line.push('-');
    push_padded(line, t.month(), 2);
    line.push('-');
    push_padded(line, t.day(), 2);
    line.push('T');
    push_padded(line, t.hour(), 2);
    line.push(':');
    push_padded(line, t.minute(), 2);
    line.push(':');
    push_padded(line, t.second(), 2);
    line.push('.');
    push_padded(line, t.nanosecond() % 1_000_000_000 / 1000, 6);
    line.push('Z');
}

/// `value` in decimal, with leading zeros up to `width` digits.
fn push_padded(line: &mut String, value: u32, width: usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(value);
    for _ in digits.len()..width {
        line.push('0');
    }
    line.push_str(digits);
}

/// Milliseconds with two decimals, rounded.
fn push_millis(line: &mut String, took: Duration) {
    let hundredths = (took.as_micros() + 5) / 10;
    line.push_str(itoa::Buffer::new().format(hundredths / 100));
    line.push('.');
    push_padded(line, (hundredths % 100) as u32, 2);
}

/// The path in double quotes, escaped as Rust's `Debug` for `str` would (a request path is
/// the client's text: a quote or a control character in it must not forge a field).
fn push_quoted(line: &mut String, path: &str) {
    line.push('"');
    for c in path.chars() {
        match c {
            '"' | '\\' => {
                line.push('\\');
                line.push(c);
            }
            c if c.is_control() => line.extend(c.escape_debug()),
            c => line.push(c),
        }
    }
    line.push('"');
}

/// `text` as it is when it is visible ASCII without a quote, a backslash or `=`, else quoted.
fn push_quoted_if_needed(line: &mut String, text: &str) {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'\\' | b'='));
    if plain {
        line.push_str(text);
    } else {
        push_quoted(line, text);
    }
}

fn push_peer(line: &mut String, peer: SocketAddr) {
    match peer {
        SocketAddr::V4(v4) => {
            for (i, octet) in v4.ip().octets().iter().enumerate() {
                if i > 0 {
                    line.push('.');
                }
                line.push_str(itoa::Buffer::new().format(*octet));
            }
            line.push(':');
            line.push_str(itoa::Buffer::new().format(v4.port()));
        }
        SocketAddr::V6(v6) => {
            use std::fmt::Write;
            let _ = write!(line, "{v6}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line of a 200 to `GET path` from `peer` that took 18.305 ms, without colours.
    fn line_of(at: SystemTime, level: Level, path: &str, peer: &str) -> String {
        format_line(at, level, &record_of(path, peer), false)
    }

    fn record_of<'a>(path: &'a str, peer: &str) -> RequestRecord<'a> {
        RequestRecord {
            id: "r-1",
            method: "GET",
            path,
            route: None,
            model: None,
            status: 200,
            took: Duration::from_micros(18_305),
            bytes_in: None,
            bytes_out: 15,
            port: 3000,
            peer: peer.parse().unwrap(),
        }
    }

    #[test]
    fn a_line_has_the_layout_of_the_other_log_lines() {
        // 2026-11-25T21:49:33.216254Z
        let at = SystemTime::UNIX_EPOCH + Duration::from_micros(1_795_643_373_216_254);
        let line = line_of(at, Level::INFO, "/health", "127.0.0.1:56766");
        assert_eq!(
            line,
            "2026-11-25T21:49:33.216254Z  INFO request: method=GET path=\"/health\" \
             status=200 latency_ms=18.31 peer=127.0.0.1:56766 request_id=r-1\n"
        );
        let line = line_of(at, Level::DEBUG, "/", "[::1]:80");
        assert!(line.contains("Z DEBUG request: "), "{line}");
        assert!(line.ends_with(" peer=[::1]:80 request_id=r-1\n"), "{line}");
    }

    #[test]
    fn a_json_line_is_one_object_with_every_field() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_micros(1_795_643_373_216_254);
        let mut served = record_of("/models/m/predict\"\n", "127.0.0.1:1");
        served.route = Some("/predict");
        served.model = Some("m");
        served.bytes_in = Some(42);
        let line = json_line(at, Level::INFO, &served);
        assert!(
            line.ends_with("}\n") && line.matches('\n').count() == 1,
            "{line}"
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["timestamp"], "2026-11-25T21:49:33.216254Z");
        assert_eq!(v["level"], "INFO");
        assert_eq!(v["target"], "request");
        assert_eq!(v["request_id"], "r-1");
        assert_eq!(v["route"], "/predict");
        assert_eq!(v["path"], "/models/m/predict\"\n");
        assert_eq!(v["model"], "m");
        assert_eq!(v["status"], 200);
        assert_eq!(v["duration_ms"], 18.305);
        assert_eq!(v["bytes_in"], 42);
        assert_eq!(v["bytes_out"], 15);
        assert_eq!(v["port"], 3000);
        assert_eq!(v["peer"], "127.0.0.1:1");
    }

    #[test]
    fn a_path_cannot_forge_fields_or_lines() {
        let at = SystemTime::UNIX_EPOCH;
        let line = line_of(at, Level::INFO, "/a\" status=999\n\\x", "10.0.0.1:1");
        assert!(
            line.contains(r#"path="/a\" status=999\n\\x" status=200"#),
            "{line}"
        );
        assert_eq!(line.matches('\n').count(), 1, "{line}");
        assert!(line.starts_with("1970-01-01T00:00:00.000000Z"), "{line}");
    }

    #[test]
    fn latency_is_rounded_to_hundredths_of_a_millisecond() {
        let mut s = String::new();
        push_millis(&mut s, Duration::from_micros(4));
        s.push(' ');
        push_millis(&mut s, Duration::from_micros(1_005));
        s.push(' ');
        push_millis(&mut s, Duration::from_secs(31));
        assert_eq!(s, "0.00 1.01 31000.00");
    }
}
