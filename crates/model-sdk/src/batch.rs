//! Batches: many inputs in one `/predict`, for every model built on the SDK.
//!
//! A text model takes a list in `data.texts` where one request has `data.text`; a tabular
//! model takes a list of feature objects (or arrays) in `data.rows` where one request has
//! `data.features`. Every other field of `data` (molprop's `property`, say) applies to each
//! item. The answer is still a v1.2 prediction response: `results.items` holds one
//! `{success, results, error_message}` per input, in order; a bad item gets its own
//! `success: false` and the others are answered. The batch itself is refused (400) only when
//! the list is not a list, is empty or holds more than [`MAX_ITEMS`].
//!
//! A batch stops at [`TIME_BUDGET`]: the items not reached by then are answered
//! `success: false` with why, so a client never waits on a hung connection and learns to
//! send fewer items per request.

use edge_api::ApiError;
use edge_api::model::InputType;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Most items one request may hold (a model may allow fewer: `Model::max_batch`).
pub const MAX_ITEMS: usize = 1000;
/// How long a batch may compute before the rest of its items are given up (below
/// `runtime-host`'s default request deadline of 30 s).
pub const TIME_BUDGET: Duration = Duration::from_secs(20);
/// The batch field of a text request, and the field each item becomes.
pub const TEXTS: (&str, &str) = ("texts", "text");
/// The batch field of a tabular request, and the field each item becomes.
pub const ROWS: (&str, &str) = ("rows", "features");

/// The batch fields of `input_type`, each with the single field its items become: a picture
/// or sound model takes a list of files (`images`) or of URLs (`image_urls`).
pub fn fields(input_type: InputType) -> &'static [(&'static str, &'static str)] {
    match input_type {
        InputType::Text => &[TEXTS],
        InputType::Tabular => &[ROWS],
        InputType::Image => &[("images", "image"), ("image_urls", "image_url")],
        InputType::Audio => &[("audios", "audio"), ("audio_urls", "audio_url")],
    }
}

/// The items of a batch request, each as the `data` a single request would carry; `None` for
/// a single request.
pub fn split(
    input_type: InputType,
    data: &Map<String, Value>,
    max: usize,
) -> Result<Option<Vec<Map<String, Value>>>, ApiError> {
    let pairs = fields(input_type);
    let present: Vec<&(&str, &str)> = pairs
        .iter()
        .filter(|(many, _)| data.contains_key(*many))
        .collect();
    let (many, one) = match present[..] {
        [] => return Ok(None),
        [pair] => *pair,
        _ => {
            let names: Vec<String> = present.iter().map(|(m, _)| format!("data.{m}")).collect();
            let message = format!("send one list per request, not {}", names.join(" and "));
            return Err(ApiError::invalid(&names[1], message));
        }
    };
    let list = &data[many];
    let field = format!("data.{many}");
    let singles: Vec<&str> = pairs.iter().map(|(_, one)| *one).collect();
    if let Some(single) = singles
        .iter()
        .find(|o| data.contains_key(**o))
        .or_else(|| (one == "text" && data.contains_key("smiles")).then_some(&"smiles"))
    {
        let message = format!("send data.{single} (one input) or data.{many} (a list), not both");
        return Err(ApiError::invalid(&field, message));
    }
    let items = list
        .as_array()
        .ok_or_else(|| ApiError::invalid(&field, "must be an array"))?;
    if items.is_empty() || items.len() > max {
        let message = format!("holds {} items; send 1 to {max} per request", items.len());
        return Err(ApiError::invalid(&field, message));
    }
    let shared: Map<String, Value> = data
        .iter()
        .filter(|(k, _)| k.as_str() != many)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let split = items
        .iter()
        .map(|item| {
            let mut data = shared.clone();
            data.insert(one.to_owned(), item.clone());
            data
        })
        .collect();
    Ok(Some(split))
}

/// Why an item a batch did not reach within [`TIME_BUDGET`] has no result.
pub fn not_computed() -> String {
    format!(
        "not computed: the batch ran past its {} s budget; send fewer items per request",
        TIME_BUDGET.as_secs()
    )
}

/// One item's answer, shaped like a single prediction's fields.
pub fn item(outcome: Result<Value, String>) -> Value {
    match outcome {
        Ok(results) => json!({"success": true, "results": results, "error_message": null}),
        Err(message) => json!({"success": false, "results": {}, "error_message": message}),
    }
}

/// The `results` of a batch: its items, how many there were and how many failed.
pub fn results(items: Vec<Value>) -> (Value, usize) {
    let failed = items.iter().filter(|i| i["success"] != json!(true)).count();
    let count = items.len();
    (
        json!({"items": items, "count": count, "failed": failed}),
        failed,
    )
}

/// The JSON Schema of a batch's `data` for a model whose single `data` is `single`: the list
/// field (its items typed as the single field is, where the schema says so) beside the
/// single request's other fields.
pub fn data_schema(input_type: InputType, single: &Value, max: usize) -> Vec<Value> {
    let pairs = fields(input_type);
    pairs
        .iter()
        .map(|(many, one)| list_schema(pairs, many, one, single, max))
        .collect()
}

/// The batch form of list `many`, whose items are as `one` would be.
fn list_schema(pairs: &[(&str, &str)], many: &str, one: &str, single: &Value, max: usize) -> Value {
    // Any JSON value, as the server takes it: an item that is not a valid `one` (another
    // type, too long, unparsable) fails alone in `results.items`; the batch is still 200.
    let shape = single["properties"]
        .get(one)
        .and_then(|s| s.get("type"))
        .map_or_else(|| "a valid input".to_owned(), |t| format!("of type {t}"));
    let item = json!({
        "description": format!(
            "One input, as `{one}` would be ({shape}); an item that is not one fails alone: \
             its entry in `results.items` has `success: false` and says why."
        ),
    });
    // The fields beside the items go to every item, and are checked there: a value the
    // model refuses fails each item alone (the batch is still 200), so any value is taken.
    let mut properties: Map<String, Value> = single["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| k != "smiles" && !pairs.iter().any(|(_, o)| k == o))
        .map(|(k, schema)| {
            let shape = schema
                .get("type")
                .map_or_else(String::new, |t| format!(" (of type {t})"));
            let described = format!(
                "As in a single request{shape}, for every item; a value the model refuses \
                 fails each item alone."
            );
            (k, json!({ "description": described }))
        })
        .collect();
    properties.insert(
        many.to_owned(),
        json!({
            "type": "array", "minItems": 1, "maxItems": max, "items": item,
            "description": format!("A batch: one input per item, each as `{one}` would be; answered in order in `results.items`."),
        }),
    );
    // Other fields go to every item too, and an item refuses what its model does not know:
    // each item fails alone, so the batch form is open to them.
    // One input and a batch at once is refused whole (400), as are two lists.
    let mut refused: Vec<Value> = pairs
        .iter()
        .flat_map(|(m, o)| [*o, *m])
        .filter(|f| *f != many)
        .map(|f| json!({"required": [f]}))
        .collect();
    if one == "text" {
        refused.push(json!({"required": ["smiles"]}));
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": [many],
        "not": {"anyOf": refused},
        "description": "A batch: every field beside the items goes to each item; a field or \
                        value the model refuses fails each item alone (the answer is still 200).",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn splits_a_batch_into_single_requests_sharing_the_other_fields() {
        let data = map(json!({"texts": ["CCO", "c1ccccc1"], "property": "logp"}));
        let items = split(InputType::Text, &data, MAX_ITEMS).unwrap().unwrap();
        assert_eq!(
            items,
            [
                map(json!({"text": "CCO", "property": "logp"})),
                map(json!({"text": "c1ccccc1", "property": "logp"}))
            ]
        );
        let rows = map(json!({"rows": [{"a": 1}, [1, 2]]}));
        let items = split(InputType::Tabular, &rows, MAX_ITEMS)
            .unwrap()
            .unwrap();
        assert_eq!(items[1], map(json!({"features": [1, 2]})));
        // A single request is not a batch.
        assert!(
            split(InputType::Text, &map(json!({"text": "CCO"})), MAX_ITEMS)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn refuses_what_is_no_batch() {
        for data in [
            json!({"texts": "CCO"}),
            json!({"texts": []}),
            json!({"texts": ["C"], "text": "C"}),
            json!({"texts": ["C"], "smiles": "C"}),
            json!({"texts": vec!["C"; MAX_ITEMS + 1]}),
        ] {
            let e = split(InputType::Text, &map(data.clone()), MAX_ITEMS).unwrap_err();
            assert!(e.message.contains("data.texts"), "{data}: {}", e.message);
        }
    }

    #[test]
    fn counts_the_failed_items() {
        let (results, failed) = results(vec![item(Ok(json!({"x": 1}))), item(Err("bad".into()))]);
        assert_eq!(failed, 1);
        assert_eq!(results["count"], 2);
        assert_eq!(results["items"][1]["error_message"], "bad");
    }
}
