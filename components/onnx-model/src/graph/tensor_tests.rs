//! A picture fed to a network as `[N, C, H, W]`, to a scikit-learn model as a flat row, and a
//! graph whose input fits neither refused with both shapes named.

use super::{Graph, Reading};
use crate::inputs::media::Kind;
use crate::inputs::{Cell, Reader};
use model_manifest::{Color, ImageSpec};
use prost::Message;
use tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx::pb::type_proto::{Tensor as TensorType, Value as TypeValue};
use tract_onnx::pb::{
    GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};

fn value_info(name: &str, dims: &[Option<i64>]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Some(n) => dimension::Value::DimValue(*n),
                None => dimension::Value::DimParam("N".into()),
            }),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(TypeValue::TensorType(TensorType {
                elem_type: 1,
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], output: &str) -> NodeProto {
    NodeProto {
        op_type: op.into(),
        name: output.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    }
}

/// A graph taking `input` dims and answering each picture's mean (ReduceMean over every
/// axis but the first, then Flatten), as `[N, 1]`.
fn mean_graph(input: &[Option<i64>]) -> Vec<u8> {
    let axes: Vec<i64> = (1..input.len() as i64).collect();
    let mut mean = node("ReduceMean", &["x"], "mean");
    mean.attribute = vec![crate::ml::testing::ints("axes", &axes)];
    let nodes = vec![mean, node("Flatten", &["mean"], "y")];
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(GraphProto {
            name: "mean".into(),
            node: nodes,
            input: vec![value_info("x", input)],
            output: vec![value_info("y", &[None, Some(1)])],
            ..Default::default()
        }),
        ..Default::default()
    };
    model.encode_to_vec()
}

fn reader(color: Color) -> Reader {
    let mut spec = ImageSpec::new(color, 4, 2);
    (spec.max_pixels, spec.max_bytes) = (1000, 1000);
    Reader::Media(Kind::Image(spec))
}

#[test]
fn a_picture_feeds_a_network_as_nchw_and_a_flat_model_as_a_row() {
    let rgb = reader(Color::Rgb);
    let cells: Vec<Cell> = (0..24).map(|i| Cell::Number(f64::from(i))).collect();
    for input in [
        vec![None, Some(3), Some(2), Some(4)],
        vec![None, None, None, None],
        vec![None, Some(24)],
    ] {
        let graph = Graph::load(
            &mean_graph(&input),
            &rgb,
            "the test's picture",
            Reading::Value,
        )
        .unwrap_or_else(|e| panic!("{input:?}: {e:?}"));
        // The mean of 0..24: the same however the values are shaped.
        assert_eq!(graph.run(&cells).unwrap().values, vec![11.5], "{input:?}");
        let rows = graph.run_rows(&[&cells, &cells[..]]).unwrap();
        assert_eq!(rows.len(), 2, "{input:?}");
    }
    // A grey picture into a `[N, 1, H, W]` network: the channel of one.
    let grey = reader(Color::Grayscale);
    let graph = Graph::load(
        &mean_graph(&[None, Some(1), Some(2), Some(4)]),
        &grey,
        "the test's picture",
        Reading::Value,
    )
    .unwrap();
    let cells: Vec<Cell> = (0..8).map(|i| Cell::Number(f64::from(i))).collect();
    assert_eq!(graph.run(&cells).unwrap().values, vec![3.5]);
}

#[test]
fn a_graph_of_another_shape_is_refused_naming_both() {
    let problems = Graph::load(
        &mean_graph(&[None, Some(3), Some(224), Some(224)]),
        &reader(Color::Rgb),
        "model.toml's [input.image]",
        Reading::Value,
    )
    .err()
    .unwrap();
    let all = problems.join("\n");
    assert!(all.contains("[?, 3, 224, 224]"), "{all}");
    assert!(all.contains("[N, 3, 2, 4]"), "{all}");
}
