//! Judging raw JSON against the records of the specification, field by field, so that a
//! deployment our own types would reject is still reported precisely.

use serde_json::Value;

/// A field's expected JSON type.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str,
    Num,
    Int,
    Bool,
    Obj,
    StrArray,
    StrOrNull,
    Any,
}

impl Kind {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Kind::Str => v.is_string(),
            Kind::Num => v.is_number(),
            Kind::Int => v.is_i64() || v.is_u64(),
            Kind::Bool => v.is_boolean(),
            Kind::Obj => v.is_object(),
            Kind::StrArray => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Kind::StrOrNull => v.is_string() || v.is_null(),
            Kind::Any => true,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Num => "a number",
            Kind::Int => "an integer",
            Kind::Bool => "a boolean",
            Kind::Obj => "an object",
            Kind::StrArray => "an array of strings",
            Kind::StrOrNull => "a string or null",
            Kind::Any => "any value",
        }
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!("{}...", &s[..80])
    } else {
        s
    }
}

/// Problems with `fields` of the object at `path` (empty: all present with the right type).
pub fn fields(value: &Value, path: &str, fields: &[(&str, Kind)]) -> Vec<String> {
    let Some(obj) = value.as_object() else {
        return vec![format!("{path}: expected an object, got {}", short(value))];
    };
    fields
        .iter()
        .filter_map(|(name, kind)| match obj.get(*name) {
            None => Some(format!("{path}.{name}: missing (expected {})", kind.name())),
            Some(v) if !kind.accepts(v) => Some(format!(
                "{path}.{name}: expected {}, got {}",
                kind.name(),
                short(v)
            )),
            Some(_) => None,
        })
        .collect()
}

/// The error body of interfaces B and C: `{success: false, error, error_code}`.
pub fn error_body(value: &Value, path: &str) -> Vec<String> {
    let mut problems = fields(
        value,
        path,
        &[
            ("success", Kind::Bool),
            ("error", Kind::Str),
            ("error_code", Kind::Str),
        ],
    );
    if value.get("success") == Some(&Value::Bool(true)) {
        problems.push(format!("{path}.success: expected false in an error body"));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_missing_and_mistyped_fields() {
        let p = fields(
            &json!({"a": 1, "b": "x"}),
            "r",
            &[("a", Kind::Str), ("b", Kind::Str), ("c", Kind::Num)],
        );
        assert_eq!(
            p,
            [
                "r.a: expected a string, got 1",
                "r.c: missing (expected a number)"
            ]
        );
        assert!(
            error_body(
                &json!({"success": false, "error": "e", "error_code": "x"}),
                "b"
            )
            .is_empty()
        );
        assert_eq!(
            error_body(
                &json!({"success": true, "error": "e", "error_code": "x"}),
                "b"
            )
            .len(),
            1
        );
    }
}
