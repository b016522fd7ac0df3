//! Test examples as requests: the `/predict` body an example of `/test_examples` stands for,
//! and whether a prediction's results are typed as a capability's `output_schema` says.

use serde_json::{Map, Value, json};

pub const INPUT_TYPES: [&str; 4] = ["text", "image", "audio", "tabular"];
/// Names under which models commonly take their input.
const INPUT_FIELDS: [&str; 8] = [
    "text",
    "smiles",
    "input",
    "image",
    "image_url",
    "audio",
    "audio_url",
    "table",
];
/// Example fields that describe the example rather than being model input.
const EXAMPLE_META: [&str; 5] = [
    "name",
    "description",
    "category",
    "expected",
    "expected_output",
];

/// The `/predict` body an example stands for: `body_format` with its `<placeholder>` values
/// removed and the example's input put in the first placeholder's place.
pub fn request_for(format: &Value, example: &Value, caps: &Value) -> Value {
    let input_type = format["input_type"]
        .as_str()
        .filter(|t| INPUT_TYPES.contains(t))
        .map(str::to_owned)
        .or_else(|| {
            caps["capabilities"][0]["input_types"][0]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "text".into());
    let is_placeholder = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.starts_with('<') && s.ends_with('>'))
    };
    let mut data = Map::new();
    let mut placeholders = Vec::new();
    for (k, v) in format["data"].as_object().into_iter().flatten() {
        if is_placeholder(v) {
            placeholders.push(k.clone());
        } else {
            data.insert(k.clone(), v.clone());
        }
    }
    let inputs: Vec<(&String, &Value)> = example
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !EXAMPLE_META.contains(&k.as_str()))
        .collect();
    // JSON objects carry no order we can rely on: take the placeholder named like the
    // example's input, else one named like an input, else the first.
    let slot = placeholders
        .iter()
        .find(|p| inputs.iter().any(|(k, _)| k == p))
        .or_else(|| {
            placeholders
                .iter()
                .find(|p| INPUT_FIELDS.contains(&p.as_str()))
        })
        .or(placeholders.first())
        .cloned();
    match (slot, inputs.as_slice()) {
        (Some(slot), [(_, v), ..]) => {
            data.insert(slot, (*v).clone());
        }
        (_, inputs) => data.extend(inputs.iter().map(|(k, v)| ((*k).clone(), (*v).clone()))),
    }
    json!({"input_type": input_type, "data": data})
}

pub fn results_match(results: &Value, schema: &Map<String, Value>) -> bool {
    schema.iter().all(|(field, ty)| match results.get(field) {
        None => true,
        Some(v) => match ty.as_str() {
            Some("float") => v.is_number(),
            Some("string") => v.is_string(),
            Some("object") => v.is_object(),
            Some("array") => v.is_array(),
            _ => false,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_requests_fill_the_placeholder() {
        let format =
            json!({"input_type": "text", "data": {"text": "<SMILES>", "property": "<code>"}});
        let ex = json!({"name": "aspirin", "smiles": "CC(=O)O", "description": "d", "category": "c", "expected": {}});
        assert_eq!(
            request_for(&format, &ex, &json!({})),
            json!({"input_type": "text", "data": {"text": "CC(=O)O"}})
        );
        let no_format = request_for(
            &json!({}),
            &json!({"name": "n", "value": 1}),
            &json!({"capabilities": [{"input_types": ["tabular"]}]}),
        );
        assert_eq!(
            no_format,
            json!({"input_type": "tabular", "data": {"value": 1}})
        );
    }
}
