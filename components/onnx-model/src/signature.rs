//! Any model directory through the Open Inference Protocol, with nothing written per model:
//! the inputs follow the reader ([`crate::inputs`], built from `[input]`) and the outputs
//! `[output]` and `[acceptable_ranges]`, as the answer ([`crate::result`]) does, so a client
//! is promised exactly the fields `/predict` reads and writes.
//!
//! Inputs: a SMILES as `smiles` BYTES `[-1]`; a table of numbers as one `features` FP32
//! `[-1, F]` in the manifest's order (the row the graph takes, in its own precision); a table
//! with text columns as one tensor per column, named after it (BYTES for a category, FP64 for
//! a number), since one tensor has one datatype; a picture or a sound as `image` or `audio`
//! BYTES `[-1]`, the file itself. Outputs: a regression's `prediction` FP64 (and
//! `in_reliable_range` when the property has a reliable range, as the answer has it only
//! then); a classifier's `label` BYTES and its per-label values FP64 `[-1, K]` in the order of
//! the metadata's `labels`; `in_domain` BOOL always.

use crate::OnnxModel;
use crate::inputs::Reader;
use model_manifest::Output;
use model_sdk::oip::signature::member;
use model_sdk::oip::{Binding, Datatype, InputSpec, OutputSpec, Signature};
use serde_json::json;

impl OnnxModel {
    /// The signature of this model directory. Built per call: a handful of short strings per
    /// feature and label, nothing a request would notice next to reading its body.
    pub(crate) fn oip_signature(&self) -> Signature {
        Signature {
            platform: "onnx".into(),
            input_type: self.input_type(),
            inputs: inputs(&self.reader),
            outputs: self.outputs(),
        }
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        let mut outputs = match &self.manifest.output {
            Output::Regression { property, .. } => {
                let mut o = vec![OutputSpec::scalar(
                    "prediction",
                    Datatype::Fp64,
                    "/prediction",
                )];
                // The answer says it exactly when the property has a reliable range.
                let ranges = &self.manifest.acceptable_ranges.property_ranges;
                if ranges.contains_key(property) {
                    o.push(OutputSpec::scalar(
                        "in_reliable_range",
                        Datatype::Bool,
                        "/in_reliable_range",
                    ));
                }
                o
            }
            Output::Classification { labels, values, .. } => {
                let field = values.field();
                let parent = format!("/{field}");
                let per_label = labels.iter().map(|l| member(&parent, l)).collect();
                vec![
                    OutputSpec::scalar("label", Datatype::Bytes, "/prediction"),
                    OutputSpec::gathered(field, Datatype::Fp64, per_label)
                        .with_parameters(json!({ "labels": labels })),
                ]
            }
        };
        outputs.push(OutputSpec::scalar(
            "in_domain",
            Datatype::Bool,
            "/in_domain",
        ));
        outputs
    }
}

/// The input tensors of what `reader` reads: each binds to the field the reader takes it
/// from (`smiles`, the alias of `data.text`; `data.features`; the file's field).
fn inputs(reader: &Reader) -> Vec<InputSpec> {
    match reader {
        Reader::Text { .. } => vec![InputSpec::new(
            "smiles",
            Datatype::Bytes,
            &[],
            Binding::Text("smiles".into()),
        )],
        Reader::Tabular { names, categories } if categories.is_empty() => {
            vec![InputSpec::new(
                "features",
                Datatype::Fp32,
                &[names.len() as i64],
                Binding::Row("features".into()),
            )]
        }
        Reader::Tabular { names, categories } => names
            .iter()
            .map(|name| {
                let datatype = match categories.contains_key(name) {
                    true => Datatype::Bytes,
                    false => Datatype::Fp64,
                };
                let binding = Binding::Member {
                    object: "features".into(),
                    key: name.clone(),
                };
                InputSpec::new(name, datatype, &[], binding)
            })
            .collect(),
        Reader::Media(kind) => {
            let field = kind.field();
            vec![InputSpec::new(
                field,
                Datatype::Bytes,
                &[],
                Binding::File(field.into()),
            )]
        }
    }
}

#[cfg(test)]
#[path = "signature_tests.rs"]
mod tests;
