//! `OneHotEncoder`: each input element becomes a row of `f32` with a 1 at its category's
//! position among `cats_int64s` or `cats_strings`; the output is the input's shape with that
//! row appended (skl2onnx feeds `[N, 1]` columns: `[N, 1, n_cats]`, reshaped after).
//!
//! As onnxruntime: a category listed twice answers at its last position; a number is compared
//! as an integer (a float truncated, NaN matching nothing); a string input against integer
//! categories (or the reverse) matches nothing; an unknown value gives a row of zeros, or with
//! `zeros` = 0 an error.

use super::op::{MlOp, expanded};
use super::values::{shaped, slice};
use std::collections::HashMap;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let ints = node.get_attr_opt_vec::<i64>("cats_int64s")?;
    let strings = node.get_attr_opt_vec::<String>("cats_strings")?;
    let categories = match (ints, strings) {
        (Some(ints), None) => Categories::Ints(positions(ints)),
        (None, Some(strings)) => Categories::Strings(positions(strings)),
        _ => node.bail_attr("cats_int64s", "exactly one of cats_int64s and cats_strings")?,
    };
    let zeros: i64 = node.get_attr_opt("zeros")?.unwrap_or(1);
    let count = match &categories {
        Categories::Ints(map) => map.values().max(),
        Categories::Strings(map) => map.values().max(),
    };
    let count = count.map_or(0, |&last| last + 1);
    expanded(OneHotEncoder {
        categories,
        count,
        zeros: zeros != 0,
    })
}

/// Each category's position, the last one where it is listed twice.
fn positions<K: std::hash::Hash + Eq>(cats: Vec<K>) -> HashMap<K, usize> {
    cats.into_iter().enumerate().map(|(i, k)| (k, i)).collect()
}

#[derive(Debug)]
enum Categories {
    Ints(HashMap<i64, usize>),
    Strings(HashMap<String, usize>),
}

#[derive(Debug)]
struct OneHotEncoder {
    categories: Categories,
    /// The row's width: the categories listed, duplicates included.
    count: usize,
    /// Whether an unknown value gives zeros (else an error).
    zeros: bool,
}

/// A float as the integer onnxruntime compares (truncated), or `None` where that conversion
/// is undefined (NaN, infinite, out of range).
fn truncated(v: f64) -> Option<i64> {
    (v.is_finite() && v >= i64::MIN as f64 && v < i64::MAX as f64).then_some(v as i64)
}

impl OneHotEncoder {
    fn int(&self, v: Option<i64>) -> Option<usize> {
        match &self.categories {
            Categories::Ints(map) => v.and_then(|v| map.get(&v).copied()),
            Categories::Strings(_) => None,
        }
    }

    /// Every input element's position (`None`: unknown).
    fn positions(&self, x: &Tensor) -> TractResult<Vec<Option<usize>>> {
        Ok(match x.datum_type() {
            DatumType::String => match &self.categories {
                Categories::Strings(map) => slice::<String>(x)?
                    .iter()
                    .map(|s| map.get(s).copied())
                    .collect(),
                Categories::Ints(_) => vec![None; x.len()],
            },
            DatumType::I64 => slice::<i64>(x)?
                .iter()
                .map(|&v| self.int(Some(v)))
                .collect(),
            DatumType::I32 => slice::<i32>(x)?
                .iter()
                .map(|&v| self.int(Some(v.into())))
                .collect(),
            DatumType::F32 => {
                let xs = slice::<f32>(x)?.iter();
                xs.map(|&v| self.int(truncated(v.into()))).collect()
            }
            DatumType::F64 => slice::<f64>(x)?
                .iter()
                .map(|&v| self.int(truncated(v)))
                .collect(),
            dt => bail!("OneHotEncoder: input of type {dt:?}; expected string or a number"),
        })
    }
}

impl MlOp for OneHotEncoder {
    fn name(&self) -> &'static str {
        "OneHotEncoder"
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![Some(DatumType::F32)]
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let mut shape: TVec<TDim> = inputs[0].shape.iter().cloned().collect();
        shape.push(self.count.to_dim());
        Ok(tvec![f32::fact(shape)])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = &inputs[0];
        let positions = self.positions(x)?;
        if !self.zeros && positions.contains(&None) {
            bail!("OneHotEncoder: a value that is not a category, and zeros is 0");
        }
        let mut out = vec![0f32; positions.len() * self.count];
        for (row, at) in positions.iter().enumerate() {
            if let Some(at) = at {
                out[row * self.count + at] = 1.0;
            }
        }
        let mut shape = x.shape().to_vec();
        shape.push(self.count);
        Ok(tvec![shaped(&shape, out)?.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{error, int, ints, node, run, strings};
    use super::super::values::slice;
    use super::*;

    fn column(values: &[&str]) -> Tensor {
        let values: Vec<String> = values.iter().map(|s| s.to_string()).collect();
        shaped(&[values.len(), 1], values).unwrap()
    }

    fn encoded(n: &NodeProto, x: Tensor) -> (Vec<usize>, Vec<f32>) {
        let out = run(parse, n, vec![x]).unwrap();
        (
            out[0].shape().to_vec(),
            slice::<f32>(&out[0]).unwrap().to_vec(),
        )
    }

    // Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper).
    #[test]
    fn a_string_column_gains_an_axis() {
        let n = node(
            "OneHotEncoder",
            vec![strings("cats_strings", &["a", "b", "c"])],
        );
        let (shape, values) = encoded(&n, column(&["a", "c", "z"]));
        assert_eq!(shape, [3, 1, 3]);
        assert_eq!(values, [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn unknown_with_zeros_0_is_an_error() {
        let n = node(
            "OneHotEncoder",
            vec![strings("cats_strings", &["a", "b", "c"]), int("zeros", 0)],
        );
        let (_, values) = encoded(&n, column(&["b"]));
        assert_eq!(values, [0.0, 1.0, 0.0]);
        let e = error(parse, &n, vec![column(&["a", "z"])]);
        assert!(
            e.contains("OneHotEncoder: a value that is not a category"),
            "{e}"
        );
    }

    #[test]
    fn numbers_compare_as_integers() {
        let n = node("OneHotEncoder", vec![ints("cats_int64s", &[3, 1, 7])]);
        let (shape, values) = encoded(&n, tensor2(&[[1i64], [7], [2]]));
        assert_eq!(shape, [3, 1, 3]);
        assert_eq!(values, [0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        let x = tensor2(&[[1f32], [7.9], [2.0], [-0.5], [f32::NAN]]);
        let (_, values) = encoded(&n, x);
        let want = [
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0; 3],
            [0.0; 3],
            [0.0; 3],
        ];
        assert_eq!(values, want.concat());
        let (_, values) = encoded(&n, tensor2(&[[3.2f64]]));
        assert_eq!(values, [1.0, 0.0, 0.0]);
    }

    #[test]
    fn nan_does_not_match_category_zero() {
        let n = node("OneHotEncoder", vec![ints("cats_int64s", &[0, 1])]);
        let (_, values) = encoded(&n, tensor1(&[f32::NAN, 0.0]));
        assert_eq!(values, [0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn other_shapes_and_mismatched_kinds() {
        let n = node(
            "OneHotEncoder",
            vec![strings("cats_strings", &["a", "b", "c"])],
        );
        let x = shaped(&[2, 2], ["a", "c", "b", "q"].map(String::from).to_vec()).unwrap();
        let (shape, values) = encoded(&n, x);
        assert_eq!(shape, [2, 2, 3]);
        assert_eq!(values, [1., 0., 0., 0., 0., 1., 0., 1., 0., 0., 0., 0.]);
        let (shape, values) = encoded(&n, tensor1(&[3i64]));
        assert_eq!((shape, values), (vec![1, 3], vec![0.0; 3]));
    }

    #[test]
    fn a_category_listed_twice_answers_at_its_last_position() {
        let n = node(
            "OneHotEncoder",
            vec![strings("cats_strings", &["a", "a", "b"])],
        );
        let (shape, values) = encoded(&n, column(&["a"]));
        assert_eq!((shape, values), (vec![1, 1, 3], vec![0.0, 1.0, 0.0]));
    }

    #[test]
    fn exactly_one_list_of_categories() {
        let e = error(parse, &node("OneHotEncoder", vec![]), vec![column(&["a"])]);
        assert!(
            e.contains("(OneHotEncoder), attribute 'cats_int64s'"),
            "{e}"
        );
        let both = node(
            "OneHotEncoder",
            vec![strings("cats_strings", &["a"]), ints("cats_int64s", &[1])],
        );
        let e = error(parse, &both, vec![column(&["a"])]);
        assert!(
            e.contains("exactly one of cats_int64s and cats_strings"),
            "{e}"
        );
    }
}
