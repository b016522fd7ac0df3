//! Durations as the command line gives them: `30`, `30s`, `500ms`, `2m`.

use std::time::Duration;

/// Parses `30` (seconds), `30s`, `500ms`, `2m`: a clap value parser.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration; try 30s or 500ms"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("unknown unit `{unit}` in `{s}`; use ms, s or m")),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("`{s}` must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// [`parse_duration`] that also takes `0` (`0s`, `0ms`), for an interval where zero turns
/// the thing off (`up --watch-interval 0s`).
pub fn parse_duration_or_off(s: &str) -> Result<Duration, String> {
    let n = s.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if n.parse::<f64>().is_ok_and(|n| n == 0.0) {
        return Ok(Duration::ZERO);
    }
    parse_duration(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("3h").is_err());
        assert!(parse_duration("fast").is_err());
        assert_eq!(parse_duration_or_off("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration_or_off("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration_or_off("2s").unwrap(), Duration::from_secs(2));
        assert!(parse_duration_or_off("-1s").is_err());
    }
}
