//! Reading a `/predict` request's `data`: the checks every model repeats, each failing with a
//! 400 that names the field.

use edge_api::ApiError;
use serde_json::{Map, Value};

/// Rejects any key of `data` not in `allowed`; `hint` says what to send instead.
pub fn only_fields(
    data: &Map<String, Value>,
    allowed: &[&str],
    hint: &str,
) -> Result<(), ApiError> {
    match data.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(ApiError::invalid(
            &format!("data.{key}"),
            format!("is not a field of this model ({hint})"),
        )),
        None => Ok(()),
    }
}

/// `data.<key>` as a string; absent or null is `None`.
pub fn string_field<'a>(
    data: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, ApiError> {
    match data.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::invalid(
            &format!("data.{key}"),
            "must be a string",
        )),
    }
}

/// The SMILES of a text request: `data.text`, or its alias `data.smiles`: exactly one of
/// them (null counts as absent), trimmed and not empty. The rule is the schema's
/// ([`smiles_data_schema`]), so a document-driven client and the model agree.
pub fn smiles(data: &Map<String, Value>) -> Result<String, ApiError> {
    let smiles = match (string_field(data, "text")?, string_field(data, "smiles")?) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "data.smiles",
                "is an alias of data.text: send one of them, not both",
            ));
        }
        (Some(s), None) | (None, Some(s)) => s.trim().to_owned(),
        (None, None) => return Err(ApiError::missing("data.text")),
    };
    if smiles.is_empty() {
        return Err(ApiError::invalid("data.text", "must not be empty"));
    }
    Ok(smiles)
}

/// JSON Schema of a `data` object that [`smiles`] reads, plus `extra` fields: `text` or its
/// alias `smiles` (exactly one, a non-blank string; null counts as absent), nothing else.
/// For [`crate::Model::data_schema`].
pub fn smiles_data_schema(max_tokens: usize, extra: Map<String, Value>) -> Value {
    let smiles = |what: &str| {
        serde_json::json!({
            "type": ["string", "null"],
            "description": format!(
                "{what}: a SMILES string of at most {max_tokens} tokens; null is the same as \
                 leaving it out. A SMILES that is not a molecule is answered 200 with \
                 success false."
            ),
        })
    };
    // Exactly one of the two: this one a non-blank string, the other absent or null.
    let given = |field: &str, other: &str| {
        serde_json::json!({
            "required": [field],
            "properties": {field: {"type": "string", "pattern": "\\S"}, other: {"type": "null"}},
        })
    };
    let mut properties = Map::new();
    properties.insert("text".into(), smiles("The molecule"));
    properties.insert(
        "smiles".into(),
        smiles("Alias of `text`: send exactly one of the two"),
    );
    properties.extend(extra);
    serde_json::json!({
        "type": "object",
        "properties": properties,
        "oneOf": [given("text", "smiles"), given("smiles", "text")],
        "additionalProperties": false,
    })
}
