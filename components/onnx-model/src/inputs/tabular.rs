//! `data.features`: an object of every named feature, or an array in their order. A numeric
//! feature is a number within ±f32::MAX, or `null` (missing); a text feature (a category of
//! `input.categories`) is a string.

use super::{Cell, InputRow};
use model_sdk::ApiError;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The JSON Schema of `data` for these features.
pub fn schema(names: &[String], categories: &BTreeMap<String, Vec<String>>) -> Value {
    let limit = f64::from(f32::MAX);
    let number = json!({"type": ["number", "null"], "minimum": -limit, "maximum": limit});
    let of = |name: &String| match categories.get(name) {
        Some(seen) => json!({"type": "string", "maxLength": 1024, "examples": seen}),
        None => number.clone(),
    };
    let described = format!(
        "Every feature, by name or as an array in this order: {}",
        names.join(", ")
    );
    let by_name: Map<String, Value> = names.iter().map(|n| (n.clone(), of(n))).collect();
    // Numbers only: every item alike (as before categories); else one schema per position.
    let array = if categories.is_empty() {
        json!({"type": "array", "items": number, "minItems": names.len(),
               "maxItems": names.len()})
    } else {
        let in_order: Vec<Value> = names.iter().map(of).collect();
        json!({"type": "array", "prefixItems": in_order, "items": false,
               "minItems": names.len(), "maxItems": names.len()})
    };
    json!({
        "type": "object",
        "properties": {"features": {
            "description": described,
            "oneOf": [
                {"type": "object", "properties": by_name, "required": names,
                 "additionalProperties": false},
                array,
            ],
        }},
        "required": ["features"],
        "additionalProperties": false,
    })
}

/// The longest category value accepted (a category is a short word; a longer string is
/// almost surely a mistake, and is echoed in the answer).
const MAX_TEXT: usize = 1024;

fn cell(field: &str, value: &Value, text: bool) -> Result<Cell, ApiError> {
    match (value, text) {
        (Value::String(s), true) if s.len() <= MAX_TEXT => Ok(Cell::Text(s.clone())),
        (Value::String(_), true) => Err(ApiError::invalid(
            field,
            format!("is longer than {MAX_TEXT} bytes"),
        )),
        (_, true) => Err(ApiError::invalid(field, "must be a string (a category)")),
        (Value::Null, false) => Ok(Cell::Missing),
        (v, false) => match v.as_f64() {
            Some(x) if x.is_finite() && x.abs() <= f64::from(f32::MAX) => Ok(Cell::Number(x)),
            Some(x) => Err(ApiError::invalid(
                field,
                format!(
                    "{x:e} is beyond ±{:e}: the model computes in 32-bit floats",
                    f32::MAX
                ),
            )),
            None => Err(ApiError::invalid(
                field,
                "must be a number (or null, when not measured)",
            )),
        },
    }
}

/// The cells of `features`, one per name, in the names' order.
pub fn read(
    names: &[String],
    categories: &BTreeMap<String, Vec<String>>,
    features: Option<&Value>,
) -> Result<Vec<Cell>, ApiError> {
    let is_text = |n: &String| categories.contains_key(n);
    match features {
        None | Some(Value::Null) => Err(ApiError::missing("data.features")),
        Some(Value::Object(map)) => {
            if let Some(k) = map.keys().find(|k| !names.contains(k)) {
                return Err(ApiError::invalid(
                    &format!("data.features.{k}"),
                    format!(
                        "is not a feature of this model; its features: {}",
                        names.join(", ")
                    ),
                ));
            }
            names
                .iter()
                .map(|n| {
                    let field = format!("data.features.{n}");
                    match map.get(n) {
                        Some(v) => cell(&field, v, is_text(n)),
                        None => Err(ApiError::missing(&field)),
                    }
                })
                .collect()
        }
        Some(Value::Array(values)) => {
            if values.len() != names.len() {
                return Err(ApiError::invalid(
                    "data.features",
                    format!(
                        "has {} values; this model takes {} in this order: {}",
                        values.len(),
                        names.len(),
                        names.join(", ")
                    ),
                ));
            }
            values
                .iter()
                .zip(names)
                .enumerate()
                .map(|(i, (v, n))| cell(&format!("data.features[{i}] ({n})"), v, is_text(n)))
                .collect()
        }
        Some(_) => Err(ApiError::invalid(
            "data.features",
            "must be an object of named features or an array of values",
        )),
    }
}

/// A read row, with its echo and what the applicability domain checks.
pub fn input_row<'a>(
    names: &'a [String],
    categories: &'a BTreeMap<String, Vec<String>>,
    cells: Vec<Cell>,
) -> InputRow<'a> {
    let mut echo = Map::new();
    let mut named = Vec::new();
    let mut unseen = Vec::new();
    for (n, c) in names.iter().zip(&cells) {
        let value = match c {
            Cell::Number(x) => {
                named.push((n.as_str(), *x));
                json!(x)
            }
            Cell::Missing => Value::Null,
            Cell::Text(s) => {
                if categories.get(n).is_some_and(|seen| !seen.contains(s)) {
                    unseen.push((n.as_str(), s.clone()));
                }
                json!(s)
            }
        };
        echo.insert(n.clone(), value);
    }
    InputRow {
        cells,
        echo: Value::Object(echo),
        fingerprint: None,
        named,
        unseen,
    }
}
