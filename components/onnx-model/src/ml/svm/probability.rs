//! Class probabilities of a multi-class SVM from its pairwise decision values, as libsvm and
//! onnxruntime compute them: each pair's value through its Platt sigmoid (`prob_a`,
//! `prob_b`), then the pairwise probabilities coupled into one distribution (Wu, Lin and
//! Weng 2004, "Probability estimates for multi-class classification by pairwise coupling",
//! method 2), in `f32` and in the same order as onnxruntime so that the answers agree.

use super::super::post_transform::logistic;

/// The probability that a pair's first class wins, from its decision value, kept within
/// [1e-7, 1 − 1e-7].
fn platt(score: f32, a: f32, b: f32) -> f32 {
    let p = 1.0 - logistic(score * a + b);
    p.clamp(1e-7, 1.0 - 1e-7)
}

/// The probabilities of `classes` classes from the decision values of every pair (i, j),
/// i < j, in order, with their sigmoids' `a` and `b`.
pub fn probabilities(classes: usize, scores: &[f32], a: &[f32], b: &[f32]) -> Vec<f32> {
    let k = classes;
    // r[i][j]: the probability that i beats j.
    let mut r = vec![0f32; k * k];
    let mut pair = 0;
    for i in 0..k {
        for j in i + 1..k {
            let p = platt(scores[pair], a[pair], b[pair]);
            r[i * k + j] = p;
            r[j * k + i] = 1.0 - p;
            pair += 1;
        }
    }
    couple(k, &r)
}

/// Minimises `pᵀQp` under `Σp = 1` by the fixed-point iteration of method 2, at most 100
/// rounds, stopping when every `(Qp)ᵢ` is within `0.005 / k` of `pᵀQp`.
fn couple(k: usize, r: &[f32]) -> Vec<f32> {
    let mut q = vec![0f32; k * k];
    let mut p = vec![1.0 / k as f32; k];
    for i in 0..k {
        for j in 0..i {
            q[i * k + i] += r[j * k + i] * r[j * k + i];
            q[i * k + j] = q[j * k + i];
        }
        for j in i + 1..k {
            q[i * k + i] += r[j * k + i] * r[j * k + i];
            q[i * k + j] = -r[j * k + i] * r[i * k + j];
        }
    }
    let eps = 0.005 / k as f32;
    let mut qp = vec![0f32; k];
    for _ in 0..100 {
        let mut pqp = 0f32;
        for i in 0..k {
            qp[i] = 0.0;
            for j in 0..k {
                qp[i] += q[i * k + j] * p[j];
            }
            pqp += p[i] * qp[i];
        }
        let worst = qp.iter().map(|&v| (v - pqp).abs()).fold(0f32, f32::max);
        if worst < eps {
            break;
        }
        for i in 0..k {
            let diff = (-qp[i] + pqp) / q[i * k + i];
            p[i] += diff;
            pqp = (pqp + diff * (diff * q[i * k + i] + 2.0 * qp[i])) / (1.0 + diff) / (1.0 + diff);
            for j in 0..k {
                qp[j] = (qp[j] + diff * q[i * k + j]) / (1.0 + diff);
                p[j] /= 1.0 + diff;
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_even_classes_stay_even() {
        // A decision value whose sigmoid is one half: nothing to move.
        assert_eq!(probabilities(2, &[0.0], &[1.0], &[0.0]), [0.5, 0.5]);
    }

    #[test]
    fn probabilities_sum_to_one_and_follow_the_votes() {
        let p = probabilities(3, &[2.0, 2.0, 0.5], &[-1.5, -1.5, -1.5], &[0.0, 0.0, 0.0]);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{p:?}");
        assert!(p[0] > p[1] && p[1] > p[2], "{p:?}");
    }
}
