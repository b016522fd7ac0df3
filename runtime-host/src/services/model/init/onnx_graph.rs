//! What `model init` needs of an ONNX graph: its inputs (name, element type, shape), its
//! outputs (a tensor, or ZipMap's sequence of maps) and its class labels. Only those fields
//! of the protobuf messages are declared (prost skips the others, weights included), so the
//! host reads a graph without tract or a build script.
//!
//! Field numbers are those of onnx.proto (github.com/onnx/onnx, onnx/onnx.proto: ModelProto,
//! GraphProto, NodeProto, AttributeProto, ValueInfoProto, TypeProto, TensorShapeProto,
//! TensorProto), which has kept them stable since IR version 1.

use anyhow::{Context, Result};
use prost::Message;

#[derive(Clone, PartialEq, Message)]
struct ModelProto {
    #[prost(message, optional, tag = "7")]
    graph: Option<GraphProto>,
}

#[derive(Clone, PartialEq, Message)]
struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    node: Vec<NodeProto>,
    #[prost(message, repeated, tag = "5")]
    initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    output: Vec<ValueInfoProto>,
}

/// Only its name: an input that is also an initializer (older exports list them) is a
/// weight, not something a request feeds.
#[derive(Clone, PartialEq, Message)]
struct TensorProto {
    #[prost(string, tag = "8")]
    name: String,
}

#[derive(Clone, PartialEq, Message)]
struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    output: Vec<String>,
    #[prost(string, tag = "4")]
    op_type: String,
    #[prost(string, tag = "7")]
    domain: String,
    #[prost(message, repeated, tag = "5")]
    attribute: Vec<AttributeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct AttributeProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(bytes = "vec", tag = "4")]
    s: Vec<u8>,
    #[prost(int64, repeated, tag = "8")]
    ints: Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "9")]
    strings: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct ValueInfoProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, optional, tag = "2")]
    r#type: Option<TypeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TypeProto {
    #[prost(message, optional, tag = "1")]
    tensor_type: Option<TensorType>,
    #[prost(message, optional, tag = "4")]
    sequence_type: Option<Box<SequenceType>>,
    #[prost(message, optional, tag = "5")]
    map_type: Option<Box<MapType>>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorType {
    #[prost(int32, tag = "1")]
    elem_type: i32,
    #[prost(message, optional, tag = "2")]
    shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct SequenceType {
    #[prost(message, optional, boxed, tag = "1")]
    elem_type: Option<Box<TypeProto>>,
}

#[derive(Clone, PartialEq, Message)]
struct MapType {
    #[prost(int32, tag = "1")]
    key_type: i32,
    #[prost(message, optional, boxed, tag = "2")]
    value_type: Option<Box<TypeProto>>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    dim: Vec<Dimension>,
}

#[derive(Clone, PartialEq, Message)]
struct Dimension {
    /// Unset (0 in proto3 terms, never a real width) when the dimension is symbolic
    /// (`dim_param`, tag 2, e.g. the batch `N`).
    #[prost(int64, tag = "1")]
    dim_value: i64,
}

/// TensorProto.DataType's numbers for the element types a request can feed.
pub const FLOAT: i32 = 1;
const INT32: i32 = 6;
pub const INT64: i32 = 7;
pub const STRING: i32 = 8;
const DOUBLE: i32 = 11;

/// A tensor's element type, as far as `model init` tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// float, double and the other numeric types.
    Number,
    /// An integer tensor (a classifier's label, say).
    Integer,
    Text,
    /// Something else (a bool, or a type this reader does not know).
    Other(i32),
}

impl Elem {
    fn of(code: i32) -> Self {
        match code {
            FLOAT | DOUBLE => Self::Number,
            INT32 | INT64 => Self::Integer,
            STRING => Self::Text,
            other => Self::Other(other),
        }
    }
}

/// One graph input or output.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A tensor; `dims[i]` is `None` where the dimension is symbolic.
    Tensor { elem: Elem, dims: Vec<Option<u64>> },
    /// ZipMap's output: a sequence of maps of label to probability.
    MapSequence,
    /// Anything else.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    pub name: String,
    pub value: Value,
}

/// What `model init` reads of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphSummary {
    /// The inputs a request feeds, in the graph's order (initializers left out).
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
    /// The class labels, from ZipMap's or else a classifier node's `classlabels_strings` /
    /// `classlabels_int64s` (integers as their decimal text); `None` when no node names them.
    pub labels: Option<Vec<String>>,
    /// Whether the classifier's columns are decision scores, not probabilities: an
    /// `SVMClassifier` without `prob_a` (SVC without probability=True), a `LinearClassifier`
    /// without a post-transform (LinearSVC, RidgeClassifier); as the component judges it.
    pub decision_scores: bool,
}

impl GraphSummary {
    /// Reads the graph of an ONNX model file's bytes.
    pub fn read(bytes: &[u8]) -> Result<Self> {
        let model = ModelProto::decode(bytes).context("not an ONNX model (protobuf)")?;
        let graph = model
            .graph
            .context("not an ONNX model: it holds no graph")?;
        let weights: std::collections::HashSet<&str> =
            graph.initializer.iter().map(|t| t.name.as_str()).collect();
        let port = |v: &ValueInfoProto| Port {
            name: v.name.clone(),
            value: value_of(v.r#type.as_ref()),
        };
        let inputs = graph
            .input
            .iter()
            .filter(|v| !weights.contains(v.name.as_str()))
            .map(port)
            .collect();
        let outputs = graph.output.iter().map(port).collect();
        Ok(Self {
            inputs,
            outputs,
            labels: labels_of(&graph.node),
            decision_scores: scores_reach_an_output(&graph),
        })
    }

    /// Whether the graph is a classifier: a label output (integers or strings) beside the
    /// probabilities (ZipMap's maps, or a float tensor of one column per class).
    pub fn is_classifier(&self) -> bool {
        let label = self.outputs.iter().any(|o| {
            matches!(&o.value, Value::Tensor { elem: Elem::Integer | Elem::Text, dims } if dims.len() <= 1)
        });
        let probabilities = self.outputs.iter().any(|o| match &o.value {
            Value::MapSequence => true,
            Value::Tensor {
                elem: Elem::Number,
                dims,
            } => dims.len() == 2,
            _ => false,
        });
        label && probabilities
    }
}

fn value_of(t: Option<&TypeProto>) -> Value {
    let Some(t) = t else { return Value::Other };
    if let Some(tensor) = &t.tensor_type {
        let dims = tensor
            .shape
            .as_ref()
            .map(|s| {
                s.dim
                    .iter()
                    .map(|d| (d.dim_value > 0).then_some(d.dim_value as u64))
                    .collect()
            })
            .unwrap_or_default();
        return Value::Tensor {
            elem: Elem::of(tensor.elem_type),
            dims,
        };
    }
    let of_maps = t
        .sequence_type
        .as_ref()
        .and_then(|s| s.elem_type.as_ref())
        .is_some_and(|e| e.map_type.is_some());
    if of_maps {
        Value::MapSequence
    } else {
        Value::Other
    }
}

/// The labels ZipMap pairs with the probabilities, else those of the classifier node
/// (`*Classifier` of ai.onnx.ml): what the graph answers, in its order.
fn labels_of(nodes: &[NodeProto]) -> Option<Vec<String>> {
    let ml = |n: &&NodeProto| n.domain == "ai.onnx.ml";
    let zipmap = nodes.iter().filter(ml).find(|n| n.op_type == "ZipMap");
    let classifier = nodes
        .iter()
        .filter(ml)
        .find(|n| n.op_type.ends_with("Classifier"));
    zipmap
        .and_then(class_labels)
        .or_else(|| classifier.and_then(class_labels))
}

/// Operators that make probabilities of scores (a logistic, a softmax, a calibration's
/// exponential, a normalisation to sum 1).
const PROBABILITY_MAKERS: [&str; 5] = ["Exp", "Sigmoid", "Softmax", "LogSoftmax", "Normalizer"];

/// Whether an output is made from a classifier's decision scores (see [`answers_scores`])
/// with nothing that makes probabilities of them on the way (one-vs-rest arithmetic may be;
/// CalibratedClassifierCV's exponential makes probabilities); as the component judges it.
fn scores_reach_an_output(graph: &GraphProto) -> bool {
    graph.output.iter().any(|out| {
        let makers = ancestors(graph, &out.name);
        !makers
            .iter()
            .any(|n| PROBABILITY_MAKERS.contains(&n.op_type.as_str()))
            && makers.iter().any(|n| answers_scores(n))
    })
}

/// Every node `name` is computed from, directly or not (each once: a hostile graph's cycle
/// ends).
fn ancestors<'g>(graph: &'g GraphProto, name: &str) -> Vec<&'g NodeProto> {
    let mut found: Vec<&NodeProto> = Vec::new();
    let mut wanted = vec![name.to_owned()];
    while let Some(name) = wanted.pop() {
        for node in graph.node.iter().filter(|n| n.output.contains(&name)) {
            if !found.iter().any(|f| std::ptr::eq(*f, node)) {
                found.push(node);
                wanted.extend(node.input.iter().cloned());
            }
        }
    }
    found
}

/// Whether `node` is a classifier whose scores are decision scores: an `SVMClassifier`
/// without `prob_a` (an SVC without probability=True), a `LinearClassifier` without a
/// post-transform (LinearSVC, RidgeClassifier).
fn answers_scores(node: &NodeProto) -> bool {
    let attr = |name: &str| node.attribute.iter().find(|a| a.name == name);
    let no_transform = attr("post_transform").is_none_or(|a| a.s == b"NONE");
    node.domain == "ai.onnx.ml"
        && no_transform
        && match node.op_type.as_str() {
            "SVMClassifier" => attr("prob_a").is_none(),
            "LinearClassifier" => true,
            _ => false,
        }
}

fn class_labels(node: &NodeProto) -> Option<Vec<String>> {
    let attr = |name: &str| node.attribute.iter().find(|a| a.name == name);
    if let Some(a) = attr("classlabels_strings").filter(|a| !a.strings.is_empty()) {
        return Some(
            a.strings
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        );
    }
    attr("classlabels_int64s")
        .or_else(|| attr("classlabels_ints"))
        .filter(|a| !a.ints.is_empty())
        .map(|a| a.ints.iter().map(i64::to_string).collect())
}

#[cfg(test)]
pub mod encode;

#[cfg(test)]
mod tests;
