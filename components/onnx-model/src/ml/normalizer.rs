//! `Normalizer`: each row divided by its norm (`norm`: MAX, L1 or L2), output `f32`.
//!
//! Replaces tract's own, which differs from onnxruntime: onnxruntime's MAX divides by the
//! row's largest value (not the largest magnitude, so a row of negatives changes sign), NaNs
//! left out of it; a row whose norm is 0 is copied unchanged; every type is converted to
//! `f32` first and computed in `f32`; L2 is `sign(x) * sqrt(x² / Σx²)`, rounding as onnxruntime
//! does; the norm's name is upper case; and an input of rank above 2 is refused.

use super::op::{MlOp, expanded};
use super::values::{numeric, shaped, to_f32};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let norm = match node.get_attr_opt::<&str>("norm")?.unwrap_or("MAX") {
        "MAX" => Norm::Max,
        "L1" => Norm::L1,
        "L2" => Norm::L2,
        other => node.bail_attr("norm", &format!("MAX, L1 or L2, got {other:?}"))?,
    };
    expanded(Normalizer(norm))
}

#[derive(Debug, Clone, Copy)]
enum Norm {
    Max,
    L1,
    L2,
}

#[derive(Debug)]
struct Normalizer(Norm);

impl Normalizer {
    /// `row` normalised in place.
    fn row(&self, row: &mut [f32]) {
        match self.0 {
            Norm::Max => {
                let max = row.iter().fold(f32::MIN, |m, &v| if m < v { v } else { m });
                if max != 0.0 {
                    row.iter_mut().for_each(|v| *v /= max);
                }
            }
            Norm::L1 => {
                let sum = row.iter().fold(0f32, |s, v| s + v.abs());
                if sum != 0.0 {
                    row.iter_mut().for_each(|v| *v /= sum);
                }
            }
            Norm::L2 => {
                let sum = row.iter().fold(0f32, |s, v| s + v * v);
                if sum != 0.0 {
                    for v in row.iter_mut() {
                        let magnitude = (*v * *v / sum).sqrt();
                        *v = if *v < 0.0 { -magnitude } else { magnitude };
                    }
                }
            }
        }
    }
}

impl MlOp for Normalizer {
    fn name(&self) -> &'static str {
        "Normalizer"
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![Some(DatumType::F32)]
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        numeric("Normalizer", inputs[0].datum_type)?;
        let rank = inputs[0].rank();
        ensure!(
            rank <= 2,
            "Normalizer: input of rank {rank}; expected [N, C] or [C]"
        );
        Ok(tvec![f32::fact(inputs[0].shape.clone())])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = &inputs[0];
        let mut values = to_f32("Normalizer", x)?;
        let columns = x.shape().last().copied().unwrap_or(1).max(1);
        values.chunks_mut(columns).for_each(|row| self.row(row));
        Ok(tvec![shaped(x.shape(), values)?.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{error, node, run, string};
    use super::super::values::slice;
    use super::*;

    fn normalize(norm: &str, x: Tensor) -> Vec<f32> {
        let out = run(
            parse,
            &node("Normalizer", vec![string("norm", norm)]),
            vec![x],
        )
        .unwrap();
        assert_eq!(out[0].datum_type(), DatumType::F32);
        slice::<f32>(&out[0]).unwrap().to_vec()
    }

    fn rows() -> Tensor {
        tensor2(&[
            [1f32, -3.0, 2.0],
            [0.0, 0.0, 0.0],
            [-1.0, -2.0, -4.0],
            [f32::NAN, 1.0, 2.0],
        ])
    }

    fn same(got: &[f32], want: &[f32]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!(g == w || (g.is_nan() && w.is_nan()), "{got:?} != {want:?}");
        }
    }

    // Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper).
    #[test]
    fn max_divides_by_the_largest_value() {
        let want = [
            0.5,
            -1.5,
            1.0,
            0.0,
            0.0,
            0.0,
            1.0,
            2.0,
            4.0,
            f32::NAN,
            0.5,
            1.0,
        ];
        same(&normalize("MAX", rows()), &want);
        let default = run(parse, &node("Normalizer", vec![]), vec![rows()]).unwrap();
        same(slice::<f32>(&default[0]).unwrap(), &want);
    }

    #[test]
    fn l1_divides_by_the_sum_of_magnitudes() {
        let nan = f32::NAN;
        let want = [
            0.16666667,
            -0.5,
            0.33333334,
            0.0,
            0.0,
            0.0,
            -0.14285715,
            -0.2857143,
            -0.5714286,
            nan,
            nan,
            nan,
        ];
        same(&normalize("L1", rows()), &want);
    }

    #[test]
    fn l2_rounds_as_onnxruntime() {
        let nan = f32::NAN;
        let want = [
            0.26726124,
            -0.80178374,
            0.5345225,
            0.0,
            0.0,
            0.0,
            -0.2182179,
            -0.4364358,
            -0.8728716,
            nan,
            nan,
            nan,
        ];
        same(&normalize("L2", rows()), &want);
        // A norm that underflows in f32 leaves the row as it is (the double is rounded first).
        same(
            &normalize("L2", tensor2(&[[1e-30f64, 1e-30]])),
            &[1e-30, 1e-30],
        );
    }

    #[test]
    fn integers_and_vectors() {
        same(
            &normalize("L1", tensor2(&[[1i64, -3, 2]])),
            &[0.16666667, -0.5, 0.33333334],
        );
        same(
            &normalize("MAX", tensor1(&[1i32, -3, 2])),
            &[0.5, -1.5, 1.0],
        );
    }

    #[test]
    fn bad_norm_and_rank_are_refused() {
        let e = error(
            parse,
            &node("Normalizer", vec![string("norm", "max")]),
            vec![rows()],
        );
        assert!(e.contains("(Normalizer), attribute 'norm'"), "{e}");
        let x = Tensor::from_shape(&[1, 2, 2], &[1f32; 4]).unwrap();
        let e = error(parse, &node("Normalizer", vec![]), vec![x]);
        assert!(e.contains("Normalizer: input of rank 3"), "{e}");
    }
}
