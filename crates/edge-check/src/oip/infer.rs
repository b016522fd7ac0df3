//! An inference request built from nothing but a model's metadata (and, for inputs zeros
//! cannot stand for, the sample values its `/test_examples` publishes), sent as JSON and as
//! binary tensors, and the answers read back into values the rules compare.

use super::metadata::Tensor;
use super::tensor::{self, flatten, width, zero};
use serde_json::{Map, Value, json};

/// The `id` every request carries; the answer must echo it.
pub const REQUEST_ID: &str = "oip-check-1";
/// Triton's header: the length of the JSON at the start of a body with binary tensors.
pub const HEADER_LENGTH: &str = "inference-header-content-length";

/// One input's tensor, ready to send.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub datatype: String,
    pub shape: Vec<i64>,
    pub values: Vec<Value>,
}

/// One output tensor of an answer, its elements flat.
#[derive(Debug, Clone)]
pub struct Output {
    pub name: String,
    pub datatype: String,
    pub shape: Vec<i64>,
    pub values: Vec<Value>,
}

/// Each input's tensor: zeros (every -1 as 1) for numbers; for BYTES, or for a variable
/// row length, the value the examples give under the input's name. `Err` says why no
/// request can be built (a BYTES input without a sample value).
pub fn inputs(declared: &[Tensor], examples: Option<&Value>) -> Result<Vec<Input>, String> {
    declared
        .iter()
        .map(|t| {
            let sample = examples.and_then(|e| sample(e, &t.name));
            let fixed: Vec<i64> = t.shape.iter().map(|d| if *d < 0 { 1 } else { *d }).collect();
            let variable_row = t.shape.iter().skip(1).any(|d| *d < 0);
            match (t.datatype.as_str(), sample) {
                ("BYTES", Some(Value::String(text))) => Ok(Input {
                    values: vec![json!(text)],
                    ..input(t, fixed)
                }),
                ("BYTES", _) => Err(format!(
                    "BYTES input '{}' has no sample value (no example field '{}' in /test_examples)",
                    t.name, t.name
                )),
                (_, Some(Value::Array(row))) if variable_row && t.shape.len() == 2 => {
                    let values = flatten(&Value::Array(row));
                    Ok(Input {
                        shape: vec![1, values.len() as i64],
                        values,
                        ..input(t, fixed)
                    })
                }
                _ => {
                    let count = fixed.iter().product::<i64>().max(0) as usize;
                    Ok(Input {
                        values: vec![zero(&t.datatype); count],
                        ..input(t, fixed)
                    })
                }
            }
        })
        .collect()
}

fn input(t: &Tensor, shape: Vec<i64>) -> Input {
    Input {
        name: t.name.clone(),
        datatype: t.datatype.clone(),
        shape,
        values: Vec::new(),
    }
}

/// The first value under `key` in the first example that has one (searched at any depth).
fn sample(examples: &Value, key: &str) -> Option<Value> {
    fn find(v: &Value, key: &str) -> Option<Value> {
        match v {
            Value::Object(map) => map
                .get(key)
                .cloned()
                .or_else(|| map.values().find_map(|m| find(m, key))),
            Value::Array(items) => items.iter().find_map(|i| find(i, key)),
            _ => None,
        }
    }
    find(&examples["examples"], key)
}

/// The request with every tensor in JSON, asking for every declared output by name.
pub fn json_request(inputs: &[Input], outputs: &[Tensor]) -> Vec<u8> {
    let inputs: Vec<Value> = inputs
        .iter()
        .map(
            |i| json!({"name": i.name, "shape": i.shape, "datatype": i.datatype, "data": i.values}),
        )
        .collect();
    let outputs: Vec<Value> = outputs.iter().map(|o| json!({"name": o.name})).collect();
    json!({"id": REQUEST_ID, "inputs": inputs, "outputs": outputs})
        .to_string()
        .into_bytes()
}

/// The same request with number inputs and every output in binary (BYTES inputs stay JSON:
/// a BYTES input may be a file that JSON carries as base64 and binary as raw bytes, so the
/// example's text means the same only in JSON). Gives the body and the JSON's length.
pub fn binary_request(inputs: &[Input], outputs: &[Tensor]) -> Result<(Vec<u8>, usize), String> {
    let mut binary = Vec::new();
    let mut described = Vec::new();
    for i in inputs {
        let mut t = json!({"name": i.name, "shape": i.shape, "datatype": i.datatype});
        if width(&i.datatype).is_some() {
            let bytes = tensor::encode(&i.datatype, &i.values)?;
            t["parameters"] = json!({"binary_data_size": bytes.len()});
            binary.extend(bytes);
        } else {
            t["data"] = json!(i.values);
        }
        described.push(t);
    }
    let outputs: Vec<Value> = outputs
        .iter()
        .map(|o| json!({"name": o.name, "parameters": {"binary_data": true}}))
        .collect();
    let header = json!({"id": REQUEST_ID, "inputs": described, "outputs": outputs}).to_string();
    let length = header.len();
    let mut body = header.into_bytes();
    body.extend(binary);
    Ok((body, length))
}

/// The answer's JSON (its `model_name`, `id`...) and its outputs, binary ones decoded in
/// the order they come. `header_length` is the answer's `Inference-Header-Content-Length`.
pub fn read(body: &[u8], header_length: Option<&str>) -> Result<(Value, Vec<Output>), String> {
    let (head, mut binary) = match header_length {
        None => (body, &body[body.len()..]),
        Some(n) => {
            let n: usize = n
                .trim()
                .parse()
                .map_err(|_| format!("{HEADER_LENGTH} is not a length: {n:?}"))?;
            if n > body.len() {
                return Err(format!(
                    "{HEADER_LENGTH} says {n} bytes of JSON, the body has {}",
                    body.len()
                ));
            }
            body.split_at(n)
        }
    };
    let answer: Value = serde_json::from_slice(head).map_err(|_| {
        format!(
            "the answer is not JSON: {}",
            String::from_utf8_lossy(&head[..head.len().min(300)])
        )
    })?;
    let Some(list) = answer["outputs"].as_array() else {
        return Err(format!(
            "outputs: expected an array, got {}",
            answer["outputs"]
        ));
    };
    let mut outputs = Vec::new();
    for (i, o) in list.iter().enumerate() {
        let name = o["name"].as_str().unwrap_or("?").to_owned();
        let datatype = o["datatype"].as_str().unwrap_or("?").to_owned();
        let shape: Vec<i64> = o["shape"]
            .as_array()
            .and_then(|d| d.iter().map(Value::as_i64).collect())
            .ok_or_else(|| {
                format!(
                    "outputs[{i}] ({name}).shape: expected integers, got {}",
                    o["shape"]
                )
            })?;
        let size = o["parameters"]
            .as_object()
            .and_then(|p: &Map<String, Value>| p.get("binary_data_size"))
            .and_then(Value::as_u64);
        let values = match size {
            Some(n) => {
                let n = n as usize;
                if n > binary.len() {
                    return Err(format!(
                        "outputs[{i}] ({name}): binary_data_size {n}, but {} bytes are left",
                        binary.len()
                    ));
                }
                let (mine, rest) = binary.split_at(n);
                binary = rest;
                tensor::decode(&datatype, mine)
                    .map_err(|e| format!("outputs[{i}] ({name}): {e}"))?
            }
            None if o.get("data").is_some() => flatten(&o["data"]),
            None => {
                return Err(format!(
                    "outputs[{i}] ({name}): neither data nor binary_data_size"
                ));
            }
        };
        outputs.push(Output {
            name,
            datatype,
            shape,
            values,
        });
    }
    Ok((answer, outputs))
}

/// Problems of an answer against the metadata: the model's name, the request's id, and each
/// declared output present with its datatype, its rank and fixed dimensions, and as many
/// elements as its shape says.
pub fn judge(answer: &Value, outputs: &[Output], declared: &[Tensor], model: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if answer["model_name"].as_str() != Some(model) {
        problems.push(format!(
            "model_name: expected \"{model}\", got {}",
            answer["model_name"]
        ));
    }
    if answer["id"].as_str() != Some(REQUEST_ID) {
        problems.push(format!(
            "id: expected the request's \"{REQUEST_ID}\", got {}",
            answer["id"]
        ));
    }
    for d in declared {
        let Some(o) = outputs.iter().find(|o| o.name == d.name) else {
            problems.push(format!(
                "output '{}' (asked for by name) is missing",
                d.name
            ));
            continue;
        };
        if o.datatype != d.datatype {
            problems.push(format!(
                "output '{}': datatype {}, the metadata says {}",
                d.name, o.datatype, d.datatype
            ));
        }
        let fits = o.shape.len() == d.shape.len()
            && o.shape.iter().zip(&d.shape).all(|(a, m)| *m < 0 || a == m);
        if !fits {
            problems.push(format!(
                "output '{}': shape {:?} does not fit the metadata's {:?}",
                d.name, o.shape, d.shape
            ));
        }
        let count = o.shape.iter().product::<i64>();
        if count != o.values.len() as i64 {
            problems.push(format!(
                "output '{}': shape {:?} holds {count} elements, the answer has {}",
                d.name,
                o.shape,
                o.values.len()
            ));
        }
    }
    problems
}

/// Problems of the binary answer against the JSON one: the same elements, output by output.
pub fn same_values(json: &[Output], binary: &[Output]) -> Vec<String> {
    let mut problems = Vec::new();
    for j in json {
        let Some(b) = binary.iter().find(|b| b.name == j.name) else {
            problems.push(format!(
                "output '{}' is missing from the binary answer",
                j.name
            ));
            continue;
        };
        if b.shape != j.shape || b.values.len() != j.values.len() {
            problems.push(format!(
                "output '{}': shape {:?} in binary, {:?} in JSON",
                j.name, b.shape, j.shape
            ));
            continue;
        }
        let differs = j
            .values
            .iter()
            .zip(&b.values)
            .position(|(x, y)| !tensor::same(&j.datatype, x, y));
        if let Some(at) = differs {
            problems.push(format!(
                "output '{}' element {at}: {} in binary, {} in JSON",
                j.name, b.values[at], j.values[at]
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, datatype: &str, shape: &[i64]) -> Tensor {
        Tensor {
            name: name.into(),
            datatype: datatype.into(),
            shape: shape.to_vec(),
        }
    }

    #[test]
    fn zeros_for_numbers_and_samples_for_bytes() {
        let examples = json!({"examples": [{"name": "e", "smiles": "CCO"}]});
        let declared = [t("x", "FP32", &[-1, 4]), t("smiles", "BYTES", &[-1])];
        let built = inputs(&declared, Some(&examples)).unwrap();
        assert_eq!(
            (built[0].shape.clone(), built[0].values.len()),
            (vec![1, 4], 4)
        );
        assert_eq!(built[1].values, [json!("CCO")]);
        let none = inputs(&declared, None).unwrap_err();
        assert!(none.contains("smiles"), "{none}");
    }

    #[test]
    fn a_binary_request_and_answer_read_back() {
        let built = inputs(&[t("x", "INT32", &[-1, 2])], None).unwrap();
        let (body, n) = binary_request(&built, &[t("y", "FP64", &[-1])]).unwrap();
        assert_eq!(body.len(), n + 8);
        let head = json!({"model_name": "m", "id": REQUEST_ID, "outputs": [
            {"name": "y", "datatype": "FP64", "shape": [1], "parameters": {"binary_data_size": 8}}]})
        .to_string();
        let mut answer = head.clone().into_bytes();
        answer.extend(2.5f64.to_le_bytes());
        let (v, outputs) = read(&answer, Some(&head.len().to_string())).unwrap();
        assert_eq!(outputs[0].values, [json!(2.5)]);
        assert!(judge(&v, &outputs, &[t("y", "FP64", &[-1])], "m").is_empty());
        let wrong = judge(&v, &outputs, &[t("y", "FP32", &[-1, 3])], "m");
        assert_eq!(wrong.len(), 2, "{wrong:?}");
        let json_side = [Output {
            values: vec![json!(2.0)],
            ..outputs[0].clone()
        }];
        assert!(same_values(&json_side, &outputs)[0].contains("element 0"));
    }
}
