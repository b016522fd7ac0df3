//! `Imputer`: replaces a missing value (`replaced_value_*`, NaN for SimpleImputer's exports)
//! with the column's imputed value, keeping the input's type and shape.
//!
//! As onnxruntime: exactly one of `imputed_value_floats` and `imputed_value_int64s` is given;
//! a float input reads the floats and an integer input the int64s; when the imputed values
//! are not one per column (of the last axis), every column takes the first.

use super::op::{MlOp, expanded};
use super::values::{numeric, shaped, slice};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let floats = node
        .get_attr_opt_vec::<f32>("imputed_value_floats")?
        .unwrap_or_default();
    let ints = node
        .get_attr_opt_vec::<i64>("imputed_value_int64s")?
        .unwrap_or_default();
    node.expect_attr(
        "imputed_value_floats",
        floats.is_empty() != ints.is_empty(),
        || "exactly one of imputed_value_floats and imputed_value_int64s".to_string(),
    )?;
    let imputed = if ints.is_empty() {
        Imputed::Floats(
            floats,
            node.get_attr_opt("replaced_value_float")?.unwrap_or(0.0),
        )
    } else {
        Imputed::Ints(
            ints,
            node.get_attr_opt("replaced_value_int64")?.unwrap_or(0),
        )
    };
    expanded(Imputer(imputed))
}

#[derive(Debug)]
enum Imputed {
    /// Values, and the value they replace (NaN: every NaN).
    Floats(Vec<f32>, f32),
    Ints(Vec<i64>, i64),
}

#[derive(Debug)]
struct Imputer(Imputed);

/// `x` with each element equal to `missing` (by `is_missing`) replaced by its column's value.
fn impute<T: Datum + Copy>(
    x: &Tensor,
    values: &[T],
    is_missing: impl Fn(T) -> bool,
) -> TractResult<Tensor> {
    let columns = *x
        .shape()
        .last()
        .context("Imputer: a scalar input; expected [N, C]")?;
    let per_column = values.len() == columns;
    let out = slice::<T>(x)?
        .iter()
        .enumerate()
        .map(|(i, &v)| match is_missing(v) {
            true if per_column => values[i % columns],
            true => values[0],
            false => v,
        });
    shaped(x.shape(), out.collect())
}

impl MlOp for Imputer {
    fn name(&self) -> &'static str {
        "Imputer"
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        numeric("Imputer", inputs[0].datum_type)?;
        Ok(tvec![inputs[0].without_value()])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = &inputs[0];
        let dt = x.datum_type();
        let out = match &self.0 {
            Imputed::Floats(values, missing) if dt.is_float() => {
                let missing = *missing;
                if dt == DatumType::F32 {
                    impute(x, values, |v: f32| {
                        v == missing || (missing.is_nan() && v.is_nan())
                    })?
                } else {
                    let values: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
                    let missing = f64::from(missing);
                    impute(x, &values, |v: f64| {
                        v == missing || (missing.is_nan() && v.is_nan())
                    })?
                }
            }
            Imputed::Ints(values, missing) if dt == DatumType::I64 => {
                impute(x, values, |v: i64| v == *missing)?
            }
            Imputed::Ints(values, missing) if dt == DatumType::I32 => {
                let values = values.iter().map(|&v| v as i32).collect::<Vec<_>>();
                impute(x, &values, |v: i32| i64::from(v) == *missing)?
            }
            Imputed::Floats(..) => bail!(
                "Imputer: an input of type {dt:?} needs imputed_value_int64s, the node has \
                 imputed_value_floats"
            ),
            Imputed::Ints(..) => bail!(
                "Imputer: an input of type {dt:?} needs imputed_value_floats, the node has \
                 imputed_value_int64s"
            ),
        };
        Ok(tvec![out.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{error, float, floats, int, ints, node, run};
    use super::super::values::slice;
    use super::*;

    fn nan_imputer(values: &[f32]) -> NodeProto {
        node(
            "Imputer",
            vec![
                floats("imputed_value_floats", values),
                float("replaced_value_float", f32::NAN),
            ],
        )
    }

    fn gappy() -> Tensor {
        tensor2(&[[1f32, f32::NAN, 3.0], [f32::NAN, 5.0, -1.0]])
    }

    // Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper).
    #[test]
    fn nan_takes_its_columns_value() {
        let out = run(parse, &nan_imputer(&[7.0, 8.0, 9.0]), vec![gappy()]).unwrap();
        assert_eq!(out[0].shape(), &[2, 3]);
        assert_eq!(
            slice::<f32>(&out[0]).unwrap(),
            [1.0, 8.0, 3.0, 7.0, 5.0, -1.0]
        );
    }

    #[test]
    fn one_value_or_a_wrong_count_imputes_the_first_everywhere() {
        let out = run(parse, &nan_imputer(&[9.0]), vec![gappy()]).unwrap();
        assert_eq!(
            slice::<f32>(&out[0]).unwrap(),
            [1.0, 9.0, 3.0, 9.0, 5.0, -1.0]
        );
        let out = run(parse, &nan_imputer(&[7.0, 8.0]), vec![gappy()]).unwrap();
        assert_eq!(
            slice::<f32>(&out[0]).unwrap(),
            [1.0, 7.0, 3.0, 7.0, 5.0, -1.0]
        );
    }

    #[test]
    fn the_replaced_value_defaults_to_zero_and_may_be_any_number() {
        let x = || tensor2(&[[0f32, f32::NAN, -1.0]]);
        let n = node(
            "Imputer",
            vec![floats("imputed_value_floats", &[7.0, 8.0, 9.0])],
        );
        let out = run(parse, &n, vec![x()]).unwrap();
        let got = slice::<f32>(&out[0]).unwrap();
        assert_eq!((got[0], got[2]), (7.0, -1.0));
        assert!(got[1].is_nan());
        let mut n = n;
        n.attribute.push(float("replaced_value_float", -1.0));
        let out = run(parse, &n, vec![x()]).unwrap();
        assert_eq!(slice::<f32>(&out[0]).unwrap()[2], 9.0);
    }

    #[test]
    fn integers_read_the_int64_attributes() {
        let n = node(
            "Imputer",
            vec![
                ints("imputed_value_int64s", &[7, 8, 9]),
                int("replaced_value_int64", -1),
            ],
        );
        let out = run(parse, &n, vec![tensor2(&[[1i64, -1, 3], [-1, 5, -1]])]).unwrap();
        assert_eq!(out[0].datum_type(), DatumType::I64);
        assert_eq!(slice::<i64>(&out[0]).unwrap(), [1, 8, 3, 7, 5, 9]);
        let e = error(parse, &nan_imputer(&[7.0]), vec![tensor2(&[[1i64]])]);
        assert!(
            e.contains("Imputer: an input of type I64 needs imputed_value_int64s"),
            "{e}"
        );
    }

    #[test]
    fn a_vector_is_one_row() {
        let out = run(
            parse,
            &nan_imputer(&[7.0, 8.0, 9.0]),
            vec![tensor1(&[f32::NAN, 1.0, f32::NAN])],
        )
        .unwrap();
        assert_eq!(slice::<f32>(&out[0]).unwrap(), [7.0, 1.0, 9.0]);
    }

    #[test]
    fn exactly_one_list_of_values() {
        let e = error(parse, &node("Imputer", vec![]), vec![gappy()]);
        assert!(
            e.contains("(Imputer), attribute 'imputed_value_floats'"),
            "{e}"
        );
        let both = node(
            "Imputer",
            vec![
                floats("imputed_value_floats", &[1.0]),
                ints("imputed_value_int64s", &[1]),
            ],
        );
        let e = error(parse, &both, vec![gappy()]);
        assert!(e.contains("exactly one of imputed_value_floats and imputed_value_int64s"));
    }
}
