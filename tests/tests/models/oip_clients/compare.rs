//! One client answer against v1.2's: the outputs asked for, each with the metadata's
//! datatype and a shape of the batch, and each item's elements equal to what that item's
//! v1.2 `results` hold where the output says it comes from:
//! - `results` BYTES (the generic signature): the whole results, as JSON text;
//! - `label` BYTES: `results.prediction` (a classifier's label);
//! - an output whose metadata lists `labels` (`probabilities`, `decision_scores`): the
//!   results' object of that name, one value per label in that order;
//! - any other output: the results' field of its name (`prediction`, `in_domain`,
//!   `in_reliable_range`, `embedding`), else the member of that name of an object
//!   `prediction` (molprop's properties).
//!
//! FP64 and the integer types are compared exactly (both paths carry the same `f64`), FP32
//! after rounding v1.2's number to `f32` (what the tensor holds).

use super::plan::Plan;
use crate::models::oip::compare::v12_elements;
use serde_json::Value;

/// What differs between `answer` (one client and mode, as oip_clients.py prints it) and v1.2.
pub fn answer(plan: &Plan, answer: &Value) -> Vec<String> {
    let mode = answer["mode"].as_str().unwrap_or_default();
    let wanted: Vec<String> = match mode.strip_prefix("alone:") {
        Some(one) => vec![one.to_owned()],
        None => plan.output_names(),
    };
    let got = answer["outputs"].as_object().cloned().unwrap_or_default();
    let mut problems = Vec::new();
    let mut names: Vec<&String> = got.keys().collect();
    names.sort();
    let mut expected_names: Vec<&String> = wanted.iter().collect();
    expected_names.sort();
    if names != expected_names {
        problems.push(format!("outputs {names:?}, asked for {expected_names:?}"));
    }
    for name in &wanted {
        let Some(output) = got.get(name) else {
            continue;
        };
        if let Err(problem) = one_output(plan, name, output) {
            problems.push(format!("output '{name}': {problem}"));
        }
    }
    problems
}

fn one_output(plan: &Plan, name: &str, output: &Value) -> Result<(), String> {
    let meta = plan.metadata["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .ok_or("not in the metadata")?;
    let datatype = meta["datatype"].as_str().unwrap();
    if output["datatype"] != datatype {
        return Err(format!(
            "datatype {}, the metadata says {datatype}",
            output["datatype"]
        ));
    }
    let n = plan.expected.len();
    let shape: Vec<i64> = output["shape"]
        .as_array()
        .ok_or("no shape")?
        .iter()
        .map(|d| d.as_i64().unwrap_or(-2))
        .collect();
    let meta_shape: Vec<i64> = meta["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    let fits = shape.len() == meta_shape.len()
        && shape.first() == Some(&(n as i64))
        && shape
            .iter()
            .zip(&meta_shape)
            .skip(1)
            .all(|(d, m)| *m == -1 || d == m);
    if !fits {
        return Err(format!(
            "shape {shape:?} for {n} items; the metadata says {meta_shape:?}"
        ));
    }
    let data = output["data"].as_array().ok_or("no data")?;
    let per_item: usize = shape[1..].iter().map(|d| *d as usize).product();
    if data.len() != n * per_item {
        return Err(format!("{} elements for shape {shape:?}", data.len()));
    }
    for (i, results) in plan.expected.iter().enumerate() {
        let want = v12_elements(name, meta, results)
            .map_err(|e| format!("item {i}: {e} (v1.2 results: {results})"))?;
        let got = &data[i * per_item..(i + 1) * per_item];
        if want.len() != got.len() {
            return Err(format!(
                "item {i}: {} elements where v1.2 has {}",
                got.len(),
                want.len()
            ));
        }
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            if !same(datatype, g, w) {
                return Err(format!("item {i} element {k}: {g}, where v1.2 answers {w}"));
            }
        }
    }
    Ok(())
}

/// Whether the client's element `got` is v1.2's `want` as a `datatype` element.
fn same(datatype: &str, got: &Value, want: &Value) -> bool {
    match datatype {
        // The generic output: the whole results as JSON text.
        "BYTES" if want.is_object() => got
            .as_str()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .is_some_and(|parsed| &parsed == want),
        "BYTES" => got.as_str().is_some() && got.as_str() == want.as_str(),
        "BOOL" => got.as_bool().is_some() && got.as_bool() == want.as_bool(),
        "FP32" => match (got.as_f64(), want.as_f64()) {
            (Some(g), Some(w)) => g as f32 == w as f32,
            _ => false,
        },
        _ => match (got.as_f64(), want.as_f64()) {
            (Some(g), Some(w)) => g == w,
            _ => false,
        },
    }
}

/// The comparison itself, on answers made up here: it must catch what it is for.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// iris-like: a label, per-label probabilities (labels in the metadata), a flag.
    fn plan() -> Plan {
        Plan {
            model: "iris".into(),
            metadata: json!({"outputs": [
                {"name": "label", "datatype": "BYTES", "shape": [-1]},
                {"name": "probabilities", "datatype": "FP64", "shape": [-1, 2],
                 "parameters": {"labels": ["a", "b"]}},
                {"name": "in_domain", "datatype": "BOOL", "shape": [-1]},
                {"name": "embedding", "datatype": "FP32", "shape": [-1, 2]},
            ]}),
            inputs: Vec::new(),
            expected: vec![
                json!({"prediction": "b", "probabilities": {"a": 0.25, "b": 0.75},
                       "in_domain": true, "embedding": [0.1, 0.2]}),
                json!({"prediction": "a", "probabilities": {"a": 0.875, "b": 0.125},
                       "in_domain": false, "embedding": [0.3, 0.4]}),
            ],
        }
    }

    fn answer_with(outputs: Value) -> Value {
        json!({"client": "tritonclient", "mode": "binary", "outputs": outputs})
    }

    fn right() -> Value {
        json!({
            "label": {"datatype": "BYTES", "shape": [2], "data": ["b", "a"]},
            "probabilities": {"datatype": "FP64", "shape": [2, 2],
                              "data": [0.25, 0.75, 0.875, 0.125]},
            "in_domain": {"datatype": "BOOL", "shape": [2], "data": [true, false]},
            // As f32 widened: equal to v1.2's numbers once both are f32.
            "embedding": {"datatype": "FP32", "shape": [2, 2],
                          "data": [f64::from(0.1f32), f64::from(0.2f32),
                                   f64::from(0.3f32), f64::from(0.4f32)]},
        })
    }

    #[test]
    fn the_same_answers_pass() {
        assert_eq!(answer(&plan(), &answer_with(right())), Vec::<String>::new());
    }

    #[test]
    fn a_wrong_value_a_swapped_label_or_a_missing_output_is_found() {
        let cases = [
            ("/probabilities/data/1", json!(0.7500001)),
            ("/label/data/0", json!("a")),
            ("/in_domain/data/1", json!(true)),
            ("/embedding/data/3", json!(0.41)),
            ("/probabilities/shape", json!([2, 3])),
            ("/label/datatype", json!("FP64")),
        ];
        for (pointer, wrong) in cases {
            let mut outputs = right();
            *outputs.pointer_mut(pointer).unwrap() = wrong;
            let problems = answer(&plan(), &answer_with(outputs));
            assert!(!problems.is_empty(), "{pointer} went unnoticed");
        }
        let mut outputs = right();
        outputs.as_object_mut().unwrap().remove("in_domain");
        assert!(!answer(&plan(), &answer_with(outputs)).is_empty());
    }

    #[test]
    fn an_output_alone_is_compared_alone_and_the_generic_results_as_json() {
        let alone = json!({"client": "kserve", "mode": "alone:in_domain",
                           "outputs": {"in_domain": right()["in_domain"].clone()}});
        assert_eq!(answer(&plan(), &alone), Vec::<String>::new());
        let mut generic = plan();
        generic.metadata = json!({"outputs": [
            {"name": "results", "datatype": "BYTES", "shape": [-1]}]});
        let texts: Vec<String> = generic.expected.iter().map(|r| r.to_string()).collect();
        let outputs = json!({"results": {"datatype": "BYTES", "shape": [2], "data": texts}});
        assert_eq!(
            answer(&generic, &answer_with(outputs)),
            Vec::<String>::new()
        );
        let outputs = json!({"results": {"datatype": "BYTES", "shape": [2],
                                         "data": [texts[1], texts[0]]}});
        assert!(!answer(&generic, &answer_with(outputs)).is_empty());
    }
}
