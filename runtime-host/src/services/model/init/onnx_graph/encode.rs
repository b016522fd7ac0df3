//! Graphs written for tests: the few fields [`super::GraphSummary::read`] reads, encoded as
//! an exporter would.

use super::*;

/// An element type [`encode`] writes as ZipMap's sequence of maps, not a tensor.
pub const MAPS: i32 = -1;

/// A graph's bytes (for tests): its inputs and outputs as (name, element type or [`MAPS`],
/// dims, 0 for a symbolic one), a tree classifier node of labels 0 and 1, a ZipMap node with
/// `labels` if any, an initializer `w` also listed among the inputs (as older exports do).
pub fn encode(
    inputs: &[(&str, i32, &[i64])],
    outputs: &[(&str, i32, &[i64])],
    labels: Option<&[&str]>,
) -> Vec<u8> {
    encode_nodes(inputs, outputs, labels, true)
}

/// [`encode`] without the tree classifier node: a graph whose classes no node names (a k-NN
/// or MLP export carries them as a constant tensor).
pub fn encode_unlabelled(
    inputs: &[(&str, i32, &[i64])],
    outputs: &[(&str, i32, &[i64])],
) -> Vec<u8> {
    encode_nodes(inputs, outputs, None, false)
}

fn encode_nodes(
    inputs: &[(&str, i32, &[i64])],
    outputs: &[(&str, i32, &[i64])],
    labels: Option<&[&str]>,
    tree: bool,
) -> Vec<u8> {
    let tensor = |elem, dims: &[i64]| TypeProto {
        tensor_type: Some(TensorType {
            elem_type: elem,
            shape: Some(TensorShapeProto {
                dim: dims.iter().map(|&d| Dimension { dim_value: d }).collect(),
            }),
        }),
        ..Default::default()
    };
    let maps = || TypeProto {
        sequence_type: Some(Box::new(SequenceType {
            elem_type: Some(Box::new(TypeProto {
                map_type: Some(Box::new(MapType {
                    key_type: STRING,
                    value_type: Some(Box::new(tensor(FLOAT, &[]))),
                })),
                ..Default::default()
            })),
        })),
        ..Default::default()
    };
    let vi = |&(name, elem, dims): &(&str, i32, &[i64])| ValueInfoProto {
        name: name.into(),
        r#type: Some(if elem == MAPS {
            maps()
        } else {
            tensor(elem, dims)
        }),
    };
    let node = |op: &str, attribute| NodeProto {
        op_type: op.into(),
        domain: "ai.onnx.ml".into(),
        attribute,
        ..Default::default()
    };
    let mut nodes = Vec::new();
    if tree {
        nodes.push(node(
            "TreeEnsembleClassifier",
            vec![AttributeProto {
                name: "classlabels_int64s".into(),
                ints: vec![0, 1],
                ..Default::default()
            }],
        ));
    }
    if let Some(labels) = labels {
        nodes.push(node(
            "ZipMap",
            vec![AttributeProto {
                name: "classlabels_strings".into(),
                strings: labels.iter().map(|l| l.as_bytes().to_vec()).collect(),
                ..Default::default()
            }],
        ));
    }
    let mut input: Vec<ValueInfoProto> = inputs.iter().map(vi).collect();
    input.push(vi(&("w", FLOAT, &[3])));
    let graph = GraphProto {
        node: nodes,
        initializer: vec![TensorProto { name: "w".into() }],
        input,
        output: outputs.iter().map(vi).collect(),
    };
    ModelProto { graph: Some(graph) }.encode_to_vec()
}
