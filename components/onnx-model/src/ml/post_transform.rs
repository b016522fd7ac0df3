//! `post_transform`, the last step of every ONNX-ML classifier and of the regressors that
//! take one: NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO or PROBIT, computed as onnxruntime does
//! (its PROBIT is an approximation of the inverse error function, not the exact one, and
//! SOFTMAX_ZERO leaves zero scores out), so that served scores are onnxruntime's.
//!
//! This module transforms a row of two or more scores. What a classifier with a single score
//! column does (the binary cases) differs per operator in onnxruntime and is written beside
//! each operator.

use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostTransform {
    None,
    Logistic,
    Softmax,
    SoftmaxZero,
    Probit,
}

impl PostTransform {
    /// The node's `post_transform` (NONE when absent); an unknown name is refused (onnxruntime
    /// would silently read it as PROBIT).
    pub fn parse(node: &NodeProto) -> TractResult<PostTransform> {
        let name = node
            .get_attr_opt::<&str>("post_transform")?
            .unwrap_or("NONE");
        Ok(match name {
            "NONE" => PostTransform::None,
            "LOGISTIC" => PostTransform::Logistic,
            "SOFTMAX" => PostTransform::Softmax,
            "SOFTMAX_ZERO" => PostTransform::SoftmaxZero,
            "PROBIT" => PostTransform::Probit,
            other => {
                node.expect_attr("post_transform", false, || {
                    format!("NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO or PROBIT, got {other}")
                })?;
                unreachable!()
            }
        })
    }

    /// Transforms a row of scores in place, as onnxruntime's linear and SVM operators do any
    /// row of two or more: LOGISTIC by MLAS's approximation ([`batched_logistic`]).
    pub fn apply(self, row: &mut [f32]) {
        match self {
            PostTransform::Logistic => row.iter_mut().for_each(|x| *x = batched_logistic(*x)),
            other => other.apply_per_score(row),
        }
    }

    /// Transforms a row of scores in place, as onnxruntime's tree ensembles do: LOGISTIC by
    /// [`logistic`].
    pub fn apply_per_score(self, row: &mut [f32]) {
        match self {
            PostTransform::None => {}
            PostTransform::Logistic => row.iter_mut().for_each(|x| *x = logistic(*x)),
            PostTransform::Probit => row.iter_mut().for_each(|x| *x = probit(*x)),
            PostTransform::Softmax => softmax(row),
            PostTransform::SoftmaxZero => softmax_zero(row),
        }
    }
}

/// `1 / (1 + e^-x)`, computed on `|x|` and mirrored so that a large negative `x` does not
/// overflow the exponential.
pub fn logistic(x: f32) -> f32 {
    let v = 1.0 / (1.0 + (-x.abs()).exp());
    if x < 0.0 { 1.0 - v } else { v }
}

/// The logistic function as onnxruntime's batched kernels compute it (MLAS, shared with
/// Eigen): an odd rational approximation on [−18, 18], `0.5 + p(x)/q(x)` clamped to [0, 1],
/// evaluated with fused multiply-adds as its x86-64 FMA kernel does. It differs from the exact
/// function by up to ~6e-8 absolute, which is all there is of a probability below 1e-7 (it
/// answers 0 for x ≤ −18): reproduced here so that small probabilities match onnxruntime's.
pub fn batched_logistic(x: f32) -> f32 {
    // Coefficients of the approximation, from MLAS's logistic kernel (onnxruntime/core/mlas).
    #[allow(clippy::excessive_precision)]
    const ALPHA: [f32; 5] = [
        4.37031012579801e-11,
        1.15627324459942e-07,
        6.08574864600143e-05,
        8.51377133304701e-03,
        2.48287947061529e-01,
    ];
    #[allow(clippy::excessive_precision)]
    const BETA: [f32; 6] = [
        6.10247389755681e-13,
        5.76102136993427e-09,
        6.29106785017040e-06,
        1.70198817374094e-03,
        1.16817656904453e-01,
        9.93151921023180e-01,
    ];
    if x.is_nan() {
        return x;
    }
    let x = x.clamp(-18.0, 18.0);
    let x2 = x * x;
    let p = ALPHA[1..]
        .iter()
        .fold(ALPHA[0], |acc, &a| acc.mul_add(x2, a))
        * x;
    let q = BETA[1..].iter().fold(BETA[0], |acc, &b| acc.mul_add(x2, b));
    (p / q + 0.5).clamp(0.0, 1.0)
}

/// `√2 · erf⁻¹(2p − 1)`, the quantile of the standard normal distribution, with onnxruntime's
/// closed-form approximation of erf⁻¹ (Winitzki's, `a = 0.147`): outside (0, 1) it is NaN,
/// and −∞ at 0, as onnxruntime answers.
pub fn probit(p: f32) -> f32 {
    std::f32::consts::SQRT_2 * inverse_erf(2.0 * p - 1.0)
}

fn inverse_erf(x: f32) -> f32 {
    const A: f32 = 0.147;
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let ln = ((1.0 - x) * (1.0 + x)).ln();
    let b = 2.0 / (std::f32::consts::PI * A) + 0.5 * ln;
    let c = 1.0 / A * ln;
    sign * (-b + (b * b - c).sqrt()).sqrt()
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(-f32::MAX, f32::max);
    let mut sum = 0.0;
    for x in row.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    row.iter_mut().for_each(|x| *x /= sum);
}

/// Softmax over the scores that are not (about) zero: a zero score stays zero, as a class no
/// tree voted for should not get `e^0` of the probability.
fn softmax_zero(row: &mut [f32]) {
    let max = row.iter().copied().fold(-f32::MAX, f32::max);
    let scale_zero = (-max).exp();
    let mut sum = 0.0;
    for x in row.iter_mut() {
        if x.abs() > 1e-7 {
            *x = (*x - max).exp();
            sum += *x;
        } else {
            *x *= scale_zero;
        }
    }
    row.iter_mut().for_each(|x| *x /= sum);
}

/// onnxruntime's answers are written as Python printed them, digits beyond f32's included.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::super::testing::{assert_close, node, string};
    use super::*;

    fn transformed(t: PostTransform, row: &[f32]) -> Vec<f32> {
        let mut row = row.to_vec();
        t.apply(&mut row);
        row
    }

    fn close(got: &[f32], want: &[f32]) {
        assert_close("", got, want, 2e-7);
    }

    // Expected values: onnxruntime 1.32, a LinearRegressor of two targets (coefficients
    // [0.2, 0.1, -0.3, 0.4], intercepts [0.05, -0.1]) and a LinearClassifier of three classes
    // (a third row of zeros) with each post_transform (Python, onnx.helper; /tmp/ops2/lin.py).
    #[test]
    fn rows_as_onnxruntime_transforms_them() {
        let pair = [0.05f32, -1.2];
        close(
            &transformed(PostTransform::Logistic, &pair),
            &[0.5124973654747009, 0.23147520422935486],
        );
        close(
            &transformed(PostTransform::Softmax, &pair),
            &[0.7772998809814453, 0.22270014882087708],
        );
        close(
            &transformed(PostTransform::Softmax, &[0.05, -1.2, 0.0]),
            &[0.446880578994751, 0.12803342938423157, 0.42508596181869507],
        );
        close(
            &transformed(PostTransform::SoftmaxZero, &[0.05, -1.2, 0.0]),
            &[0.7772998809814453, 0.22270014882087708, 0.0],
        );
        close(
            &transformed(PostTransform::Probit, &[0.05, -1.2, 0.0]),
            &[-1.6446696519851685, f32::NAN, f32::NEG_INFINITY],
        );
        close(
            &transformed(PostTransform::Probit, &[0.175]),
            &[-0.9347488880157471],
        );
        close(&transformed(PostTransform::None, &pair), &pair);
    }

    // onnxruntime 1.32: a LinearRegressor of two targets with LOGISTIC (the batched kernel)
    // and a one-row LinearClassifier (the exact one) on z (Python: /tmp/ops2/logi.py, logi2.py).
    #[test]
    fn batched_logistic_is_mlas_approximation() {
        let z = [
            -30.0f32, -18.0, -17.5, -16.0, -14.0, -12.0, -10.0, -8.0, -0.5, 12.0, 16.0,
        ];
        let want = [
            0.0,
            0.0,
            2.9802322387695312e-08,
            5.960464477539063e-08,
            7.748603820800781e-07,
            6.109476089477539e-06,
            4.538893699645996e-05,
            0.00033542513847351074,
            0.3775407075881958,
            0.9999939203262329,
            0.9999999403953552,
        ];
        let got: Vec<f32> = z.iter().map(|&x| batched_logistic(x)).collect();
        assert_eq!(got, want);
        assert_eq!(
            transformed(PostTransform::Logistic, &[-16.0, 16.0]),
            [want[3], want[10]]
        );
        let mut row = [-16.0f32, -14.0];
        PostTransform::Logistic.apply_per_score(&mut row);
        assert_eq!(row, [1.1920928955078125e-07, 8.344650268554688e-07]);
        assert!(batched_logistic(f32::NAN).is_nan());
    }

    #[test]
    fn logistic_of_large_values_does_not_overflow() {
        assert_eq!(logistic(-200.0), 0.0);
        assert_eq!(logistic(200.0), 1.0);
        assert_eq!(logistic(0.0), 0.5);
    }

    #[test]
    fn parsed_from_the_node() {
        let with = |t: &str| PostTransform::parse(&node("X", vec![string("post_transform", t)]));
        assert_eq!(
            PostTransform::parse(&node("X", vec![])).unwrap(),
            PostTransform::None
        );
        assert_eq!(with("SOFTMAX_ZERO").unwrap(), PostTransform::SoftmaxZero);
        assert_eq!(with("PROBIT").unwrap(), PostTransform::Probit);
        let e = format!("{:#}", with("SIGMOID").unwrap_err());
        assert!(
            e.contains("attribute 'post_transform'") && e.contains("SIGMOID"),
            "{e}"
        );
    }
}
