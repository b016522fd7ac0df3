//! Test support: an ONNX node built the way an exporter writes it, parsed by an operator's
//! real `parse` and run through tract's whole path (inference rules, typed facts, optimised
//! plan), so a test exercises what a served model does, not the maths alone.

use tract_onnx::model::ParsingContext;
use tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx::pb::{AttributeProto, ModelProto, NodeProto};
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::internal::*;

pub type Parse =
    fn(&ParsingContext, &NodeProto) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)>;

/// A node of `op_type` with these attributes.
pub fn node(op_type: &str, attributes: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        name: "n".into(),
        op_type: op_type.into(),
        domain: "ai.onnx.ml".into(),
        attribute: attributes,
        ..NodeProto::default()
    }
}

fn attr(name: &str, kind: AttributeType) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: kind as i32,
        ..AttributeProto::default()
    }
}

pub fn floats(name: &str, values: &[f32]) -> AttributeProto {
    AttributeProto {
        floats: values.to_vec(),
        ..attr(name, AttributeType::Floats)
    }
}

pub fn ints(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        ints: values.to_vec(),
        ..attr(name, AttributeType::Ints)
    }
}

pub fn strings(name: &str, values: &[&str]) -> AttributeProto {
    let strings = values.iter().map(|s| s.as_bytes().to_vec()).collect();
    AttributeProto {
        strings,
        ..attr(name, AttributeType::Strings)
    }
}

pub fn float(name: &str, value: f32) -> AttributeProto {
    AttributeProto {
        f: value,
        ..attr(name, AttributeType::Float)
    }
}

pub fn int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        i: value,
        ..attr(name, AttributeType::Int)
    }
}

pub fn string(name: &str, value: &str) -> AttributeProto {
    AttributeProto {
        s: value.as_bytes().to_vec(),
        ..attr(name, AttributeType::String)
    }
}

/// `node` parsed by `parse`.
pub fn parsed(parse: Parse, node: &NodeProto) -> TractResult<Box<dyn InferenceOp>> {
    let onnx = tract_onnx::onnx();
    let model = ModelProto::default();
    let ctx = ParsingContext {
        onnx_operator_set_version: 17,
        framework: &onnx,
        model: &model,
        parent_graphs: vec![],
        model_dir: None,
        template: InferenceModel::default(),
    };
    Ok(parse(&ctx, node)?.0)
}

/// `node` parsed by `parse`, then run on `inputs` in a model of that one node whose inputs
/// are declared with their types and shapes.
pub fn run(parse: Parse, node: &NodeProto, inputs: Vec<Tensor>) -> TractResult<TVec<Tensor>> {
    let op = parsed(parse, node)?;
    let outputs = op.nboutputs()?;
    let mut model = InferenceModel::default();
    let sources = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            model.add_source(
                format!("in{i}"),
                InferenceFact::dt_shape(t.datum_type(), t.shape()),
            )
        })
        .collect::<TractResult<TVec<_>>>()?;
    let wires = model.wire_node("op", op, &sources)?;
    ensure!(wires.len() == outputs);
    model.select_output_outlets(&wires)?;
    let plan = model.into_optimized()?.into_runnable()?;
    let outputs = plan.run(inputs.into_iter().map(TValue::from).collect())?;
    Ok(outputs.into_iter().map(TValue::into_tensor).collect())
}

/// The error of running `node`, as text (its whole chain).
pub fn error(parse: Parse, node: &NodeProto, inputs: Vec<Tensor>) -> String {
    match run(parse, node, inputs) {
        Ok(out) => panic!("expected an error, got {out:?}"),
        Err(e) => format!("{e:#}"),
    }
}

/// `got` equals `want` up to `tolerance` relative (absolute below 1), NaN to NaN: the
/// comparison of an operator's answer with onnxruntime's for the same node.
pub fn assert_close(what: &str, got: &[f32], want: &[f32], tolerance: f32) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} != {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tolerance * w.abs().max(1.0),
            "{what}: {got:?} != {want:?}"
        );
    }
}
