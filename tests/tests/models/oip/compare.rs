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

/// The elements output `name` (described by `meta`, its metadata) must hold for one item
/// whose v1.2 results are `results`: the whole results for the generic `results`; a
/// classifier's label; one value per label, in the order of the metadata's `labels`; else
/// the results' field of that name (an array for a row), or molprop's property of that name.
/// Shared by the tests built here and the standard clients' (`oip_clients`), so both hold
/// the answers to one reading of the interfaces.
pub fn v12_elements(name: &str, meta: &Value, results: &Value) -> Result<Vec<Value>, String> {
    if name == "results" {
        return Ok(vec![results.clone()]);
    }
    if name == "label" {
        return Ok(vec![results["prediction"].clone()]);
    }
    if let Some(labels) = meta["parameters"]["labels"].as_array() {
        let per_label = results[name]
            .as_object()
            .ok_or_else(|| format!("v1.2 has no object '{name}'"))?;
        return labels
            .iter()
            .map(|l| {
                let label = l.as_str().unwrap_or_default();
                per_label
                    .get(label)
                    .cloned()
                    .ok_or_else(|| format!("v1.2's '{name}' has no label {label}"))
            })
            .collect();
    }
    let found = results
        .get(name)
        .or_else(|| results["prediction"].get(name))
        .ok_or_else(|| format!("v1.2 has no field for output '{name}'"))?;
    Ok(match found {
        Value::Array(many) => many.clone(),
        one => vec![one.clone()],
    })
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
        assert_eq!(o.shape[0], items.len() as i64, "{}", o.name);
        let width: i64 = o.shape[1..].iter().product();
        assert_eq!(o.data.len() as i64, o.shape[0] * width, "{}", o.name);
        for (i, (got, result)) in o.data.chunks(width as usize).zip(items).enumerate() {
            let expected = v12_elements(&o.name, described, result)
                .unwrap_or_else(|e| panic!("{} item {i}: {e}", o.name));
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
