//! `SVMRegressor`: `[N, 1]` floats, `Σ coefficientᵥ · kernel(x, vᵥ) + rho[0]` over the
//! support vectors, or `x · coefficients + rho[0]` without them; a one-class model answers
//! 1 when that is above 0, else −1. As onnxruntime, `post_transform` is read and not applied.

use super::super::linear::gemm_dot;
use super::super::op::{MlOp, expanded};
use super::super::post_transform::PostTransform;
use super::super::values::{numeric, required_floats};
use super::{Kernel, rows, rows_of, support_vectors};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

const OP: &str = "SVMRegressor";

#[derive(Debug)]
struct Regressor {
    /// The support vectors, `features` values each; none in the linear form.
    vectors: Vec<f32>,
    coefficients: Vec<f32>,
    rho: f32,
    kernel: Kernel,
    features: usize,
    one_class: bool,
}

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let coefficients = required_floats(node, "coefficients")?;
    let rho = required_floats(node, "rho")?;
    let count = node.get_attr_opt::<i64>("n_supports")?.unwrap_or(0);
    node.expect_attr("n_supports", count >= 0, "a count")?;
    let count = count as usize;
    PostTransform::parse(node)?;
    let one_class = node.get_attr_opt::<i64>("one_class")?.unwrap_or(0) != 0;
    let (vectors, kernel, features) = if count > 0 {
        let vectors = support_vectors(node, count, &format!("n_supports ({count})"))?;
        node.expect_attr("coefficients", coefficients.len() >= count, || {
            format!(
                "one per support vector ({count}), got {}",
                coefficients.len()
            )
        })?;
        let features = vectors.len() / count;
        (vectors, Kernel::parse(node)?, features)
    } else {
        Kernel::parse(node)?;
        (vec![], Kernel::Linear, coefficients.len())
    };
    expanded(Regressor {
        vectors,
        coefficients,
        rho: rho[0],
        kernel,
        features,
        one_class,
    })
}

impl MlOp for Regressor {
    fn name(&self) -> &'static str {
        OP
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![Some(DatumType::F32)]
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        numeric(OP, inputs[0].datum_type)?;
        Ok(tvec![f32::fact(&[rows_of(inputs[0]), 1.to_dim()])])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (n, x) = rows(OP, &inputs[0], self.features)?;
        let mut kernels = vec![0f32; self.vectors.len() / self.features.max(1)];
        let mut y = Vec::with_capacity(n);
        for row in x.chunks(self.features.max(1)).take(n) {
            let value = if self.vectors.is_empty() {
                gemm_dot(row, &self.coefficients) + self.rho
            } else {
                for (k, v) in kernels.iter_mut().zip(self.vectors.chunks(self.features)) {
                    *k = self.kernel.eval(row, v);
                }
                gemm_dot(&kernels, &self.coefficients) + self.rho
            };
            y.push(match self.one_class {
                true if value > 0.0 => 1.0,
                true => -1.0,
                false => value,
            });
        }
        Ok(tvec![Tensor::from_shape(&[n, 1], &y)?.into_tvalue()])
    }
}
