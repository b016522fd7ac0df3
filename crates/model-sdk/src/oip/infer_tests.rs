//! Inference requests as the protocol's clients send them, run on a model that answers each
//! item with the `data` it was given: what reaches `predict` is what `/predict` would have
//! been sent, or the request is refused before the model runs.

use super::datatype::Datatype;
use super::signature::{Binding, InputSpec, OutputSpec, Signature};
use super::{OipError, infer};
use crate::{Model, PredictError};
use edge_api::model::InputType;
use serde_json::{Map, Value, json};

/// Answers each item with its own `data`; describes nothing (inference needs no more).
struct Echo;

impl Model for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn info(&self) -> crate::ModelInfo {
        unimplemented!("inference does not read the model's info")
    }
    fn capabilities(&self) -> crate::Capabilities {
        unimplemented!("inference does not read the capabilities")
    }
    fn acceptable_ranges(&self) -> crate::AcceptableRanges {
        unimplemented!("inference does not read the ranges")
    }
    fn citation(&self) -> crate::Citation {
        unimplemented!("inference does not read the citation")
    }
    fn test_examples(&self) -> crate::TestExamples {
        unimplemented!("inference does not read the examples")
    }
    fn predict(&self, _: InputType, data: &Map<String, Value>) -> Result<Value, PredictError> {
        Ok(json!({ "data": data }))
    }
}

/// A row of numbers in, each item's `data.features` back as FP64 `[-1, -1]`.
fn rows() -> Signature {
    Signature {
        platform: "wasm".into(),
        input_type: InputType::Tabular,
        inputs: vec![InputSpec::new(
            "features",
            Datatype::Fp32,
            &[-1],
            Binding::Row("features".into()),
        )],
        outputs: vec![OutputSpec::scalar("data", Datatype::Bytes, "/data")],
    }
}

/// Runs a request with `binary` after its JSON head; the answer's JSON, or the refusal.
fn run(signature: &Signature, head: Value, binary: &[u8]) -> Result<Value, OipError> {
    let mut body = serde_json::to_vec(&head).unwrap();
    let length = body.len().to_string();
    body.extend_from_slice(binary);
    let header = (!binary.is_empty()).then_some(length.as_str());
    let answer = infer::run(&Echo, signature, "1", &body, header, |_| {})?;
    Ok(serde_json::from_slice(&answer.body).unwrap())
}

/// One item's row sent as binary `datatype` data; the `data` the model was given.
fn binary_row(datatype: &str, bytes: &[u8], count: usize) -> Result<Value, OipError> {
    let head = json!({"inputs": [{"name": "features", "datatype": datatype, "shape": [1, count],
        "parameters": {"binary_data_size": bytes.len()}}]});
    let answer = run(&rows(), head, bytes)?;
    let text = answer["outputs"][0]["data"][0].as_str().unwrap().to_owned();
    Ok(serde_json::from_str(&text).unwrap())
}

#[test]
fn an_infinity_in_binary_data_is_refused_not_sent_as_a_missing_value() {
    for x in [f64::INFINITY, f64::NEG_INFINITY] {
        let bytes: Vec<u8> = [1.0, x]
            .iter()
            .flat_map(|v: &f64| v.to_le_bytes())
            .collect();
        let e = binary_row("FP64", &bytes, 2).unwrap_err();
        assert_eq!(e.status, 400, "{e:?}");
        assert!(e.message.contains("element 1"), "{}", e.message);
    }
    let bytes: Vec<u8> = [f32::INFINITY]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(binary_row("FP32", &bytes, 1).unwrap_err().status, 400);
}

#[test]
fn a_nan_in_binary_data_is_sent_as_null_the_value_v1_2_calls_missing() {
    let bytes: Vec<u8> = [2.5f32, f32::NAN]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(
        binary_row("FP32", &bytes, 2).unwrap(),
        json!({"features": [2.5, null]})
    );
}

#[test]
fn an_fp16_in_binary_reaches_the_model_as_the_same_fp16_in_json_does() {
    for x in [0.1, 5.1, -3.3, 1000.7, 6.0e-5] {
        let json_head = json!({"inputs": [{"name": "features", "datatype": "FP16",
            "shape": [1, 1], "data": [x]}]});
        let answer = run(&rows(), json_head, &[]).unwrap();
        let from_json: Value =
            serde_json::from_str(answer["outputs"][0]["data"][0].as_str().unwrap()).unwrap();
        let half = half::f16::from_f64(x).to_le_bytes();
        assert_eq!(binary_row("FP16", &half, 1).unwrap(), from_json, "{x}");
    }
}

#[test]
fn an_fp32_a_numpy_client_writes_in_json_reaches_the_model_as_in_binary() {
    // tritonclient's JSON tensors are numpy's `tolist()`: 0.1f32 is written 0.10000000149011612.
    let head = json!({"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 2],
        "data": [f64::from(0.1f32), f64::from(5.1f32)]}]});
    let answer = run(&rows(), head, &[]).unwrap();
    let from_json: Value =
        serde_json::from_str(answer["outputs"][0]["data"][0].as_str().unwrap()).unwrap();
    let bytes: Vec<u8> = [0.1f32, 5.1].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(from_json, json!({"features": [0.1, 5.1]}));
    assert_eq!(binary_row("FP32", &bytes, 2).unwrap(), from_json);
}

#[test]
fn a_signature_binding_a_file_to_numbers_is_a_500_not_a_trap() {
    let mut signature = rows();
    signature.inputs[0].item_shape = Vec::new();
    signature.inputs[0].binding = Binding::File("image".into());
    let head = json!({"inputs": [{"name": "features", "datatype": "FP32", "shape": [1],
        "data": [1.0]}]});
    let e = run(&signature, head, &[]).unwrap_err();
    assert_eq!(e.status, 500, "{e:?}");
    assert!(e.message.contains("must be BYTES"), "{}", e.message);
}
