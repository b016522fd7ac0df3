//! The SVM operators against onnxruntime's answers for the same nodes ([`super::expected`]).

use super::super::testing::{assert_close, error, floats, int, ints, node, run, string, strings};
use super::super::values::slice;
use super::expected::{BINARY, LINEAR, MULTI, REGRESSOR, REGRESSOR_LINEAR};
use super::{classifier, regressor};
use tract_onnx::pb::AttributeProto;
use tract_onnx::prelude::*;

const SV: [f32; 10] = [1.0, 0.0, 0.0, 1.0, -1.0, -1.0, 2.0, 1.0, -0.5, 0.5];
const COEF3: [f32; 10] = [0.5, -0.25, 0.75, 1.0, -0.5, 0.3, -0.6, -0.2, 0.8, -0.9];

fn x() -> Tensor {
    tensor2(&[
        [1.0f32, -2.0],
        [0.5, 0.25],
        [-3.0, 1.0],
        [0.0, 0.0],
        [2.0, 2.0],
    ])
}

/// Within float32 rounding of onnxruntime (whose GEMM sums in another order).
fn close(what: &str, got: &[f32], want: &[f32]) {
    assert_close(what, got, want, 2e-6);
}

fn kernel(name: &str, params: [f32; 3]) -> Vec<AttributeProto> {
    vec![
        string("kernel_type", name),
        floats("kernel_params", &params),
    ]
}

fn three_classes(k: &str, params: [f32; 3], post: &str, platt: bool) -> Vec<AttributeProto> {
    let mut attrs = vec![
        floats("support_vectors", &SV),
        ints("vectors_per_class", &[2, 1, 2]),
        floats("coefficients", &COEF3),
        floats("rho", &[0.1, -0.2, 0.3]),
        ints("classlabels_ints", &[10, 20, 30]),
        string("post_transform", post),
    ];
    attrs.extend(kernel(k, params));
    if platt {
        attrs.push(floats("prob_a", &[-1.5, -0.7, -2.0]));
        attrs.push(floats("prob_b", &[0.1, -0.3, 0.2]));
    }
    attrs
}

#[test]
fn three_classes_every_kernel_with_and_without_probabilities() {
    for &(k, params, post, platt, labels, scores) in MULTI {
        let what = format!("{k} {params:?} {post} probabilities: {platt}");
        let n = node("SVMClassifier", three_classes(k, params, post, platt));
        let out = run(classifier::parse, &n, vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(labels), "{what}");
        assert_eq!(out[1].shape(), &[5, 3], "{what}");
        close(&what, slice::<f32>(&out[1]).unwrap(), scores);
    }
}

// The label follows the votes, not the probabilities (as scikit-learn's `predict`): with the
// LINEAR kernel the fourth row is voted 10 while its probabilities favour 20.
#[test]
fn the_label_is_the_vote_whatever_the_probabilities() {
    let (_, _, _, _, labels, scores) = MULTI[1];
    let best = |row: &[f32]| (0..3).fold(0, |b, i| if row[i] > row[b] { i } else { b });
    let by_probability: Vec<i64> = scores.chunks(3).map(|r| [10, 20, 30][best(r)]).collect();
    assert_ne!(by_probability, labels, "a case where they differ");
    let n = node(
        "SVMClassifier",
        three_classes("LINEAR", [0.0; 3], "NONE", true),
    );
    let out = run(classifier::parse, &n, vec![x()]).unwrap();
    assert_eq!(out[0], tensor1(labels));
}

fn two_classes(post: &str, platt: bool) -> NodeProto {
    let mut attrs = vec![
        floats("support_vectors", &SV[..6]),
        ints("vectors_per_class", &[2, 1]),
        floats("coefficients", &[0.5, -0.25, -0.75]),
        floats("rho", &[0.1]),
        strings("classlabels_strings", &["neg", "pos"]),
        string("post_transform", post),
    ];
    attrs.extend(kernel("RBF", [0.3, 0.0, 0.0]));
    if platt {
        attrs.push(floats("prob_a", &[-2.5]));
        attrs.push(floats("prob_b", &[0.4]));
    }
    node("SVMClassifier", attrs)
}

use tract_onnx::pb::NodeProto;

#[test]
fn two_classes_answer_two_columns() {
    for &(post, platt, labels, scores) in BINARY {
        let what = format!("{post} probabilities: {platt}");
        let out = run(classifier::parse, &two_classes(post, platt), vec![x()]).unwrap();
        let labels: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        assert_eq!(out[0], tensor1(&labels), "{what}");
        assert_eq!(out[1].shape(), &[5, 2], "{what}");
        close(&what, slice::<f32>(&out[1]).unwrap(), scores);
    }
    let e = error(classifier::parse, &two_classes("PROBIT", false), vec![x()]);
    assert!(
        e.contains("(SVMClassifier), attribute 'post_transform'"),
        "{e}"
    );
}

#[test]
fn the_linear_form_without_support_vectors() {
    for &(labels, coefficients, post, platt, want_labels, scores) in LINEAR {
        let what = format!("{labels:?} {coefficients:?} {post} probabilities: {platt}");
        let mut attrs = vec![
            floats("coefficients", coefficients),
            floats("rho", &[0.25]),
            ints("classlabels_ints", labels),
            string("post_transform", post),
        ];
        attrs.extend(kernel("RBF", [0.3, 0.0, 0.0]));
        if platt {
            attrs.push(floats("prob_a", &[1.0]));
            attrs.push(floats("prob_b", &[0.0]));
        }
        let out = run(classifier::parse, &node("SVMClassifier", attrs), vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(want_labels), "{what}");
        close(&what, slice::<f32>(&out[1]).unwrap(), scores);
    }
}

#[test]
fn classifier_inputs_and_attributes_are_checked() {
    let n = node(
        "SVMClassifier",
        three_classes("RBF", [0.3, 0.0, 0.0], "NONE", false),
    );
    let e = error(classifier::parse, &n, vec![tensor2(&[[1f32, 2.0, 3.0]])]);
    assert!(
        e.contains("SVMClassifier: input of 3 features; the model's vectors have 2"),
        "{e}"
    );
    // Double and integer inputs are read as float, as onnxruntime does.
    let as_double = x().cast_to::<f64>().unwrap().into_owned();
    let out = run(classifier::parse, &n, vec![as_double]).unwrap();
    assert_eq!(out[0], tensor1(MULTI[4].4));
    let ints_x = tensor2(&[[1i64, -2], [-3, 1], [0, 0], [2, 2]]);
    let out = run(classifier::parse, &n, vec![ints_x]).unwrap();
    assert_eq!(out[0], tensor1(&[10i64, 10, 30, 10]));
    let mut wrong = three_classes("RBF", [0.3, 0.0, 0.0], "NONE", false);
    wrong[1] = ints("vectors_per_class", &[2, 3]);
    let e = error(classifier::parse, &node("SVMClassifier", wrong), vec![x()]);
    assert!(
        e.contains("(SVMClassifier), attribute 'vectors_per_class'"),
        "{e}"
    );
    let mut wrong = three_classes("RBF", [0.3, 0.0, 0.0], "NONE", false);
    wrong[3] = floats("rho", &[0.1]);
    let e = error(classifier::parse, &node("SVMClassifier", wrong), vec![x()]);
    assert!(e.contains("(SVMClassifier), attribute 'rho'"), "{e}");
    // Counts a hostile file chose to overflow the sum are refused, not wrapped.
    let mut wrong = three_classes("RBF", [0.3, 0.0, 0.0], "NONE", false);
    wrong[1] = ints("vectors_per_class", &[i64::MAX, i64::MAX, 2]);
    let e = error(classifier::parse, &node("SVMClassifier", wrong), vec![x()]);
    assert!(e.contains("attribute 'vectors_per_class'"), "{e}");
}

fn svr(k: &str, params: [f32; 3], one_class: bool) -> NodeProto {
    let mut attrs = vec![
        floats("support_vectors", &SV),
        int("n_supports", 5),
        floats("coefficients", &COEF3[..5]),
        floats("rho", &[0.7]),
        int("one_class", i64::from(one_class)),
        string("post_transform", "LOGISTIC"),
    ];
    attrs.extend(kernel(k, params));
    node("SVMRegressor", attrs)
}

// onnxruntime ignores the regressor's post_transform (LOGISTIC in every case here).
#[test]
fn regressor_every_kernel_and_one_class() {
    for &(k, params, one_class, values) in REGRESSOR {
        let what = format!("{k} {params:?} one class: {one_class}");
        let out = run(regressor::parse, &svr(k, params, one_class), vec![x()]).unwrap();
        assert_eq!(out[0].shape(), &[5, 1], "{what}");
        close(&what, slice::<f32>(&out[0]).unwrap(), values);
    }
    let linear = node(
        "SVMRegressor",
        vec![
            floats("coefficients", &[0.3, -0.6]),
            floats("rho", &[0.7]),
            int("n_supports", 0),
            string("kernel_type", "RBF"),
        ],
    );
    let out = run(regressor::parse, &linear, vec![x()]).unwrap();
    close(
        "linear form",
        slice::<f32>(&out[0]).unwrap(),
        REGRESSOR_LINEAR,
    );
}

#[test]
fn regressor_inputs_and_attributes_are_checked() {
    let n = svr("RBF", [0.3, 0.0, 0.0], false);
    let e = error(regressor::parse, &n, vec![tensor2(&[[1f32, 2.0, 3.0]])]);
    assert!(e.contains("SVMRegressor: input of 3 features"), "{e}");
    let mut wrong = vec![floats("support_vectors", &SV[..9]), int("n_supports", 5)];
    wrong.extend([floats("coefficients", &COEF3[..5]), floats("rho", &[0.7])]);
    let e = error(regressor::parse, &node("SVMRegressor", wrong), vec![x()]);
    assert!(
        e.contains("(SVMRegressor), attribute 'support_vectors'"),
        "{e}"
    );
    let e = error(
        regressor::parse,
        &node("SVMRegressor", vec![floats("rho", &[1.0])]),
        vec![x()],
    );
    assert!(
        e.contains("(SVMRegressor), attribute 'coefficients'"),
        "{e}"
    );
}
