// Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper; opset 1 for
// classes_strings, 2 for keys_*/values_*).

use super::super::testing::{error, float, floats, int, ints, node, run, string, strings};
use super::super::values::{shaped, slice};
use super::*;

fn texts(shape: &[usize], values: &[&str]) -> Tensor {
    shaped(shape, values.iter().map(|s| s.to_string()).collect()).unwrap()
}

fn strings_of(t: &Tensor) -> Vec<String> {
    slice::<String>(t).unwrap().to_vec()
}

#[test]
fn opset_1_strings_to_positions_and_back() {
    let n = node(
        "LabelEncoder",
        vec![strings("classes_strings", &["x", "y", "z"])],
    );
    let out = run(parse, &n, vec![texts(&[2, 1], &["y", "q"])]).unwrap();
    assert_eq!(out[0].shape(), &[2, 1]);
    assert_eq!(slice::<i64>(&out[0]).unwrap(), [1, -1]);
    let out = run(parse, &n, vec![tensor2(&[[1i64], [9]])]).unwrap();
    assert_eq!(strings_of(&out[0]), ["y", "_Unused"]);
    let mut n = n;
    n.attribute.push(int("default_int64", -5));
    n.attribute.push(string("default_string", "??"));
    let out = run(parse, &n, vec![texts(&[2], &["z", "q"])]).unwrap();
    assert_eq!(slice::<i64>(&out[0]).unwrap(), [2, -5]);
    let out = run(parse, &n, vec![tensor2(&[[2i64], [7], [-1]])]).unwrap();
    assert_eq!(strings_of(&out[0]), ["z", "??", "??"]);
}

#[test]
fn opset_2_strings_to_numbers() {
    let n = node(
        "LabelEncoder",
        vec![
            strings("keys_strings", &["a", "b"]),
            ints("values_int64s", &[10, 20]),
        ],
    );
    let out = run(parse, &n, vec![texts(&[3, 1], &["a", "b", "c"])]).unwrap();
    assert_eq!(out[0].shape(), &[3, 1]);
    assert_eq!(slice::<i64>(&out[0]).unwrap(), [10, 20, -1]);
    let mut n = n;
    n.attribute.push(int("default_int64", 7));
    let out = run(parse, &n, vec![texts(&[2], &["a", "c"])]).unwrap();
    assert_eq!(slice::<i64>(&out[0]).unwrap(), [10, 7]);
    let n = node(
        "LabelEncoder",
        vec![
            strings("keys_strings", &["a", "b"]),
            floats("values_floats", &[1.5, 2.5]),
        ],
    );
    let out = run(parse, &n, vec![texts(&[2, 1], &["a", "c"])]).unwrap();
    let got = slice::<f32>(&out[0]).unwrap();
    assert_eq!(got[0], 1.5);
    assert!(
        got[1] == 0.0 && got[1].is_sign_negative(),
        "default_float is -0.0"
    );
}

#[test]
fn opset_2_to_strings() {
    let n = node(
        "LabelEncoder",
        vec![
            ints("keys_int64s", &[1, 2]),
            strings("values_strings", &["A", "B"]),
        ],
    );
    let out = run(parse, &n, vec![tensor2(&[[1i64], [3]])]).unwrap();
    assert_eq!(out[0].datum_type(), DatumType::String);
    assert_eq!(strings_of(&out[0]), ["A", "_Unused"]);
    let n = node(
        "LabelEncoder",
        vec![
            strings("keys_strings", &["a"]),
            strings("values_strings", &["A"]),
            string("default_string", "-"),
        ],
    );
    let out = run(parse, &n, vec![texts(&[2, 1], &["a", "c"])]).unwrap();
    assert_eq!(strings_of(&out[0]), ["A", "-"]);
}

#[test]
fn float_keys_match_by_value_and_nan_matches_nothing() {
    let n = node(
        "LabelEncoder",
        vec![
            floats("keys_floats", &[1.5, f32::NAN, 0.0]),
            ints("values_int64s", &[5, 6, 8]),
        ],
    );
    let x = tensor2(&[[1.5f32], [f32::NAN], [3.0], [-0.0]]);
    let out = run(parse, &n, vec![x]).unwrap();
    assert_eq!(slice::<i64>(&out[0]).unwrap(), [5, -1, -1, 8]);
    let n = node(
        "LabelEncoder",
        vec![
            floats("keys_floats", &[1.5]),
            floats("values_floats", &[2.0]),
            float("default_float", 9.0),
        ],
    );
    let out = run(parse, &n, vec![tensor1(&[1.5f32, 3.0])]).unwrap();
    assert_eq!(slice::<f32>(&out[0]).unwrap(), [2.0, 9.0]);
}

#[test]
fn a_key_listed_twice_keeps_its_first_value() {
    let n = node(
        "LabelEncoder",
        vec![ints("keys_int64s", &[1, 1]), ints("values_int64s", &[5, 6])],
    );
    let out = run(parse, &n, vec![tensor0(1i64)]).unwrap();
    assert_eq!(out[0].shape(), &[] as &[usize]);
    assert_eq!(slice::<i64>(&out[0]).unwrap(), [5]);
}

#[test]
fn attributes_and_input_types_are_checked() {
    let x = || tensor2(&[[1i64]]);
    let n = node(
        "LabelEncoder",
        vec![ints("keys_int64s", &[1, 2]), ints("values_int64s", &[5])],
    );
    let e = error(parse, &n, vec![x()]);
    assert!(
        e.contains("(LabelEncoder), attribute 'values_strings'"),
        "{e}"
    );
    assert!(e.contains("as many values as keys (2), got 1"), "{e}");
    let n = node(
        "LabelEncoder",
        vec![
            ints("keys_int64s", &[1]),
            strings("keys_strings", &["a"]),
            ints("values_int64s", &[5]),
        ],
    );
    let e = error(parse, &n, vec![x()]);
    assert!(
        e.contains("(LabelEncoder), attribute 'keys_strings'"),
        "{e}"
    );
    let n = node(
        "LabelEncoder",
        vec![ints("keys_int64s", &[1]), ints("values_int64s", &[5])],
    );
    let e = error(parse, &n, vec![texts(&[1], &["a"])]);
    assert!(
        e.contains("LabelEncoder: input of type String; keys_int64s needs int64"),
        "{e}"
    );
    let n = node("LabelEncoder", vec![ints("keys_tensor", &[1])]);
    let e = error(parse, &n, vec![x()]);
    assert!(e.contains("(LabelEncoder), attribute 'keys_tensor'"), "{e}");
}
