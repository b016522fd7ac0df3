//! `Scaler`: `(x - offset) * scale`, what skl2onnx writes for StandardScaler, MinMaxScaler,
//! MaxAbsScaler and RobustScaler. `offset` and `scale` hold one value for every column or one
//! per column (of the last axis); the output is `f32` whatever the numeric input.
//!
//! As onnxruntime: both attributes are required and of one length, and a double input is
//! computed in double then rounded (an `f32` input in `f32`), so large values keep their
//! difference from the offset.

use super::op::{MlOp, expanded};
use super::values::{numeric, shaped, slice, to_f32};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let offset = node.get_attr_opt_vec::<f32>("offset")?.unwrap_or_default();
    let scale = node.get_attr_opt_vec::<f32>("scale")?.unwrap_or_default();
    node.expect_attr("scale", !scale.is_empty(), "at least one value")?;
    node.expect_attr("offset", offset.len() == scale.len(), || {
        format!(
            "as many values as scale ({}), got {}",
            scale.len(),
            offset.len()
        )
    })?;
    expanded(Scaler { offset, scale })
}

#[derive(Debug)]
struct Scaler {
    offset: Vec<f32>,
    scale: Vec<f32>,
}

impl MlOp for Scaler {
    fn name(&self) -> &'static str {
        "Scaler"
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![Some(DatumType::F32)]
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        numeric("Scaler", inputs[0].datum_type)?;
        Ok(tvec![f32::fact(inputs[0].shape.clone())])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = &inputs[0];
        let columns = match x.shape().last() {
            Some(&c) => c,
            None => bail!("Scaler: a scalar input; expected [N, C]"),
        };
        let per_column = self.scale.len() > 1;
        ensure!(
            !per_column || self.scale.len() == columns,
            "Scaler: offset and scale hold {} values for an input of {columns} columns; \
             expected 1 or {columns}",
            self.scale.len()
        );
        let at = |i: usize| if per_column { i % columns } else { 0 };
        let values: Vec<f32> = if x.datum_type() == DatumType::F64 {
            let xs = slice::<f64>(x)?.iter().enumerate();
            xs.map(|(i, &v)| {
                ((v - f64::from(self.offset[at(i)])) * f64::from(self.scale[at(i)])) as f32
            })
            .collect()
        } else {
            let xs = to_f32("Scaler", x)?.into_iter().enumerate();
            xs.map(|(i, v)| (v - self.offset[at(i)]) * self.scale[at(i)])
                .collect()
        };
        Ok(tvec![shaped(x.shape(), values)?.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{error, floats, node, run};
    use super::super::values::slice;
    use super::*;

    fn scaler(offset: &[f32], scale: &[f32]) -> NodeProto {
        node(
            "Scaler",
            vec![floats("offset", offset), floats("scale", scale)],
        )
    }

    fn values(t: &Tensor) -> Vec<f32> {
        slice::<f32>(t).unwrap().to_vec()
    }

    // Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper).
    #[test]
    fn one_value_for_every_column() {
        let x = tensor2(&[[1.5f32, 2.0, 3.0], [4.0, 5.0, f32::NAN]]);
        let out = run(parse, &scaler(&[1.0], &[2.0]), vec![x]).unwrap();
        assert_eq!(out[0].shape(), &[2, 3]);
        let got = values(&out[0]);
        assert_eq!(got[..5], [1.0, 2.0, 4.0, 6.0, 8.0]);
        assert!(got[5].is_nan());
    }

    #[test]
    fn one_value_per_column() {
        let x = tensor2(&[[1.5f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let out = run(parse, &scaler(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0]), vec![x]).unwrap();
        assert_eq!(values(&out[0]), [1.0, 0.0, 0.0, 6.0, 9.0, 12.0]);
    }

    #[test]
    fn integer_inputs_give_floats() {
        let x = tensor2(&[[1i64, 2], [3, 4]]);
        let out = run(parse, &scaler(&[0.5], &[2.0]), vec![x]).unwrap();
        assert_eq!(out[0].datum_type(), DatumType::F32);
        assert_eq!(values(&out[0]), [1.0, 3.0, 5.0, 7.0]);
        let x = tensor2(&[[1i32, 2], [3, 4]]);
        let out = run(parse, &scaler(&[0.5, 1.0], &[2.0, 3.0]), vec![x]).unwrap();
        assert_eq!(values(&out[0]), [1.0, 3.0, 5.0, 9.0]);
    }

    #[test]
    fn a_double_is_computed_in_double() {
        // onnxruntime: 16777217 - 16777216 = 1 (in f32 the input would round to 16777216: 0).
        let x = tensor2(&[[16777217.0f64]]);
        let out = run(parse, &scaler(&[16777216.0], &[1.0]), vec![x]).unwrap();
        assert_eq!(values(&out[0]), [1.0]);
    }

    #[test]
    fn a_vector_and_a_higher_rank_scale_their_last_axis() {
        let out = run(
            parse,
            &scaler(&[0.5, 1.0, 2.0], &[2.0, 3.0, 4.0]),
            vec![tensor1(&[1f32, 2.0, 3.0])],
        )
        .unwrap();
        assert_eq!(out[0].shape(), &[3]);
        assert_eq!(values(&out[0]), [1.0, 3.0, 4.0]);
        let x = Tensor::from_shape(&[2, 1, 2], &[1f32; 4]).unwrap();
        let out = run(parse, &scaler(&[0.5, 1.0], &[2.0, 3.0]), vec![x]).unwrap();
        assert_eq!(values(&out[0]), [1.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn per_column_values_must_match_the_columns() {
        let x = tensor2(&[[1f32, 2.0, 3.0]]);
        let e = error(parse, &scaler(&[1.0, 2.0], &[2.0, 3.0]), vec![x]);
        assert!(
            e.contains("Scaler: offset and scale hold 2 values for an input of 3"),
            "{e}"
        );
    }

    #[test]
    fn attributes_are_checked() {
        let x = || tensor2(&[[1f32]]);
        let e = error(parse, &scaler(&[1.0, 2.0], &[2.0]), vec![x()]);
        assert!(e.contains("(Scaler), attribute 'offset'"), "{e}");
        let e = error(
            parse,
            &node("Scaler", vec![floats("offset", &[1.0])]),
            vec![x()],
        );
        assert!(e.contains("(Scaler), attribute 'scale'"), "{e}");
    }

    #[test]
    fn a_string_input_is_refused() {
        let x = tensor2(&[["a".to_string()]]);
        let e = error(parse, &scaler(&[1.0], &[2.0]), vec![x]);
        assert!(e.contains("Scaler: input of type String"), "{e}");
    }
}
