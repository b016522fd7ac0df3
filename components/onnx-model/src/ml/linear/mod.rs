//! `LinearClassifier` and `LinearRegressor`: scores `X · coefficientsᵀ + intercepts`, one row
//! of coefficients per class or target, then `post_transform`; what skl2onnx writes for
//! LogisticRegression, LinearSVC, SGD classifiers, LinearRegression, Ridge, Lasso and
//! ElasticNet. tract has its own, whose binary and post-transform cases differ from
//! onnxruntime's; these answer as onnxruntime does.

pub mod classifier;
pub mod regressor;

use super::op::matrix;
use tract_onnx::tract_hir::internal::*;

/// `x · w` as onnxruntime's GEMM (MLAS, x86-64 with FMA) computes one element: a chain of
/// fused multiply-adds in feature order from 0, in `f32`. The same rounding as onnxruntime's
/// keeps a score near 0 on the same side (the label) and a probability near 0 or 1 equal.
pub fn gemm_dot(x: &[f32], w: &[f32]) -> f32 {
    x.iter()
        .zip(w)
        .fold(0f32, |acc, (&a, &b)| a.mul_add(b, acc))
}

/// Rows of `width` coefficients applied to every row of an input.
#[derive(Debug)]
struct Affine {
    coefficients: Vec<f32>,
    /// One per coefficient row, or none.
    intercepts: Vec<f32>,
}

impl Affine {
    /// How many coefficient rows an input of `features` columns gets; `op` names the operator.
    fn outputs(&self, op: &str, features: usize) -> TractResult<usize> {
        let n = self.coefficients.len();
        ensure!(
            features > 0 && n.is_multiple_of(features),
            "{op}: {n} coefficients for an input of {features} features; expected a multiple"
        );
        let rows = n / features;
        ensure!(
            self.intercepts.is_empty() || self.intercepts.len() == rows,
            "{op}: {} intercepts for {rows} rows of coefficients",
            self.intercepts.len()
        );
        Ok(rows)
    }

    /// Every input row's scores, `outputs` per row: (rows, scores), the intercept added to
    /// [`gemm_dot`] as onnxruntime adds it.
    fn scores(&self, op: &str, input: &TValue) -> TractResult<(usize, usize, Vec<f32>)> {
        let (rows, features, x) = matrix(input, op)?;
        let outputs = self.outputs(op, features)?;
        let mut scores = Vec::with_capacity(rows * outputs);
        for row in x.chunks(features.max(1)).take(rows) {
            for (o, w) in self.coefficients.chunks(features).enumerate() {
                let intercept = self.intercepts.get(o).copied().unwrap_or(0.0);
                scores.push(gemm_dot(row, w) + intercept);
            }
        }
        Ok((rows, outputs, scores))
    }

    /// How many outputs the typed input gets, when its feature count is known.
    fn outputs_for(&self, op: &str, input: &TypedFact) -> TractResult<usize> {
        let features = match input.rank() {
            1 => input.shape[0].to_usize(),
            2 => input.shape[1].to_usize(),
            r => bail!("{op}: input of rank {r}; expected [N, C]"),
        };
        match features {
            Ok(f) => self.outputs(op, f),
            Err(_) if !self.intercepts.is_empty() => Ok(self.intercepts.len()),
            Err(_) => bail!("{op}: the input's feature count must be known"),
        }
    }
}
