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
        let want = expected(name, meta, results)
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

/// The elements output `name` must hold for one item whose v1.2 results are `results`.
fn expected(name: &str, meta: &Value, results: &Value) -> Result<Vec<Value>, String> {
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
