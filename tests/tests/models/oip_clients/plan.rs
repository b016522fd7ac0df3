//! What the clients send a model, and what v1.2 answers for it: the model's own test
//! examples (v1.2 `/test_examples`), as the tensors its protocol metadata describes and as
//! one v1.2 batch to `/predict` on the same deployment.

use super::Target;
use e2e_tests::Client;
use serde_json::{Map, Value, json};

/// One model's inputs and the v1.2 results they must match.
pub struct Plan {
    pub model: String,
    /// `GET /v2/models/{name}` as the deployment answers it.
    pub metadata: Value,
    /// The input tensors, as oip_clients.py takes them.
    pub inputs: Vec<Value>,
    /// Each item's v1.2 `results`, in order.
    pub expected: Vec<Value>,
}

/// An input tensor's elements for one example, and whether they are a file (base64 here;
/// the script sends the raw bytes in binary).
struct Element {
    values: Vec<Value>,
    file: bool,
}

impl Plan {
    /// Reads `target`'s metadata and examples, and asks its v1.2 `/predict` for every
    /// example in one batch.
    pub async fn make(c: &Client, target: &Target) -> Plan {
        let model = &target.model;
        let meta = c.get(&format!("{}/v2/models/{model}", target.oip)).await;
        assert_eq!(
            meta.status,
            200,
            "{} metadata: {}",
            target.label,
            meta.text()
        );
        let metadata = meta.value();
        let examples = c.get(&format!("{}/test_examples", target.v1)).await.value();
        let caps = c.get(&format!("{}/capabilities", target.v1)).await.value();
        let input_type = caps["capabilities"][0]["input_types"][0]
            .as_str()
            .unwrap_or_else(|| panic!("{} capabilities: {caps}", target.label))
            .to_owned();
        let specs = metadata["inputs"].as_array().expect("metadata inputs");
        assert_eq!(
            specs.len(),
            1,
            "{}: every shipped model takes one tensor: {metadata}",
            target.label
        );
        let spec = &specs[0];
        let datatype = spec["datatype"].as_str().unwrap();
        let order = feature_order(model);
        let mut elements = Vec::new();
        let mut v1_items = Vec::new();
        for example in examples["examples"].as_array().expect("examples") {
            if let Some((element, v1)) = element(example, &input_type, datatype, &order) {
                elements.push(element);
                v1_items.push(v1);
            }
        }
        assert!(
            elements.len() >= 2,
            "{}: fewer than 2 examples fit the tensor {spec}: {examples}",
            target.label
        );
        let n = elements.len();
        let width = elements[0].values.len();
        let mut shape = vec![json!(n)];
        if spec["shape"].as_array().is_some_and(|s| s.len() == 2) {
            shape.push(json!(width));
        }
        let input = json!({
            "name": spec["name"],
            "datatype": datatype,
            "shape": shape,
            "data": elements.iter().flat_map(|e| e.values.clone()).collect::<Vec<_>>(),
            "file": elements[0].file,
        });
        let expected = predict(c, target, &input_type, v1_items).await;
        Plan {
            model: model.clone(),
            metadata,
            inputs: vec![input],
            expected,
        }
    }

    /// The script's call for this model at `url`: its inputs, every output named.
    pub fn call(&self, url: &str) -> Value {
        json!({
            "url": url,
            "model": self.model,
            "inputs": self.inputs,
            "outputs": self.output_names(),
        })
    }

    pub fn output_names(&self) -> Vec<String> {
        self.metadata["outputs"]
            .as_array()
            .expect("metadata outputs")
            .iter()
            .map(|o| o["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// How many answers the script gives for this model: tritonclient's 3 modes and one per
    /// output alone, kserve's 3 modes.
    pub fn modes(&self) -> usize {
        3 + self.output_names().len() + 3
    }
}

/// The order of a tabular model's features: its manifest's `[input] features`, the order the
/// protocol's row follows (v1.2 takes them by name).
fn feature_order(model: &str) -> Vec<String> {
    let dir = e2e_tests::workspace_root().join("models").join(model);
    let manifest = dir.join("model.toml");
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return Vec::new();
    };
    let table: toml::Table = toml::from_str(&text).unwrap();
    table
        .get("input")
        .and_then(|i| i.get("features"))
        .and_then(|f| f.as_array())
        .map(|f| f.iter().map(|n| n.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// One example as the tensor's element(s) and as the v1.2 batch item it is sent as; `None`
/// where the example does not carry what the tensor takes.
fn element(
    example: &Value,
    input_type: &str,
    datatype: &str,
    order: &[String],
) -> Option<(Element, Value)> {
    match input_type {
        "text" => {
            let text = example
                .get("smiles")
                .or_else(|| example.get("text"))?
                .clone();
            let element = Element {
                values: vec![text.clone()],
                file: false,
            };
            Some((element, text))
        }
        "image" | "audio" => {
            let file = example.get(input_type)?.clone();
            let element = Element {
                values: vec![file.clone()],
                file: true,
            };
            Some((element, file))
        }
        "tabular" => {
            // The tensor's precision: an FP32 row carries each value rounded to f32, and
            // v1.2 is sent the very same numbers.
            let exact = |v: &Value| {
                let v = v.as_f64().unwrap();
                match datatype {
                    "FP32" => json!(f64::from(v as f32)),
                    _ => json!(v),
                }
            };
            // v1.2 takes the features as the example gives them (by name), the tensor in
            // the manifest's order: the two orders must meet in the same row.
            let (row, v1): (Vec<Value>, Value) = match example.get("features")? {
                Value::Array(values) => {
                    let row: Vec<Value> = values.iter().map(exact).collect();
                    (row.clone(), Value::Array(row))
                }
                Value::Object(named) => (
                    order
                        .iter()
                        .map(|name| exact(&named[name.as_str()]))
                        .collect(),
                    Value::Object(named.iter().map(|(k, v)| (k.clone(), exact(v))).collect()),
                ),
                _ => return None,
            };
            let element = Element {
                values: row,
                file: false,
            };
            Some((element, v1))
        }
        other => panic!("input type {other} has no example reader here"),
    }
}

/// Every item's v1.2 results from one batch request to `target`'s `/predict`.
async fn predict(c: &Client, target: &Target, input_type: &str, items: Vec<Value>) -> Vec<Value> {
    let field = match input_type {
        "text" => "texts",
        "tabular" => "rows",
        "image" => "images",
        "audio" => "audios",
        other => panic!("input type {other}"),
    };
    let mut data = Map::new();
    data.insert(field.into(), Value::Array(items));
    let body = json!({"input_type": input_type, "data": data});
    let r = c
        .post_json(&format!("{}/predict", target.v1), &body, None)
        .await;
    assert_eq!(r.status, 200, "{} /predict: {}", target.label, r.text());
    let answer = r.value();
    assert_eq!(answer["success"], true, "{}: {answer}", target.label);
    answer["results"]["items"]
        .as_array()
        .expect("a batch's items")
        .iter()
        .map(|item| {
            assert_eq!(item["success"], true, "{}: {item}", target.label);
            item["results"].clone()
        })
        .collect()
}
