//! The model's self-description records, from the manifest plus what the component knows
//! (the input type, the output fields, the applicability-domain rule).

use crate::OnnxModel;
use model_manifest::{ClassValues, Input, Output};
use model_sdk::{
    AcceptableRanges, Capabilities, Capability, OutputType, TestExamples, UsageInstructions,
    input_type_name,
};
use serde_json::json;
use std::collections::BTreeMap;

pub fn capabilities(m: &OnnxModel) -> Capabilities {
    let text = &m.manifest.capability;
    let mut schema = BTreeMap::from([
        ("property_type".to_owned(), OutputType::String),
        ("unit".to_owned(), OutputType::String),
        ("applicability_domain".to_owned(), OutputType::Object),
        ("warning".to_owned(), OutputType::String),
    ]);
    match &m.manifest.output {
        Output::Regression { .. } => {
            schema.insert("prediction".into(), OutputType::Float);
        }
        Output::Classification { values, .. } => {
            schema.insert("prediction".into(), OutputType::String);
            schema.insert(values.field().into(), OutputType::Object);
        }
    }
    // The input echoed: the SMILES, or the features by name.
    let echo = match m.input_type() {
        model_sdk::InputType::Text => OutputType::String,
        _ => OutputType::Object,
    };
    schema.insert("input".into(), echo);
    Capabilities {
        model: m.manifest.info.name.clone(),
        capabilities: vec![Capability {
            name: text.name.clone(),
            input_types: vec![m.input_type()],
            output_schema: schema,
            description: text.description.clone(),
        }],
        elements: None,
    }
}

pub fn acceptable_ranges(m: &OnnxModel) -> AcceptableRanges {
    let r = &m.manifest.acceptable_ranges;
    let mut usage = r.usage_recommendations.clone();
    usage.extend(m.domain.rule(m.checked()));
    AcceptableRanges {
        model: m.manifest.info.name.clone(),
        version: r.version.clone(),
        description: r.description.clone(),
        property_ranges: r.property_ranges.clone(),
        chemical_scope: r.chemical_scope.clone(),
        usage_recommendations: usage,
        input: media_input(m),
    }
}

/// What a picture or sound model takes, and what it was trained on, from the manifest.
fn media_input(m: &OnnxModel) -> Option<serde_json::Value> {
    let (kind, mut taken, trained) = match &m.manifest.input {
        Input::Image { image } => ("image", json!(image), &image.training_data),
        Input::Audio { audio } => ("audio", json!(audio), &audio.training_data),
        _ => return None,
    };
    if let Some(taken) = taken.as_object_mut() {
        taken.remove("training_data");
    }
    Some(json!({"type": kind, "taken_as": taken, "training_data": trained}))
}

pub fn test_examples(m: &OnnxModel) -> TestExamples {
    let t = &m.manifest.test_examples;
    let input_type = input_type_name(m.input_type());
    let data = match &m.reader {
        crate::inputs::Reader::Text { .. } => json!({"text": "<SMILES>"}),
        crate::inputs::Reader::Tabular { names, categories } => {
            let features: serde_json::Map<_, _> = names
                .iter()
                .map(|n| match categories.get(n) {
                    Some(seen) => (n.clone(), json!(format!("<one of: {}>", seen.join(", ")))),
                    None => (n.clone(), json!("<number, or null when not measured>")),
                })
                .collect();
            json!({ "features": features })
        }
        crate::inputs::Reader::Media(kind) => {
            let field = kind.field();
            json!({
                field: format!("<the {field} file in base64>"),
                format!("{field}_url"): format!("<or, instead, an http(s) URL of the {field} file>"),
            })
        }
    };
    let expected = match &m.manifest.output {
        Output::Regression { property, unit } => json!({
            "prediction": format!("{property} in {unit}"),
            "property_type": property,
            "in_reliable_range": "present when /acceptable_ranges gives the property a reliable range: whether the prediction is inside it",
            "in_domain": "true when the input is inside the applicability domain",
            "warning": "present when in_domain is false: why",
        }),
        Output::Classification {
            property,
            labels,
            values,
            ..
        } => {
            let per_label = match values {
                ClassValues::Probabilities => "probability of each label",
                ClassValues::DecisionScores => {
                    "the classifier's decision score of each label (not a probability: the \
                     highest wins)"
                }
            };
            json!({
                "prediction": format!("one of: {}", labels.join(", ")),
                "property_type": property,
                values.field(): per_label,
                "in_domain": "true when every feature is inside its training range",
            })
        }
    };
    TestExamples {
        examples: t.examples.clone(),
        usage_instructions: UsageInstructions {
            endpoint: "/predict".into(),
            method: "POST".into(),
            body_format: json!({ "input_type": input_type, "data": data }),
        },
        expected_output: expected,
        notes: t.notes.clone(),
    }
}
