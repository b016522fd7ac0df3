//! The tree ensembles against onnxruntime's answers for the same nodes ([`super::expected`]).

use super::expected::{DOUBLE_CLASSIFIER, DOUBLE_REGRESSOR, REGRESSOR, SINGLE, TWO_IDS, UNSCORED};
use super::{classifier, regressor};
use crate::ml::testing::{assert_close, error, floats, int, ints, node, run, string, strings};
use tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx::pb::{AttributeProto, NodeProto, TensorProto};
use tract_onnx::prelude::*;

fn x() -> Tensor {
    tensor2(&[[0.5f32, 0.0], [1.5, 0.0], [2.5, 0.0], [3.5, 0.0]])
}

/// The four-leaf tree of [`super::expected`].
fn tree() -> Vec<AttributeProto> {
    vec![
        ints("nodes_treeids", &[0; 7]),
        ints("nodes_nodeids", &[0, 1, 2, 3, 4, 5, 6]),
        ints("nodes_featureids", &[0; 7]),
        strings(
            "nodes_modes",
            &[
                "BRANCH_LEQ",
                "LEAF",
                "BRANCH_LEQ",
                "LEAF",
                "BRANCH_LEQ",
                "LEAF",
                "LEAF",
            ],
        ),
        ints("nodes_truenodeids", &[1, 0, 3, 0, 5, 0, 0]),
        ints("nodes_falsenodeids", &[2, 0, 4, 0, 6, 0, 0]),
        floats("nodes_values", &[1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 0.0]),
    ]
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_plain_array_view::<f32>()
        .unwrap()
        .iter()
        .copied()
        .collect()
}

/// Equal up to float rounding (NaN to NaN).
fn close(what: &str, got: &[f32], want: &[f32]) {
    assert_close(what, got, want, 1e-6);
}

fn with_base(mut attrs: Vec<AttributeProto>, base: &[f32]) -> Vec<AttributeProto> {
    if !base.is_empty() {
        attrs.push(floats("base_values", base));
    }
    attrs
}

fn single(weights: &[f32], post: &str, base: &[f32]) -> NodeProto {
    let mut attrs = tree();
    attrs.extend([
        strings("classlabels_strings", &["n", "y"]),
        ints("class_treeids", &[0; 4]),
        ints("class_nodeids", &[1, 3, 5, 6]),
        ints("class_ids", &[0; 4]),
        floats("class_weights", weights),
        string("post_transform", post),
    ]);
    node("TreeEnsembleClassifier", with_base(attrs, base))
}

// Two classes scored by one class id (scikit-learn's binary boosting): the label and the
// two scores depend on whether some weight is negative.
#[test]
fn binary_with_one_class_id() {
    for &(weights, post, base, labels, scores) in SINGLE {
        let what = format!("{weights:?} {post} base {base:?}");
        let out = run(classifier::parse, &single(weights, post, base), vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(&labels.map(String::from)), "{what}");
        close(&what, &values(&out[1]), &scores);
    }
    let e = error(
        classifier::parse,
        &single(&[0.3, 0.7, 0.2, 0.0], "PROBIT", &[]),
        vec![x()],
    );
    assert!(
        e.contains("(TreeEnsembleClassifier), attribute 'post_transform'"),
        "{e}"
    );
}

// With both class ids onnxruntime answers the integer 1 or 0 for integer labels, whatever
// the labels are (here 3 and 7), and ignores base_values[0] when there are two.
#[test]
fn binary_with_two_class_ids() {
    for &(labels, base, post, want, scores) in TWO_IDS {
        let what = format!("{labels:?} {post} base {base:?}");
        let mut attrs = tree();
        attrs.extend([
            ints("classlabels_int64s", labels),
            ints("class_treeids", &[0; 8]),
            ints("class_nodeids", &[1, 1, 3, 3, 5, 5, 6, 6]),
            ints("class_ids", &[0, 1, 0, 1, 0, 1, 0, 1]),
            floats("class_weights", &[0.3, 0.7, 0.6, 0.4, -0.1, -0.3, 0.5, 0.5]),
            string("post_transform", post),
        ]);
        let n = node("TreeEnsembleClassifier", with_base(attrs, base));
        let out = run(classifier::parse, &n, vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(&want), "{what}");
        close(&what, &values(&out[1]), &scores);
    }
}

// The label is the best of the classes some leaf scored; a class no leaf reached scores 0.
#[test]
fn several_classes_some_unscored() {
    let mut attrs = tree();
    attrs.extend([
        ints("classlabels_int64s", &[3, 7, 9]),
        ints("class_treeids", &[0; 5]),
        ints("class_nodeids", &[1, 3, 3, 5, 6]),
        ints("class_ids", &[1, 0, 2, 2, 0]),
        floats("class_weights", &[-0.3, -0.7, -0.1, -0.2, 0.0]),
        string("post_transform", "SOFTMAX_ZERO"),
    ]);
    let out = run(
        classifier::parse,
        &node("TreeEnsembleClassifier", attrs),
        vec![x()],
    )
    .unwrap();
    assert_eq!(out[0], tensor1(&UNSCORED.0));
    close("unscored", &values(&out[1]), &UNSCORED.1);
}

// onnxruntime transforms rows of two or more targets, and one target by PROBIT only.
#[test]
fn regressor_post_transforms() {
    for &(post, targets, want) in REGRESSOR {
        let mut attrs = tree();
        let (nodes, ids, weights): (&[i64], &[i64], &[f32]) = if targets == 1 {
            (&[1, 3, 5, 6], &[0; 4], &[0.3, 0.7, -0.2, 0.0])
        } else {
            let w = &[0.3, 0.7, 0.6, 0.4, -0.1, -0.3, 0.5, 0.5];
            (&[1, 1, 3, 3, 5, 5, 6, 6], &[0, 1, 0, 1, 0, 1, 0, 1], w)
        };
        attrs.extend([
            int("n_targets", targets),
            ints("target_treeids", &vec![0; nodes.len()]),
            ints("target_nodeids", nodes),
            ints("target_ids", ids),
            floats("target_weights", weights),
            floats("base_values", &vec![0.1; targets as usize]),
            string("post_transform", post),
        ]);
        let out = run(
            regressor::parse,
            &node("TreeEnsembleRegressor", attrs),
            vec![x()],
        )
        .unwrap();
        assert_eq!(out[0].shape(), &[4, targets as usize]);
        close(&format!("{post} {targets}"), &values(&out[0]), want);
    }
}

/// A tensor attribute of doubles, as skl2onnx writes `*_as_tensor`.
fn doubles(name: &str, values: &[f64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Tensor as i32,
        t: Some(TensorProto {
            data_type: 11,
            dims: vec![values.len() as i64],
            double_data: values.to_vec(),
            ..TensorProto::default()
        }),
        ..AttributeProto::default()
    }
}

fn small_tree() -> Vec<AttributeProto> {
    vec![
        ints("nodes_treeids", &[0; 5]),
        ints("nodes_nodeids", &[0, 1, 2, 3, 4]),
        ints("nodes_featureids", &[0, 0, 1, 0, 0]),
        strings(
            "nodes_modes",
            &["BRANCH_LEQ", "LEAF", "BRANCH_LT", "LEAF", "LEAF"],
        ),
        ints("nodes_truenodeids", &[1, 0, 3, 0, 0]),
        ints("nodes_falsenodeids", &[2, 0, 4, 0, 0]),
        doubles(
            "nodes_values_as_tensor",
            &[0.1000000001, 0.0, 0.3, 0.0, 0.0],
        ),
    ]
}

fn double_x() -> Tensor {
    tensor2(&[
        [0.1f64, 0.0],
        [0.1000000001, 0.0],
        [0.10000001, 0.29999999],
        [0.2, 0.3],
        [0.2, 0.30000001],
    ])
}

// Thresholds and weights that float32 cannot tell apart from their neighbours: compared and
// summed in double, as onnxruntime does for a double input.
#[test]
fn double_attributes_and_inputs() {
    let mut attrs = small_tree();
    attrs.extend([
        int("n_targets", 1),
        ints("target_treeids", &[0; 3]),
        ints("target_nodeids", &[1, 3, 4]),
        ints("target_ids", &[0; 3]),
        doubles("target_weights_as_tensor", &[1.0000000001, 2.25, 1e-9]),
        doubles("base_values_as_tensor", &[0.5]),
    ]);
    let n = node("TreeEnsembleRegressor", attrs);
    let out = run(regressor::parse, &n, vec![double_x()]).unwrap();
    assert_eq!(values(&out[0]), DOUBLE_REGRESSOR);

    let mut attrs = small_tree();
    attrs.extend([
        ints("classlabels_int64s", &[4, 9]),
        ints("class_treeids", &[0; 3]),
        ints("class_nodeids", &[1, 3, 4]),
        ints("class_ids", &[0; 3]),
        doubles("class_weights_as_tensor", &[0.7, -0.2, 1e-9]),
        doubles("base_values_as_tensor", &[0.1]),
        doubles("nodes_hitrates_as_tensor", &[1.0; 5]),
        string("post_transform", "LOGISTIC"),
    ]);
    let n = node("TreeEnsembleClassifier", attrs);
    let out = run(classifier::parse, &n, vec![double_x()]).unwrap();
    assert_eq!(out[0], tensor1(&DOUBLE_CLASSIFIER.0));
    close("double classifier", &values(&out[1]), &DOUBLE_CLASSIFIER.1);
}

#[test]
fn a_value_given_twice_is_refused() {
    let mut attrs = small_tree();
    attrs.push(floats("nodes_values", &[0.1, 0.0, 0.3, 0.0, 0.0]));
    attrs.extend([
        int("n_targets", 1),
        ints("target_treeids", &[0; 3]),
        ints("target_nodeids", &[1, 3, 4]),
        ints("target_ids", &[0; 3]),
        floats("target_weights", &[1.0, 2.0, 3.0]),
    ]);
    let e = error(
        regressor::parse,
        &node("TreeEnsembleRegressor", attrs),
        vec![double_x()],
    );
    assert!(
        e.contains("(TreeEnsembleRegressor), attribute 'nodes_values_as_tensor'"),
        "{e}"
    );
}
