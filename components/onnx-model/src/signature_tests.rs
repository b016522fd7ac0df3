//! The signature of each kind of model directory, and tensors read back as the `/predict`
//! items they stand for, on the repository's own models (and iris's manifest with a text
//! column, for a table of mixed columns).

use crate::OnnxModel;
use model_sdk::oip::{Signature, infer};
use model_sdk::{InputType, Model};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

fn model_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name)
}

fn load(name: &str) -> OnnxModel {
    OnnxModel::load(&model_dir(name)).unwrap()
}

fn metadata(model: &OnnxModel) -> Value {
    model.signature().metadata(model.name(), "1")
}

/// Runs an inference request (JSON alone, or JSON then `binary`) against `signature`.
fn infer_with<M: Model>(model: &M, signature: &Signature, head: Value, binary: &[u8]) -> Value {
    let mut body = serde_json::to_vec(&head).unwrap();
    let length = body.len().to_string();
    body.extend_from_slice(binary);
    let header = (!binary.is_empty()).then_some(length.as_str());
    let answer = infer::run(model, signature, "1", &body, header, |_| {})
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(answer.header_length, None, "outputs in JSON");
    serde_json::from_slice(&answer.body).unwrap()
}

fn predict(model: &OnnxModel, input_type: InputType, data: Value) -> Value {
    model
        .predict(input_type, data.as_object().unwrap())
        .unwrap()
}

#[test]
fn a_smiles_model_takes_smiles_and_answers_its_value_and_flags() {
    let m = load("solubility");
    let meta = metadata(&m);
    assert_eq!(meta["platform"], "onnx");
    assert_eq!(
        meta["inputs"],
        json!([{"name": "smiles", "datatype": "BYTES", "shape": [-1]}])
    );
    let outputs: Vec<(&str, &str)> = meta["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["datatype"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outputs,
        [
            ("prediction", "FP64"),
            ("in_reliable_range", "BOOL"),
            ("in_domain", "BOOL")
        ]
    );
}

#[test]
fn a_numeric_table_is_one_fp32_row_and_a_classifier_answers_labels_and_values() {
    let m = load("iris");
    let meta = metadata(&m);
    assert_eq!(
        meta["inputs"],
        json!([{"name": "features", "datatype": "FP32", "shape": [-1, 4]}])
    );
    assert_eq!(
        meta["outputs"],
        json!([
            {"name": "label", "datatype": "BYTES", "shape": [-1]},
            {"name": "probabilities", "datatype": "FP64", "shape": [-1, 3],
             "parameters": {"labels": ["setosa", "versicolor", "virginica"]}},
            {"name": "in_domain", "datatype": "BOOL", "shape": [-1]},
        ])
    );
}

#[test]
fn rows_sent_as_json_or_binary_fp32_answer_what_predict_answers() {
    let m = load("iris");
    let rows = [
        [5.1f32, 3.5, 1.4, 0.2],
        [6.4, 3.2, 4.5, 1.5],
        [6.3, 3.3, 6.0, 2.5],
    ];
    let signature = m.signature();
    let tensor = json!({"name": "features", "datatype": "FP32", "shape": [3, 4]});
    let mut as_json = tensor.clone();
    as_json["data"] = json!(rows);
    let from_json = infer_with(&m, &signature, json!({"inputs": [as_json]}), &[]);
    let blob: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut as_binary = tensor;
    as_binary["parameters"] = json!({"binary_data_size": blob.len()});
    let from_binary = infer_with(&m, &signature, json!({"inputs": [as_binary]}), &blob);
    assert_eq!(from_json, from_binary);
    let outputs = &from_json["outputs"];
    for (i, row) in rows.iter().enumerate() {
        let row: Vec<f64> = row.iter().map(|x| x.to_string().parse().unwrap()).collect();
        let v12 = predict(&m, InputType::Tabular, json!({"features": row}));
        assert_eq!(outputs[0]["data"][i], v12["prediction"]);
        for (k, label) in ["setosa", "versicolor", "virginica"].iter().enumerate() {
            assert_eq!(outputs[1]["data"][i * 3 + k], v12["probabilities"][label]);
        }
        assert_eq!(outputs[2]["data"][i], v12["in_domain"]);
    }
}

#[test]
fn pictures_and_sounds_are_files_in_bytes() {
    for (name, field) in [("digits", "image"), ("spoken-digits", "audio")] {
        let meta = metadata(&load(name));
        assert_eq!(
            meta["inputs"],
            json!([{"name": field, "datatype": "BYTES", "shape": [-1]}]),
            "{name}"
        );
        assert_eq!(meta["outputs"][1]["name"], "probabilities", "{name}");
        assert_eq!(meta["outputs"][1]["shape"], json!([-1, 10]), "{name}");
    }
}

/// iris's manifest with `petal_width_cm` made a category (it then has no numeric range).
fn iris_with_a_text_column() -> OnnxModel {
    let text = std::fs::read_to_string(model_dir("iris").join("model.toml")).unwrap();
    let (before, after) = text
        .split_once("[applicability_domain.feature_ranges.petal_width_cm]")
        .unwrap();
    let after = &after[after.find("\n\n").unwrap()..];
    let text = format!("{before}{after}").replacen(
        "[output]",
        "categories = { petal_width_cm = [\"thin\", \"wide\"] }\n\n[output]",
        1,
    );
    let dir = std::env::temp_dir().join(format!("onnx-model-signature-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.toml"), text).unwrap();
    let model = OnnxModel::load(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    model
}

/// The reader alone, behind iris's signature's inputs: each item's `data` as the component
/// reads it, echoed back whole.
struct Echo(OnnxModel);

impl Model for Echo {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn info(&self) -> model_sdk::ModelInfo {
        self.0.info()
    }
    fn capabilities(&self) -> model_sdk::Capabilities {
        self.0.capabilities()
    }
    fn acceptable_ranges(&self) -> model_sdk::AcceptableRanges {
        self.0.acceptable_ranges()
    }
    fn citation(&self) -> model_sdk::Citation {
        self.0.citation()
    }
    fn test_examples(&self) -> model_sdk::TestExamples {
        self.0.test_examples()
    }
    fn predict(
        &self,
        _: InputType,
        data: &Map<String, Value>,
    ) -> Result<Value, model_sdk::PredictError> {
        let read = self.0.reader.read(data)?;
        Ok(json!({"data": data, "input": read.echo}))
    }
}

#[test]
fn a_table_with_a_text_column_is_a_tensor_per_column_read_back_as_named_features() {
    let m = iris_with_a_text_column();
    let meta = metadata(&m);
    let inputs: Vec<(&str, &str)> = meta["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["datatype"].as_str().unwrap()))
        .collect();
    assert_eq!(
        inputs,
        [
            ("sepal_length_cm", "FP64"),
            ("sepal_width_cm", "FP64"),
            ("petal_length_cm", "FP64"),
            ("petal_width_cm", "BYTES")
        ]
    );
    let mut signature = m.signature();
    signature.outputs = vec![model_sdk::oip::OutputSpec::scalar(
        "echo",
        model_sdk::oip::Datatype::Bytes,
        "",
    )];
    let column = |name: &str, datatype: &str, data: Value| json!({"name": name, "datatype": datatype, "shape": [2], "data": data});
    let request = json!({"inputs": [
        column("petal_width_cm", "BYTES", json!(["thin", "never seen"])),
        column("sepal_length_cm", "FP64", json!([5.1, 6.4])),
        column("sepal_width_cm", "INT32", json!([3, 4])),
        column("petal_length_cm", "FP32", json!([1.4, 4.5])),
    ]});
    let answer = infer_with(&Echo(m), &signature, request, &[]);
    let echoed: Vec<Value> = answer["outputs"][0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| serde_json::from_str(t.as_str().unwrap()).unwrap())
        .collect();
    let expected = [
        json!({"sepal_length_cm": 5.1, "sepal_width_cm": 3.0, "petal_length_cm": 1.4,
               "petal_width_cm": "thin"}),
        json!({"sepal_length_cm": 6.4, "sepal_width_cm": 4.0, "petal_length_cm": 4.5,
               "petal_width_cm": "never seen"}),
    ];
    for (got, want) in echoed.iter().zip(&expected) {
        assert_eq!(got["data"], json!({"features": want}));
        assert_eq!(&got["input"], want);
    }
}

/// A BYTES element sent as binary data: a SMILES read as its text, a picture as the file's
/// own bytes, each read by the component as `/predict` reads `smiles` or base64 `image`.
#[test]
fn a_smiles_or_a_file_in_binary_is_read_as_predict_reads_it() {
    use base64::Engine;
    let digits = load("digits");
    let example = &digits.manifest.test_examples.examples[0].input;
    let base64 = example["image"].as_str().unwrap().to_owned();
    let png = base64::engine::general_purpose::STANDARD
        .decode(&base64)
        .unwrap();
    for (model, field, element, v12) in [
        (load("solubility"), "smiles", b"CCO".to_vec(), json!("CCO")),
        (digits, "image", png, json!(base64)),
    ] {
        let expected = model
            .reader
            .read(json!({ field: v12 }).as_object().unwrap())
            .unwrap()
            .echo;
        let mut signature = model.signature();
        signature.outputs = vec![model_sdk::oip::OutputSpec::scalar(
            "input",
            model_sdk::oip::Datatype::Bytes,
            "/input",
        )];
        let mut blob = (element.len() as u32).to_le_bytes().to_vec();
        blob.extend_from_slice(&element);
        let head = json!({"inputs": [{"name": field, "datatype": "BYTES", "shape": [1],
            "parameters": {"binary_data_size": blob.len()}}]});
        let answer = infer_with(&Echo(model), &signature, head, &blob);
        let text = answer["outputs"][0]["data"][0].as_str().unwrap();
        let echoed: Value = match expected {
            Value::String(_) => json!(text),
            _ => serde_json::from_str(text).unwrap(),
        };
        assert_eq!(echoed, expected, "{field}");
    }
}
