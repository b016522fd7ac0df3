use super::encode::{MAPS, encode};
use super::*;

#[test]
fn reads_inputs_outputs_and_zipmaps_labels_first() {
    let bytes = encode(
        &[("X", FLOAT, &[0, 3])],
        &[("label", STRING, &[0]), ("probabilities", MAPS, &[])],
        Some(&["no", "yes"]),
    );
    let g = GraphSummary::read(&bytes).unwrap();
    assert_eq!(
        g.inputs,
        [Port {
            name: "X".into(),
            value: Value::Tensor {
                elem: Elem::Number,
                dims: vec![None, Some(3)]
            }
        }]
    );
    assert_eq!(g.outputs[1].value, Value::MapSequence);
    assert_eq!(g.labels.as_deref(), Some(&["no".into(), "yes".into()][..]));
    assert!(g.is_classifier());
}

/// The repository's iris forest, exported by skl2onnx with zipmap off: its input, as
/// onnx.load reads it, is `X` float [None, 4]; its TreeEnsembleClassifier's
/// classlabels_int64s are [0, 1, 2]; outputs `label` and `probabilities`.
#[test]
fn reads_a_real_skl2onnx_export() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/iris/model.onnx");
    let g = GraphSummary::read(&std::fs::read(file).unwrap()).unwrap();
    let dims = vec![None, Some(4)];
    assert_eq!(g.inputs.len(), 1);
    assert_eq!(
        g.inputs[0].value,
        Value::Tensor {
            elem: Elem::Number,
            dims
        }
    );
    assert_eq!(
        g.labels.as_deref(),
        Some(&["0".into(), "1".into(), "2".into()][..])
    );
    let names: Vec<&str> = g.outputs.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["label", "probabilities"]);
    assert!(g.is_classifier());
}

#[test]
fn bytes_that_are_not_a_graph_are_refused() {
    let e = GraphSummary::read(b"not a graph").unwrap_err();
    assert!(format!("{e:#}").contains("not an ONNX model"), "{e:#}");
}
