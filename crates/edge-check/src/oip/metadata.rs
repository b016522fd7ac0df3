//! The shapes of the protocol's metadata answers, judged field by field: what a client reads
//! from them (names, datatypes, shapes) must be there and of the right kind, or the client
//! cannot build a request.

use super::tensor::DATATYPES;
use serde_json::Value;

/// One tensor a model's metadata declares.
#[derive(Debug, Clone)]
pub struct Tensor {
    pub name: String,
    pub datatype: String,
    pub shape: Vec<i64>,
}

/// Problems of `GET /v2`'s answer: `name` and `version` strings, `extensions` strings.
pub fn server(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for field in ["name", "version"] {
        if !v[field].is_string() {
            problems.push(format!("{field}: expected a string, got {}", v[field]));
        }
    }
    match v["extensions"].as_array() {
        Some(list) if list.iter().all(Value::is_string) => {}
        _ => problems.push(format!(
            "extensions: expected an array of strings, got {}",
            v["extensions"]
        )),
    }
    problems
}

/// The inputs and outputs of a model's metadata, and every problem of its shape (the name
/// must be `name`; `versions`, where present, strings; `platform` a string; each tensor a
/// name, one of the 13 datatypes, and a shape of integers, -1 for a variable dimension).
pub fn model(v: &Value, name: &str) -> (Vec<Tensor>, Vec<Tensor>, Vec<String>) {
    let mut problems = Vec::new();
    if v["name"].as_str() != Some(name) {
        problems.push(format!("name: expected \"{name}\", got {}", v["name"]));
    }
    if let Some(versions) = v.get("versions")
        && !versions
            .as_array()
            .is_some_and(|l| l.iter().all(Value::is_string))
    {
        problems.push(format!(
            "versions: expected an array of strings, got {versions}"
        ));
    }
    if !v["platform"].is_string() {
        problems.push(format!(
            "platform: expected a string, got {}",
            v["platform"]
        ));
    }
    let inputs = tensors(v, "inputs", &mut problems);
    let outputs = tensors(v, "outputs", &mut problems);
    if inputs.is_empty() && problems.is_empty() {
        problems.push("inputs: a model needs at least one".into());
    }
    (inputs, outputs, problems)
}

fn tensors(v: &Value, field: &str, problems: &mut Vec<String>) -> Vec<Tensor> {
    let Some(list) = v[field].as_array() else {
        problems.push(format!("{field}: expected an array, got {}", v[field]));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let name = t["name"].as_str();
        let datatype = t["datatype"].as_str();
        let shape: Option<Vec<i64>> = t["shape"]
            .as_array()
            .and_then(|dims| dims.iter().map(Value::as_i64).collect());
        if name.is_none() {
            problems.push(format!("{at}.name: expected a string, got {}", t["name"]));
        }
        let named = name.unwrap_or("?");
        let datatype = datatype.filter(|d| DATATYPES.contains(d));
        match datatype {
            Some(_) => {}
            None => problems.push(format!(
                "{at} ({named}).datatype: expected one of {}, got {}",
                DATATYPES.join(", "),
                t["datatype"]
            )),
        }
        let shape = shape.filter(|dims| dims.iter().all(|d| *d >= -1));
        match &shape {
            Some(_) => {}
            None => problems.push(format!(
                "{at} ({named}).shape: expected an array of integers (-1 for a variable dimension), got {}",
                t["shape"]
            )),
        }
        if let (Some(name), Some(datatype), Some(shape)) = (name, datatype, shape) {
            out.push(Tensor {
                name: name.to_owned(),
                datatype: datatype.to_owned(),
                shape,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrong_datatype_and_a_fractional_dimension_are_named() {
        let v = json!({"name": "m", "versions": ["1"], "platform": "onnx",
            "inputs": [{"name": "x", "datatype": "FLOAT32", "shape": [-1, 4]}],
            "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1, 1.5]}]});
        let (inputs, outputs, problems) = model(&v, "m");
        assert!(inputs.is_empty() && outputs.is_empty());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("inputs[0] (x).datatype") && problems[0].contains("FLOAT32"));
        assert!(problems[1].contains("outputs[0] (y).shape"));
    }

    #[test]
    fn a_good_metadata_passes_and_the_name_must_match() {
        let v = json!({"name": "m", "platform": "onnx",
            "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 4]}],
            "outputs": [{"name": "y", "datatype": "INT64", "shape": [-1]}]});
        let (inputs, outputs, problems) = model(&v, "m");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((inputs[0].shape.clone(), outputs.len()), (vec![-1, 4], 1));
        assert!(model(&v, "other").2[0].contains("name"));
        assert!(server(&json!({"name": "s", "version": "1", "extensions": []})).is_empty());
        assert_eq!(server(&json!({"name": "s"})).len(), 2);
    }
}
