//! `SVMClassifier` and `SVMRegressor`: what skl2onnx writes for SVC, NuSVC, SVR, NuSVR and
//! OneClassSVM. Both weigh a kernel between the input row and each support vector (or, with
//! no support vectors, a linear function of the row: liblinear's form).
//!
//! As onnxruntime: `kernel_params` is `[gamma, coef0, degree]`; LINEAR is the plain dot
//! product (coef0 unused), POLY `(gamma·x·v + coef0)^degree`, RBF `exp(−gamma·|x − v|²)`,
//! SIGMOID `tanh(gamma·x·v + coef0)`.

pub mod classifier;
mod probability;
pub mod regressor;

use super::linear::gemm_dot;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kernel {
    Linear,
    Poly { gamma: f32, coef0: f32, degree: f32 },
    Rbf { gamma: f32 },
    Sigmoid { gamma: f32, coef0: f32 },
}

impl Kernel {
    /// The node's `kernel_type` (LINEAR when absent) and `kernel_params`.
    fn parse(node: &NodeProto) -> TractResult<Kernel> {
        let params = node
            .get_attr_opt_vec::<f32>("kernel_params")?
            .unwrap_or_default();
        node.expect_attr(
            "kernel_params",
            params.is_empty() || params.len() == 3,
            || format!("[gamma, coef0, degree], got {} values", params.len()),
        )?;
        let (gamma, coef0, degree) = match params[..] {
            [g, c, d] => (g, c, d),
            _ => (0.0, 0.0, 0.0),
        };
        Ok(
            match node
                .get_attr_opt::<&str>("kernel_type")?
                .unwrap_or("LINEAR")
            {
                "LINEAR" => Kernel::Linear,
                "POLY" => Kernel::Poly {
                    gamma,
                    coef0,
                    degree,
                },
                "RBF" => Kernel::Rbf { gamma },
                "SIGMOID" => Kernel::Sigmoid { gamma, coef0 },
                other => {
                    node.expect_attr("kernel_type", false, || {
                        format!("LINEAR, POLY, RBF or SIGMOID, got {other}")
                    })?;
                    unreachable!()
                }
            },
        )
    }

    /// The kernel between `x` and `v`, rounded as onnxruntime computes it: dot products as
    /// its GEMM ([`gemm_dot`]), then `gamma` and `coef0` applied in `f32`; RBF's distance
    /// summed in `f32` in order.
    fn eval(self, x: &[f32], v: &[f32]) -> f32 {
        let affine = |gamma: f32, coef0: f32| gamma * gemm_dot(x, v) + coef0;
        match self {
            Kernel::Linear => gemm_dot(x, v),
            Kernel::Poly {
                gamma,
                coef0,
                degree,
            } => {
                let b = affine(gamma, coef0);
                if degree == 2.0 {
                    b * b
                } else if degree == 3.0 {
                    b * b * b
                } else {
                    b.powf(degree)
                }
            }
            Kernel::Rbf { gamma } => {
                let mut sum = 0f32;
                for (&a, &b) in x.iter().zip(v) {
                    let d = a - b;
                    sum += d * d;
                }
                (-gamma * sum).exp()
            }
            Kernel::Sigmoid { gamma, coef0 } => affine(gamma, coef0).tanh(),
        }
    }
}

/// The `support_vectors` attribute: `count` vectors of one length (`counted` says where the
/// count comes from, for the message).
fn support_vectors(node: &NodeProto, count: usize, counted: &str) -> TractResult<Vec<f32>> {
    let vectors = node
        .get_attr_opt_vec::<f32>("support_vectors")?
        .unwrap_or_default();
    node.expect_attr(
        "support_vectors",
        !vectors.is_empty() && vectors.len() % count == 0,
        || {
            format!(
                "{counted} vectors of equal length, got {} values",
                vectors.len()
            )
        },
    )?;
    Ok(vectors)
}

/// The rows of an input of `features` columns, as `f32`: (rows, values). `op` names the
/// operator in the error.
fn rows(op: &str, input: &TValue, features: usize) -> TractResult<(usize, Vec<f32>)> {
    let (rows, columns, values) = super::op::matrix(input, op)?;
    ensure!(
        columns == features,
        "{op}: input of {columns} features; the model's vectors have {features}"
    );
    Ok((rows, values))
}

/// The rows of the typed input (1 for a vector), for the outputs' facts.
fn rows_of(input: &TypedFact) -> TDim {
    match input.rank() {
        0 | 1 => 1.to_dim(),
        _ => input.shape[0].clone(),
    }
}

#[cfg(test)]
mod kernel_tests {
    use super::super::testing::{floats, node, string};
    use super::*;

    #[test]
    fn kernels_and_their_parameters() {
        let k = |kind: &str, params: &[f32]| {
            Kernel::parse(&node(
                "SVMRegressor",
                vec![string("kernel_type", kind), floats("kernel_params", params)],
            ))
        };
        let (x, v) = ([1.0f32, 2.0], [0.5f32, -1.0]);
        assert_eq!(k("LINEAR", &[0.3, 1.0, 3.0]).unwrap().eval(&x, &v), -1.5);
        assert_eq!(k("POLY", &[0.5, 1.0, 2.0]).unwrap().eval(&x, &v), 0.0625);
        assert_eq!(
            k("POLY", &[0.5, 2.0, 3.0]).unwrap().eval(&x, &v),
            1.25f32.powi(3)
        );
        assert_eq!(
            k("RBF", &[0.5, 0.0, 0.0]).unwrap().eval(&x, &v),
            (-0.5f32 * 9.25).exp()
        );
        assert_eq!(
            k("SIGMOID", &[0.5, 1.0, 0.0]).unwrap().eval(&x, &v),
            0.25f32.tanh()
        );
        let e = format!("{:#}", k("CUBIC", &[0.5, 1.0, 0.0]).unwrap_err());
        assert!(
            e.contains("(SVMRegressor), attribute 'kernel_type'") && e.contains("CUBIC"),
            "{e}"
        );
        let e = format!("{:#}", k("RBF", &[0.5]).unwrap_err());
        assert!(
            e.contains("(SVMRegressor), attribute 'kernel_params'"),
            "{e}"
        );
    }
}

#[cfg(test)]
#[rustfmt::skip]
#[allow(clippy::excessive_precision, clippy::type_complexity)]
mod expected;
#[cfg(test)]
mod tests;
