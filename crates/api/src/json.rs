//! Parsing request bodies into typed values, with errors that name the offending field.
//!
//! serde alone reports "invalid type ... at line 1 column 17"; a caller needs to know *which*
//! field, so the path is tracked with `serde_path_to_error` and mapped onto our codes:
//! syntax errors are `invalid_json`, absent fields `missing_field`, the rest `invalid_field`.

use crate::error::{ApiError, ErrorCode};
use serde::de::DeserializeOwned;

/// Parses `body` as `T`, mapping every failure to a 400 [`ApiError`].
pub fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::new(
            ErrorCode::InvalidJson,
            "request body is empty; expected a JSON object",
        ));
    }
    let de = &mut serde_json::Deserializer::from_slice(body);
    let result: Result<T, _> = serde_path_to_error::deserialize(de);
    result.map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        classify(&path, &inner)
    })
}

fn classify(path: &str, err: &serde_json::Error) -> ApiError {
    use serde_json::error::Category;
    match err.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            ApiError::new(ErrorCode::InvalidJson, format!("malformed JSON: {err}"))
        }
        Category::Data => {
            let msg = strip_position(&err.to_string());
            if let Some(rest) = msg.strip_prefix("missing field `") {
                let field = rest.split('`').next().unwrap_or_default();
                let full = join_path(path, field);
                ApiError::new(ErrorCode::MissingField, format!("missing field `{full}`"))
            } else if let Some(rest) = msg.strip_prefix("unknown field `") {
                // The tracked path already ends in the unknown field's name.
                let field = rest.split('`').next().unwrap_or_default();
                let full = if path.is_empty() || path == "." {
                    field
                } else {
                    path
                };
                ApiError::new(ErrorCode::InvalidField, format!("unknown field `{full}`"))
            } else if path.is_empty() || path == "." {
                ApiError::new(
                    ErrorCode::InvalidField,
                    format!("invalid request body: {msg}"),
                )
            } else {
                ApiError::new(
                    ErrorCode::InvalidField,
                    format!("invalid field `{path}`: {msg}"),
                )
            }
        }
    }
}

fn join_path(parent: &str, field: &str) -> String {
    if parent.is_empty() || parent == "." {
        field.to_owned()
    } else {
        format!("{parent}.{field}")
    }
}

/// serde_json appends " at line L column C"; for a field-level error the field name says more.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// The deepest nesting of arrays and objects in JSON text (0 for a scalar), found without
/// parsing it, so that text too deep for a parser's recursion limit can be measured.
pub fn text_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_depth_skips_strings() {
        assert_eq!(super::text_depth(b"1"), 0);
        assert_eq!(super::text_depth(br#"{"a": [1, {"b": "[[[{"}]}"#), 3);
        assert_eq!(super::text_depth(br#"["\"[", []]"#), 2);
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        assert_eq!(super::text_depth(deep.as_bytes()), 300);
    }

    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        inner: Option<Inner>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        count: u32,
    }

    fn code(body: &str) -> (ErrorCode, String) {
        let e = parse_body::<Outer>(body.as_bytes()).unwrap_err();
        assert_eq!(e.status, 400);
        (e.code, e.message)
    }

    #[test]
    fn syntax_errors_are_invalid_json() {
        assert_eq!(code("{").0, ErrorCode::InvalidJson);
        assert_eq!(code("").0, ErrorCode::InvalidJson);
        assert_eq!(code("{\"name\": }").0, ErrorCode::InvalidJson);
    }

    #[test]
    fn missing_and_invalid_fields_are_named() {
        let (c, m) = code("{}");
        assert_eq!(c, ErrorCode::MissingField);
        assert!(m.contains("`name`"), "{m}");
        let (c, m) = code(r#"{"name": 5}"#);
        assert_eq!(c, ErrorCode::InvalidField);
        assert!(m.contains("`name`"), "{m}");
        let (c, m) = code(r#"{"name": "x", "inner": {"count": "no"}}"#);
        assert_eq!(c, ErrorCode::InvalidField);
        assert!(m.contains("inner.count"), "{m}");
        let (c, m) = code(r#"{"name": "x", "inner": {}}"#);
        assert_eq!(c, ErrorCode::MissingField);
        assert!(m.contains("inner.count"), "{m}");
        let (c, m) = code(r#"{"name": "x", "extra": 1}"#);
        assert_eq!(c, ErrorCode::InvalidField);
        assert!(m.contains("`extra`"), "{m}");
        let (c, _) = code("[1]");
        assert_eq!(c, ErrorCode::InvalidField);
    }

    #[test]
    fn good_body_parses() {
        let o: Outer = parse_body(br#"{"name": "x", "inner": {"count": 3}}"#).unwrap();
        assert_eq!(o.inner.unwrap().count, 3);
    }
}
