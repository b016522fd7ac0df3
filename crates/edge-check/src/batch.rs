//! Rule `B.predict.batch` (WARN only: the specification has no batches): a deployment whose
//! own `/openapi.json` says a prediction's `results` may be a `BatchResults` (as every model
//! of the project's model SDK that takes batches does) answers its test examples sent as one batch, in order, each item as the
//! same input gets alone. Deployments that document no batches are not judged.

use super::examples::request_for;
use super::report::{Level, Report};
use super::{Probe, json_of};
use hyper::Method;
use serde_json::{Map, Value, json};

/// The batch field and the single field it stands for, by input type.
const FORMS: [(&str, &str, &str); 4] = [
    ("text", "texts", "text"),
    ("tabular", "rows", "features"),
    ("image", "images", "image"),
    ("audio", "audios", "audio"),
];

pub async fn check(probe: &Probe<'_>, report: &mut Report, caps: &Value, examples: &Value) {
    let documents_batches = match probe.call(Method::GET, "/openapi.json", None).await {
        Ok(r) if r.status == 200 => json_of(&r)
            .map(|doc| {
                let results =
                    &doc["components"]["schemas"]["PredictionResponse"]["properties"]["results"];
                results
                    .to_string()
                    .contains("#/components/schemas/BatchResults")
            })
            .unwrap_or(false),
        _ => false,
    };
    if !documents_batches {
        return;
    }
    let description = "the test examples sent as one batch are answered in order, each as alone";
    let problems = match batch_of_examples(caps, examples) {
        None => vec!["no two test examples share an input type and fields to batch".into()],
        Some((request, singles)) => judge(probe, request, singles).await,
    };
    report.rule("B.predict.batch", Level::Should, description, problems);
}

/// The batch request of the examples that differ only in their input (those like the first
/// one), and the single requests it stands for.
fn batch_of_examples(caps: &Value, examples: &Value) -> Option<(Value, Vec<Value>)> {
    let format = &examples["usage_instructions"]["body_format"];
    let requests: Vec<Value> = examples["examples"]
        .as_array()?
        .iter()
        .map(|ex| request_for(format, ex, caps))
        .collect();
    let first = requests.first()?;
    let input_type = first["input_type"].as_str()?;
    let (_, many, one) = FORMS.iter().find(|(t, _, _)| *t == input_type)?;
    let rest = |r: &Value| {
        let mut data = r["data"].as_object().cloned().unwrap_or_default();
        data.remove(*one);
        (r["input_type"].clone(), data)
    };
    let singles: Vec<Value> = requests
        .iter()
        .filter(|r| r["data"].get(*one).is_some() && rest(r) == rest(first))
        .cloned()
        .collect();
    if singles.len() < 2 {
        return None;
    }
    let mut data: Map<String, Value> = rest(first).1;
    let inputs: Vec<Value> = singles.iter().map(|r| r["data"][*one].clone()).collect();
    data.insert((*many).to_owned(), Value::Array(inputs));
    Some((json!({"input_type": input_type, "data": data}), singles))
}

async fn judge(probe: &Probe<'_>, request: Value, singles: Vec<Value>) -> Vec<String> {
    let answer = match probe.json(Method::POST, "/predict", Some(request)).await {
        Ok((200, v)) => v,
        Ok((status, v)) => return vec![format!("expected 200, got {status}: {v}")],
        Err(e) => return vec![e],
    };
    let mut problems = probe.shape(&Method::POST, "/predict", 200, &answer);
    let items = answer["results"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if items.len() != singles.len() {
        let (got, sent) = (items.len(), singles.len());
        problems.push(format!(
            "results.items: {got} items for {sent} inputs: {answer}"
        ));
        return problems;
    }
    for (i, (item, single)) in items.iter().zip(singles).enumerate() {
        let alone = match probe.json(Method::POST, "/predict", Some(single)).await {
            Ok((_, v)) => v,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        for field in ["success", "results", "error_message"] {
            if item[field] != alone[field] {
                let (batched, single) = (&item[field], &alone[field]);
                problems.push(format!(
                    "results.items[{i}].{field}: {batched} in the batch, {single} alone"
                ));
            }
        }
    }
    problems
}
