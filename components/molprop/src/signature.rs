//! molprop through the Open Inference Protocol: a `smiles` BYTES tensor in, one output per
//! property out, plus `in_reliable_range`. Built from [`PROPERTIES`], the table `/predict`
//! computes from, so the tensors a client is promised and the fields it is answered from
//! cannot drift apart.
//!
//! One output per property, rather than a `property` request parameter, keeps every output's
//! meaning fixed (a client reads `logp` as logP whatever it sent), and asking for a single
//! output is as cheap as `"property": "<code>"`: each output's request when alone
//! ([`OutputSpec::when_alone`]) computes that property only.

use crate::properties::{PROPERTIES, Property};
use model_sdk::InputType;
use model_sdk::oip::signature::member;
use model_sdk::oip::{Binding, Datatype, InputSpec, OutputSpec, Signature};
use serde_json::json;

/// The molprop signature.
pub fn signature() -> Signature {
    let mut outputs: Vec<OutputSpec> = PROPERTIES.iter().map(output).collect();
    // For the default request (every property), whether all of them are in their reliable
    // ranges; when one property is asked for alone, whether that one is.
    outputs.push(OutputSpec::scalar(
        "in_reliable_range",
        Datatype::Bool,
        "/in_reliable_range",
    ));
    Signature {
        platform: "wasm".into(),
        input_type: InputType::Text,
        inputs: vec![InputSpec::new(
            "smiles",
            Datatype::Bytes,
            &[],
            Binding::Text("smiles".into()),
        )],
        outputs,
    }
}

/// A property's output: FP64 for a number; BYTES for the one property that is text (the
/// molecular formula), which has no validated range (`validated` is `None` exactly for the
/// properties that are not numbers).
fn output(p: &Property) -> OutputSpec {
    let datatype = match p.validated {
        Some(_) => Datatype::Fp64,
        None => Datatype::Bytes,
    };
    OutputSpec::scalar(p.code, datatype, &member("/prediction", p.code))
        .with_parameters(json!({"unit": p.unit}))
        .when_alone("property", json!(p.code), "/prediction")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MolProp;
    use model_sdk::Model;
    use serde_json::{Map, Value};

    fn data(smiles: &str) -> Map<String, Value> {
        json!({"smiles": smiles}).as_object().unwrap().clone()
    }

    #[test]
    fn every_property_is_an_output_and_numbers_are_fp64() {
        let s = signature();
        assert_eq!(s.outputs.len(), PROPERTIES.len() + 1);
        let metadata = s.metadata("molprop", "1");
        for (p, o) in PROPERTIES
            .iter()
            .zip(&metadata["outputs"].as_array().unwrap()[..])
        {
            assert_eq!(o["name"], p.code);
            assert_eq!(o["shape"], json!([-1]));
            let expected = if p.code == "formula" { "BYTES" } else { "FP64" };
            assert_eq!(o["datatype"], expected, "{}", p.code);
        }
        assert_eq!(
            metadata["inputs"],
            json!([{"name": "smiles", "datatype": "BYTES", "shape": [-1]}])
        );
        assert_eq!(
            metadata["outputs"].as_array().unwrap().last().unwrap()["datatype"],
            "BOOL"
        );
    }

    /// Every pointer finds a value of its datatype in a real answer, alone or with the rest.
    #[test]
    fn every_output_reads_its_value_from_the_v1_2_answer() {
        let all = MolProp
            .predict(InputType::Text, &data("c1ccccc1O"))
            .unwrap();
        for o in signature().outputs {
            let model_sdk::oip::Source::Pointer(pointer) = &o.source else {
                panic!("{}: one pointer", o.name)
            };
            let value = all.pointer(pointer).unwrap_or_else(|| panic!("{pointer}"));
            let fits = match o.datatype {
                Datatype::Fp64 => value.is_f64() || value.is_u64() || value.is_i64(),
                Datatype::Bool => value.is_boolean(),
                _ => value.is_string(),
            };
            assert!(fits, "{}: {value}", o.name);
            if let Some(alone) = &o.alone {
                let mut one = data("c1ccccc1O");
                one.insert(alone.field.clone(), alone.value.clone());
                let answer = MolProp.predict(InputType::Text, &one).unwrap();
                let model_sdk::oip::Source::Pointer(pointer) = &alone.source else {
                    panic!("{}: alone, one pointer", o.name)
                };
                assert_eq!(answer.pointer(pointer), Some(value), "{}", o.name);
            }
        }
    }

    /// A tensor of SMILES read as the items `/predict` takes, and answered with its numbers,
    /// all properties at once or one alone.
    #[test]
    fn an_inference_answers_what_predict_answers() {
        let smiles = ["CCO", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O"];
        let infer = |outputs: Value| {
            let body = json!({"id": "t", "inputs": [{"name": "smiles", "datatype": "BYTES",
                "shape": [3], "data": smiles}], "outputs": outputs});
            let body = serde_json::to_vec(&body).unwrap();
            let answer =
                model_sdk::oip::infer::run(&MolProp, &signature(), "1", &body, None, |_| {})
                    .unwrap_or_else(|e| panic!("{e:?}"));
            serde_json::from_slice::<Value>(&answer.body).unwrap()
        };
        let every = infer(Value::Null);
        let logp = infer(json!([{"name": "logp"}]));
        assert_eq!(every["id"], "t");
        for (i, s) in smiles.iter().enumerate() {
            let v12 = MolProp.predict(InputType::Text, &data(s)).unwrap();
            for o in every["outputs"].as_array().unwrap() {
                let name = o["name"].as_str().unwrap();
                let expected = match name {
                    "in_reliable_range" => &v12["in_reliable_range"],
                    code => &v12["prediction"][code],
                };
                // FP64 answers a count (3) as 3.0: the same number.
                let same = match expected.as_f64() {
                    Some(x) => o["data"][i].as_f64() == Some(x),
                    None => &o["data"][i] == expected,
                };
                assert!(same, "{s}: {name}: {} for {expected}", o["data"][i]);
            }
            assert_eq!(
                logp["outputs"][0]["data"][i].as_f64(),
                v12["prediction"]["logp"].as_f64()
            );
        }
        assert_eq!(logp["outputs"].as_array().unwrap().len(), 1);
    }
}
