//! Parsing request bodies into typed values, with errors that name the offending field.
//!
//! serde alone reports "invalid type ... at line 1 column 17"; a caller needs to know *which*
//! field, so the path is tracked with `serde_path_to_error` and mapped onto our codes:
//! syntax errors are `invalid_json`, absent fields `missing_field`, the rest `invalid_field`.

use crate::error::{ApiError, ErrorCode};
use serde::de::DeserializeOwned;
use std::borrow::Cow;

/// Deepest nesting of arrays and objects a request body may have.
pub const MAX_BODY_DEPTH: usize = 128;

/// Parses `body` as `T`, mapping every failure to a 400 [`ApiError`]. One set of rules for
/// every request body of every service (docs/DECISIONS.md "Error body and codes"): the body
/// is one JSON object (400 `invalid_field` otherwise: serde would take an array for a
/// struct), nests at most [`MAX_BODY_DEPTH`] levels (400 `invalid_json`), and no object in it
/// repeats a key (400 `invalid_field`: serde would keep the last silently in free-form maps).
pub fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let invalid_json = |msg: String| ApiError::new(ErrorCode::InvalidJson, msg);
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        None => {
            return Err(invalid_json(
                "request body is empty; expected a JSON object".into(),
            ));
        }
        Some(b'{') => {}
        // Not an object: malformed JSON, or JSON of the wrong type (serde would even take an
        // array for a struct).
        Some(_) => {
            return Err(
                match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                    Err(e) => invalid_json(format!("malformed JSON: {e}")),
                    Ok(_) => ApiError::new(
                        ErrorCode::InvalidField,
                        "invalid request body: it must be a JSON object (`{...}`)",
                    ),
                },
            );
        }
    }
    let depth = text_depth(body);
    if depth > MAX_BODY_DEPTH {
        return Err(invalid_json(format!(
            "the request body nests {depth} levels deep; at most {MAX_BODY_DEPTH} are accepted"
        )));
    }
    let de = &mut serde_json::Deserializer::from_slice(body);
    let result: Result<T, _> = serde_path_to_error::deserialize(de);
    let value = result.map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        classify(&path, &inner)
    })?;
    if let Some(key) = duplicate_key(body) {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("duplicate key `{key}`: an object may name each key once"),
        ));
    }
    Ok(value)
}

/// The first key that appears twice in one object of well-formed JSON text, if any. Keys
/// are compared as decoded (`"a"` and `"\u0061"` are the same key); a key without escapes
/// is compared where it lies in `bytes`, without a copy.
pub fn duplicate_key(bytes: &[u8]) -> Option<String> {
    enum Frame<'a> {
        Object { keys: Keys<'a>, expect_key: bool },
        Array,
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let mut end = i + 1;
                let mut escaped = false;
                let mut has_escape = false;
                while end < bytes.len() {
                    match (escaped, bytes[end]) {
                        (true, _) => escaped = false,
                        (false, b'\\') => (escaped, has_escape) = (true, true),
                        (false, b'"') => break,
                        _ => {}
                    }
                    end += 1;
                }
                if let Some(Frame::Object { keys, expect_key }) = stack.last_mut()
                    && *expect_key
                {
                    let raw = &bytes[i..=end.min(bytes.len() - 1)];
                    if let Err(key) = keys.insert(decoded_key(raw, has_escape)) {
                        return Some(key.into_owned());
                    }
                    *expect_key = false;
                }
                i = end + 1;
                continue;
            }
            b'{' => stack.push(Frame::Object {
                keys: Keys::Few(Vec::new()),
                expect_key: true,
            }),
            b'[' => stack.push(Frame::Array),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(Frame::Object { expect_key, .. }) = stack.last_mut() {
                    *expect_key = true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A key as its object names it: `raw` is the string with its quotes.
fn decoded_key(raw: &[u8], has_escape: bool) -> Cow<'_, str> {
    let inner = raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\""));
    match (has_escape, inner.map(std::str::from_utf8)) {
        (false, Some(Ok(text))) => Cow::Borrowed(text),
        _ => Cow::Owned(
            serde_json::from_slice::<String>(raw)
                .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned()),
        ),
    }
}

/// Keys an object may have before [`Keys`] turns its list into a set.
const FEW_KEYS: usize = 16;

/// The keys of one object seen so far: a list while there are few (most objects have a
/// handful, and comparing them costs less than hashing), a set beyond that, so an object
/// of thousands of keys is still checked in linear time.
enum Keys<'a> {
    Few(Vec<Cow<'a, str>>),
    Many(std::collections::HashSet<Cow<'a, str>>),
}

impl<'a> Keys<'a> {
    /// Adds `key`, or gives it back when the object had it already.
    fn insert(&mut self, key: Cow<'a, str>) -> Result<(), Cow<'a, str>> {
        match self {
            Keys::Few(list) if list.contains(&key) => Err(key),
            Keys::Few(list) if list.len() < FEW_KEYS => {
                list.push(key);
                Ok(())
            }
            Keys::Few(list) => {
                let mut set: std::collections::HashSet<_> = list.drain(..).collect();
                set.insert(key);
                *self = Keys::Many(set);
                Ok(())
            }
            Keys::Many(set) if set.contains(&key) => Err(key),
            Keys::Many(set) => {
                set.insert(key);
                Ok(())
            }
        }
    }
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
    fn duplicate_keys_are_found_at_any_depth_and_only_as_keys() {
        use super::duplicate_key;
        assert_eq!(duplicate_key(br#"{"a": 1, "b": {"c": 1}, "c": 2}"#), None);
        assert_eq!(duplicate_key(br#"{"a": "a", "b": ["a", "a"]}"#), None);
        assert_eq!(
            duplicate_key(br#"{"data": {"text": "C", "text": "CC"}}"#).as_deref(),
            Some("text")
        );
        assert_eq!(
            duplicate_key(br#"{"x": [{"k": 1}, {"k": 2, "k": 3}]}"#).as_deref(),
            Some("k")
        );
        assert_eq!(
            duplicate_key(br#"{"a": 1, "\u0061": 2}"#).as_deref(),
            Some("a")
        );
        assert_eq!(duplicate_key(br#"{"a\"b": 1, "c": "\"a\"b"}"#), None);
        assert_eq!(
            duplicate_key(br#"{"\"": 1, "\u0022": 2}"#).as_deref(),
            Some("\"")
        );
    }

    /// Past a handful of keys an object's keys are kept in a set: duplicates are still
    /// found on either side of the switch, and a large object is checked in linear time.
    #[test]
    fn duplicate_keys_are_found_in_large_objects() {
        use super::duplicate_key;
        let object = |keys: &[String]| {
            let fields: Vec<String> = keys.iter().map(|k| format!("\"{k}\": 0")).collect();
            format!("{{{}}}", fields.join(", "))
        };
        let distinct: Vec<String> = (0..50_000).map(|i| format!("k{i}")).collect();
        let started = std::time::Instant::now();
        assert_eq!(duplicate_key(object(&distinct).as_bytes()), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        for (first, second) in [(3, 9), (3, 40), (20, 30), (0, 49_999)] {
            let mut keys = distinct.clone();
            keys[second] = keys[first].clone();
            let expected = keys[first].clone();
            assert_eq!(
                duplicate_key(object(&keys).as_bytes()),
                Some(expected),
                "keys {first} and {second}"
            );
        }
    }

    #[test]
    fn bodies_are_one_object_of_bounded_depth() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Body {
            a: Option<serde_json::Value>,
        }
        let code = |body: &[u8]| super::parse_body::<Body>(body).unwrap_err().code;
        assert_eq!(
            code(b"[1]"),
            ErrorCode::InvalidField,
            "an array for an object"
        );
        assert_eq!(code(b" \"x\""), ErrorCode::InvalidField);
        assert_eq!(code(b"\xff\xfe"), ErrorCode::InvalidJson, "not JSON at all");
        let deep = format!("{{\"a\": {}1{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(code(deep.as_bytes()), ErrorCode::InvalidJson);
        let fine = format!("{{\"a\": {}1{}}}", "[".repeat(100), "]".repeat(100));
        assert!(super::parse_body::<Body>(fine.as_bytes()).is_ok());
        assert_eq!(code(br#"{"a": {"b": 1, "b": 2}}"#), ErrorCode::InvalidField);
    }

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
