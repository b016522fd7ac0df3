//! `Binarizer`: 1 where the input is above `threshold`, else 0, in the input's type
//! (scikit-learn's Binarizer, before a BernoulliNB for one).
//!
//! As onnxruntime, a NaN is refused with its position rather than given a class: it is
//! neither above nor at most the threshold.

use super::op::{MlOp, expanded};
use super::values::{numeric, shaped, slice};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let threshold: f32 = node.get_attr_opt("threshold")?.unwrap_or(0.0);
    expanded(Binarizer { threshold })
}

#[derive(Debug)]
struct Binarizer {
    threshold: f32,
}

/// `x` with each element 1 when `above` says so, else 0; a NaN (`is_nan`) is an error.
fn binarize<T: Datum + Copy>(
    x: &Tensor,
    one: T,
    zero: T,
    above: impl Fn(T) -> bool,
    is_nan: impl Fn(T) -> bool,
) -> TractResult<Tensor> {
    let values = slice::<T>(x)?;
    if let Some(at) = values.iter().position(|&v| is_nan(v)) {
        bail!("Binarizer: the input value at index {at} is NaN");
    }
    let out = values
        .iter()
        .map(|&v| if above(v) { one } else { zero })
        .collect();
    shaped(x.shape(), out)
}

impl MlOp for Binarizer {
    fn name(&self) -> &'static str {
        "Binarizer"
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        numeric("Binarizer", inputs[0].datum_type)?;
        Ok(tvec![inputs[0].without_value()])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = &inputs[0];
        let t = self.threshold;
        let out = match x.datum_type() {
            DatumType::F32 => binarize(x, 1f32, 0.0, |v| v > t, f32::is_nan)?,
            DatumType::F64 => binarize(x, 1f64, 0.0, |v| v > f64::from(t), f64::is_nan)?,
            DatumType::I64 => binarize(x, 1i64, 0, |v| v as f64 > f64::from(t), |_| false)?,
            _ => binarize(x, 1i32, 0, |v| f64::from(v) > f64::from(t), |_| false)?,
        };
        Ok(tvec![out.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{error, float, node, run};
    use super::super::values::slice;
    use super::*;

    // Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper).
    #[test]
    fn above_the_threshold_is_one() {
        let n = node("Binarizer", vec![float("threshold", 0.5)]);
        let out = run(
            parse,
            &n,
            vec![tensor2(&[[0.5f32, -1.0, 0.6], [2.0, 0.0, 1.0]])],
        )
        .unwrap();
        assert_eq!(out[0].datum_type(), DatumType::F32);
        assert_eq!(
            slice::<f32>(&out[0]).unwrap(),
            [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
        );
    }

    #[test]
    fn the_threshold_defaults_to_zero_and_any_rank_is_kept() {
        let x = Tensor::from_shape(&[1, 2, 2], &[0f32, 1.0, -1.0, 1e-9]).unwrap();
        let out = run(parse, &node("Binarizer", vec![]), vec![x]).unwrap();
        assert_eq!(out[0].shape(), &[1, 2, 2]);
        assert_eq!(slice::<f32>(&out[0]).unwrap(), [0.0, 1.0, 0.0, 1.0]);
    }

    // onnxruntime implements float only; the specification's other types keep their type.
    #[test]
    fn other_types_keep_their_type() {
        let n = node("Binarizer", vec![float("threshold", 1.0)]);
        let out = run(parse, &n, vec![tensor2(&[[0i64, 1, 2]])]).unwrap();
        assert_eq!(slice::<i64>(&out[0]).unwrap(), [0, 0, 1]);
        let out = run(parse, &n, vec![tensor2(&[[0.5f64, 1.5]])]).unwrap();
        assert_eq!(slice::<f64>(&out[0]).unwrap(), [0.0, 1.0]);
    }

    #[test]
    fn nan_is_refused_with_its_position() {
        let x = tensor2(&[[0.5f32, -1.0, f32::NAN]]);
        let e = error(
            parse,
            &node("Binarizer", vec![float("threshold", 0.5)]),
            vec![x],
        );
        assert!(
            e.contains("Binarizer: the input value at index 2 is NaN"),
            "{e}"
        );
    }
}
