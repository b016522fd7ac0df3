//! What v1.2 `/predict` answers for a case's items, and the assertion that an inference's
//! outputs hold the same values, item by item. Where each output is in a v1.2 result is said
//! here from the interfaces' documents, not taken from the component's signature.

use super::wire::Output;
use super::{Case, Deployment};
use e2e_tests::Client;
use serde_json::{Value, json};

/// Each item's v1.2 `results`, from one `/predict` of the case's batch.
pub async fn predict_items(c: &Client, d: &Deployment, case: &Case) -> Vec<Value> {
    let request = json!({"input_type": case.input_type, "data": case.v12_batch});
    let r = c.post_json(&d.host.url("/predict"), &request, None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(v["results"]["failed"], 0, "{v}");
    v["results"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["results"].clone())
        .collect()
}

/// Output `name`'s values for one v1.2 result: a classifier's label and its values per label
/// (in the order of the metadata's `labels`), the embedding's numbers, a flag or the value at
/// the top of the result, or else molprop's property of that name.
fn v12_values(name: &str, labels: Option<&Value>, result: &Value) -> Vec<Value> {
    if let Some(labels) = labels {
        let per_label = &result[name];
        return labels
            .as_array()
            .unwrap()
            .iter()
            .map(|l| per_label[l.as_str().unwrap()].clone())
            .collect();
    }
    match name {
        "label" => vec![result["prediction"].clone()],
        "embedding" => result["embedding"].as_array().unwrap().clone(),
        top if result.get(top).is_some() => vec![result[top].clone()],
        property => vec![result["prediction"][property].clone()],
    }
}

/// The same value: numbers by value (a count 3 and an FP64 3.0), the rest exactly.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Asserts `outputs` answer the v1.2 `items`, item by item; `metadata` gives each output's
/// labels.
pub fn assert_same_as_predict(outputs: &[Output], metadata: &Value, items: &[Value]) {
    for o in outputs {
        let described = metadata["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == o.name.as_str())
            .unwrap_or_else(|| panic!("{} is not in the metadata", o.name));
        let labels = described.get("parameters").and_then(|p| p.get("labels"));
        assert_eq!(o.shape[0], items.len() as i64, "{}", o.name);
        let width: i64 = o.shape[1..].iter().product();
        assert_eq!(o.data.len() as i64, o.shape[0] * width, "{}", o.name);
        for (i, (got, result)) in o.data.chunks(width as usize).zip(items).enumerate() {
            let expected = v12_values(&o.name, labels, result);
            assert_eq!(got.len(), expected.len(), "{} item {i}", o.name);
            for (g, e) in got.iter().zip(&expected) {
                assert!(
                    same(g, e),
                    "{} item {i}: {g} where /predict says {e}",
                    o.name
                );
            }
        }
    }
}

/// Asserts two answers' outputs hold the same values (one in JSON, one in binary, say).
pub fn assert_same_outputs(a: &[Output], b: &[Output]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(
            (&x.name, &x.datatype, &x.shape),
            (&y.name, &y.datatype, &y.shape)
        );
        assert_eq!(x.data.len(), y.data.len(), "{}", x.name);
        for (u, v) in x.data.iter().zip(&y.data) {
            assert!(same(u, v), "{}: {u} and {v}", x.name);
        }
    }
}
