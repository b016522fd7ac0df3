//! What a model looks like through the Open Inference Protocol, and how its tensors map onto
//! the v1.2 `/predict` it already answers: each input binds every item's element (or row) to
//! a field of that item's `data`, and each output reads every item's value from its v1.2
//! `results` by JSON pointer. So a model answers both protocols from the same code, with the
//! same numbers, and a model's author writes no protocol code: the SDK derives a signature
//! from the input type ([`Signature::generic`]), and a model that knows its outputs names
//! them ([`crate::Model::signature`]).

use super::datatype::Datatype;
use crate::{Model, batch, first_input_type};
use edge_api::model::InputType;
use serde_json::{Map, Value, json};

/// A model's inputs, outputs and platform. The batch dimension (-1) comes first in every
/// tensor: item `i` of every input is the `i`-th v1.2 batch item.
#[derive(Debug, Clone)]
pub struct Signature {
    /// What runs the model (`onnx`, `wasm`), as the metadata's `platform`.
    pub platform: String,
    /// The v1.2 input type every item is predicted as.
    pub input_type: InputType,
    pub inputs: Vec<InputSpec>,
    pub outputs: Vec<OutputSpec>,
}

/// One input tensor: `[-1]` (one element per item) or `[-1, k]` (a row per item).
#[derive(Debug, Clone)]
pub struct InputSpec {
    pub name: String,
    pub datatype: Datatype,
    /// The dimensions after the batch one; `-1` where any length is taken.
    pub item_shape: Vec<i64>,
    pub binding: Binding,
}

/// Where an input's item goes in the item's v1.2 `data`.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// A BYTES element, as UTF-8 text, becomes `data[field]` (a SMILES, a sentence).
    Text(String),
    /// A BYTES element holding a file becomes `data[field]` in base64. In JSON (which cannot
    /// carry raw bytes) the string is taken as v1.2 takes it: base64 or a `data:` URL.
    File(String),
    /// A row of numbers becomes `data[field]` as an array.
    Row(String),
    /// One value (a number or, from BYTES, a text) becomes `data[object][key]`: one column
    /// of a table whose columns are separate inputs.
    Member { object: String, key: String },
}

/// One output tensor: `[-1]` or `[-1, k]`, each item's value read from its v1.2 results.
#[derive(Debug, Clone)]
pub struct OutputSpec {
    pub name: String,
    pub datatype: Datatype,
    /// The dimensions after the batch one: `[]` or `[k]`.
    pub item_shape: Vec<i64>,
    pub source: Source,
    /// Said in the metadata's `parameters` (the labels of a probability vector, a unit).
    pub parameters: Option<Map<String, Value>>,
    /// A cheaper v1.2 request when this is the only output asked for: `data[field] = value`,
    /// and the value then read at `source` (molprop computes one property, not all).
    pub alone: Option<Alone>,
}

/// See [`OutputSpec::alone`].
#[derive(Debug, Clone)]
pub struct Alone {
    pub field: String,
    pub value: Value,
    pub source: Source,
}

/// Where an output's item value is in the item's v1.2 `results`.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A JSON pointer (RFC 6901) to a value, or to an array of `k` values for `[-1, k]`;
    /// `""` is the whole results object (written as JSON text in a BYTES output).
    Pointer(String),
    /// One pointer per element of a `[-1, k]` output (an object's members in a set order).
    Pointers(Vec<String>),
}

impl InputSpec {
    pub fn new(name: &str, datatype: Datatype, item_shape: &[i64], binding: Binding) -> Self {
        Self {
            name: name.to_owned(),
            datatype,
            item_shape: item_shape.to_vec(),
            binding,
        }
    }
}

impl OutputSpec {
    /// One value per item, at `pointer`.
    pub fn scalar(name: &str, datatype: Datatype, pointer: &str) -> Self {
        Self {
            name: name.to_owned(),
            datatype,
            item_shape: Vec::new(),
            source: Source::Pointer(pointer.to_owned()),
            parameters: None,
            alone: None,
        }
    }

    /// `k` values per item: the array at `pointer`.
    pub fn array(name: &str, datatype: Datatype, k: usize, pointer: &str) -> Self {
        Self {
            item_shape: vec![k as i64],
            ..Self::scalar(name, datatype, pointer)
        }
    }

    /// One value per item from each of `pointers`, in order.
    pub fn gathered(name: &str, datatype: Datatype, pointers: Vec<String>) -> Self {
        Self {
            item_shape: vec![pointers.len() as i64],
            source: Source::Pointers(pointers),
            ..Self::scalar(name, datatype, "")
        }
    }

    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters.as_object().cloned();
        self
    }

    pub fn when_alone(mut self, field: &str, value: Value, pointer: &str) -> Self {
        self.alone = Some(Alone {
            field: field.to_owned(),
            value,
            source: Source::Pointer(pointer.to_owned()),
        });
        self
    }
}

/// A JSON pointer to the member `key` of the object at `parent` (`~` and `/` escaped).
pub fn member(parent: &str, key: &str) -> String {
    format!("{parent}/{}", key.replace('~', "~0").replace('/', "~1"))
}

impl Signature {
    /// The signature any model gets without saying more: its first input type's v1.2 field
    /// as the input (`text` BYTES, `features` FP64 `[-1, -1]`, `image` or `audio` BYTES), and
    /// each item's whole v1.2 results as JSON text (`results` BYTES).
    pub fn generic<M: Model + ?Sized>(model: &M) -> Self {
        let input_type = first_input_type(model);
        // The field a single v1.2 request carries its input in (a batch's items become it).
        let field = batch::fields(input_type)[0].1;
        let input = match input_type {
            InputType::Text => {
                InputSpec::new(field, Datatype::Bytes, &[], Binding::Text(field.into()))
            }
            InputType::Tabular => {
                InputSpec::new(field, Datatype::Fp64, &[-1], Binding::Row(field.into()))
            }
            InputType::Image | InputType::Audio => {
                InputSpec::new(field, Datatype::Bytes, &[], Binding::File(field.into()))
            }
        };
        Self {
            platform: "wasm".into(),
            input_type,
            inputs: vec![input],
            outputs: vec![OutputSpec::scalar("results", Datatype::Bytes, "")],
        }
    }

    /// `GET /v2/models/{name}`: the model's metadata.
    pub fn metadata(&self, name: &str, version: &str) -> Value {
        let tensor = |name: &str, datatype: Datatype, item_shape: &[i64]| {
            let shape: Vec<i64> = std::iter::once(-1)
                .chain(item_shape.iter().copied())
                .collect();
            json!({"name": name, "datatype": datatype.name(), "shape": shape})
        };
        let inputs: Vec<Value> = self
            .inputs
            .iter()
            .map(|i| tensor(&i.name, i.datatype, &i.item_shape))
            .collect();
        let outputs: Vec<Value> = self
            .outputs
            .iter()
            .map(|o| {
                let mut t = tensor(&o.name, o.datatype, &o.item_shape);
                if let Some(p) = &o.parameters {
                    t["parameters"] = Value::Object(p.clone());
                }
                t
            })
            .collect();
        json!({
            "name": name,
            "versions": [version],
            "platform": self.platform,
            "inputs": inputs,
            "outputs": outputs,
        })
    }
}
