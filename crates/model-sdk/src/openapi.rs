//! `GET /openapi.json`: interface B's document (`docs/openapi/model.json`, compiled in)
//! specialised to this model, built from the model's own description on every call, so it
//! cannot drift from what the model accepts and answers:
//!
//! - `input_type` becomes the enum of the input types its capabilities list;
//! - `data` becomes [`Model::data_schema`]: the fields the model reads, with their types,
//!   enums and limits (molprop's `property`, an ONNX model's features, minilm's `texts`),
//!   or the batch form of it ([`crate::batch`]);
//! - `results` lists the output fields its capabilities declare, with their types, or a
//!   batch's items of them;
//! - `info` names the model and describes it.

use crate::{Model, batch, input_type_name};
use edge_api::model::OutputType;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The generic document every deployment starts from.
const GENERIC: &str = include_str!("../../../docs/openapi/model.json");

/// The document of `model`'s deployment.
pub fn document<M: Model + ?Sized>(model: &M) -> Value {
    let mut doc: Value =
        serde_json::from_str(GENERIC).expect("docs/openapi/model.json is JSON (tested)");
    doc["info"]["title"] = json!(format!("{} (interface B)", model.name()));
    doc["info"]["description"] = json!(format!(
        "{} This document is the `{}` deployment's own: its input types, `data` fields and \
         result fields. {}",
        doc["info"]["description"].as_str().unwrap_or_default(),
        model.name(),
        model.info().description
    ));
    let capabilities = model.capabilities().capabilities;
    let mut input_types: Vec<&str> = Vec::new();
    let mut batch_forms: Vec<Value> = Vec::new();
    let mut outputs: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for c in &capabilities {
        for t in &c.input_types {
            let name = input_type_name(*t);
            if !input_types.contains(&name) {
                input_types.push(name);
                if model.batches() {
                    batch_forms.extend(batch::data_schema(
                        *t,
                        &model.data_schema(),
                        model.max_batch(),
                    ));
                }
            }
        }
        for (field, t) in &c.output_schema {
            let types = outputs.entry(field.clone()).or_default();
            if !types.contains(&json_type(*t)) {
                types.push(json_type(*t));
            }
        }
    }
    let schemas = &mut doc["components"]["schemas"];
    let request = &mut schemas["PredictionRequest"]["properties"];
    request["input_type"]["enum"] = json!(input_types);
    request["input_type"]["description"] =
        json!("One of the input types this model lists in `/capabilities`.");
    let single = model.data_schema();
    request["data"] = if batch_forms.is_empty() {
        single
    } else {
        batch_forms.insert(0, single);
        json!({"anyOf": batch_forms, "description": "One input, or a batch of them (`texts` or `rows`)."})
    };
    let results: Map<String, Value> = outputs
        .into_iter()
        .map(|(field, types)| {
            let t = if types.len() == 1 {
                json!(types[0])
            } else {
                json!(types)
            };
            (field, json!({ "type": t }))
        })
        .collect();
    let results = json!({
        "type": "object",
        "description": "Empty when success is false. The fields the model's capabilities \
                        declare, with their types; a prediction may carry others beside them.",
        "properties": results,
    });
    schemas["BatchItem"]["properties"]["results"] = results.clone();
    schemas["PredictionResponse"]["properties"]["results"] = if model.batches() {
        json!({"anyOf": [results, {"$ref": "#/components/schemas/BatchResults"}]})
    } else {
        // A model that answers no SDK batches documents none.
        if let Some(all) = schemas.as_object_mut() {
            all.remove("BatchResults");
            all.remove("BatchItem");
        }
        results
    };
    doc
}

/// JSON Schema type of an output type of spec 2.7.
fn json_type(t: OutputType) -> &'static str {
    match t {
        OutputType::Array => "array",
        OutputType::Object => "object",
        OutputType::Float => "number",
        OutputType::String => "string",
    }
}
