//! Timestamps on the wire.
//!
//! docs/DESIGN.md: chat dates are RFC 3339 in UTC with a `Z` suffix; registry dates are ISO 8601
//! *without* a zone (as the spec shows `expires_at`), also in UTC. Both use millisecond
//! precision so that ordering by string equals ordering by time.

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use std::time::SystemTime;

/// Now, as `2026-11-22T01:49:13.123Z`.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// A point in time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn rfc3339(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A point in time as `YYYY-MM-DDTHH:MM:SS.mmm` (UTC, no zone), the registry's format.
pub fn iso8601_no_zone(t: SystemTime) -> String {
    DateTime::<Utc>::from(t)
        .naive_utc()
        .format("%Y-%m-%dT%H:%M:%S%.3f")
        .to_string()
}

/// Parses an RFC 3339 date-time (any offset) and re-renders it in our canonical UTC form.
pub fn normalize_rfc3339(s: &str) -> Option<String> {
    DateTime::parse_from_rfc3339(s).ok().map(|d| {
        d.with_timezone(&Utc)
            .to_rfc3339_opts(SecondsFormat::Millis, true)
    })
}

/// Parses a zone-less ISO 8601 date-time as UTC.
pub fn parse_iso8601_no_zone(s: &str) -> Option<SystemTime> {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|n| n.and_utc().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn formats() {
        let t = UNIX_EPOCH + Duration::from_millis(1_763_776_153_123);
        assert_eq!(rfc3339(t), "2025-11-22T01:49:13.123Z");
        assert_eq!(iso8601_no_zone(t), "2025-11-22T01:49:13.123");
        assert_eq!(parse_iso8601_no_zone("2025-11-22T01:49:13.123"), Some(t));
    }

    #[test]
    fn normalizes_offsets_to_utc() {
        assert_eq!(
            normalize_rfc3339("2025-01-01T02:00:00+02:00").as_deref(),
            Some("2025-01-01T00:00:00.000Z")
        );
        assert_eq!(normalize_rfc3339("yesterday"), None);
    }
}
