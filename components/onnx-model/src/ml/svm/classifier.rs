//! `SVMClassifier`: labels `[N]` and scores, as onnxruntime answers them.
//!
//! With support vectors (libsvm's one-against-one form), every pair of classes (i, j), i < j,
//! gets a decision value and a vote: to i when the value is above 0, else to j. The label is
//! the first class of the most votes, with or without probabilities (so it can differ from
//! the most probable class, as scikit-learn's `predict` does). The scores are:
//! - with `prob_a`/`prob_b`: the coupled class probabilities `[N, classes]`;
//! - without, for more than two classes: the decision values `[N, pairs]`;
//! - without, for two: the one value `s` as `[−s, s]` (NONE), `[σ(−s), σ(s)]` (LOGISTIC) or
//!   `[1 − s, s]` (SOFTMAX, SOFTMAX_ZERO); onnxruntime's PROBIT answer there is undefined
//!   (it reads memory it never wrote), so that case is refused.
//!
//! then `post_transform` on each row of two or more.
//!
//! Without support vectors (liblinear's form) each class scores `x·wᶜ + rho[0]`; the label is
//! the best class, except that with two classes onnxruntime answers the second when the best
//! score is above 0 and a coefficient is negative, or when it is at least 0.5 and none is.

use super::super::labels::Labels;
use super::super::linear::gemm_dot;
use super::super::op::{MlOp, expanded};
use super::super::post_transform::{PostTransform, logistic};
use super::super::values::{numeric, required_floats};
use super::{Kernel, probability, rows, support_vectors};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

const OP: &str = "SVMClassifier";

#[derive(Debug)]
enum Form {
    /// Support vectors, `vectors[v * features..]`, grouped by class (`starts[c]..starts[c+1]`);
    /// coefficients `[classes − 1, vectors]`; one `rho` per pair.
    Vectors {
        vectors: Vec<f32>,
        starts: Vec<usize>,
        kernel: Kernel,
        /// Platt's `a` and `b` per pair, when the model gives probabilities.
        platt: Option<(Vec<f32>, Vec<f32>)>,
    },
    /// One row of coefficients per class, `rho[0]` added to every score. `all_positive`: no
    /// coefficient is negative; `platt`: the model has `prob_a` (which then only changes the
    /// binary label).
    Linear { all_positive: bool, platt: bool },
}

#[derive(Debug)]
struct Classifier {
    form: Form,
    coefficients: Vec<f32>,
    rho: Vec<f32>,
    features: usize,
    labels: Labels,
    post: PostTransform,
}

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let labels = Labels::parse(node, "classlabels_ints")?;
    let classes = labels.len();
    node.expect_attr(
        "classlabels_ints",
        classes >= 2,
        "at least two class labels",
    )?;
    let coefficients = required_floats(node, "coefficients")?;
    let rho = node.get_attr_opt_vec::<f32>("rho")?.unwrap_or_default();
    let post = PostTransform::parse(node)?;
    let per_class = node
        .get_attr_opt_vec::<i64>("vectors_per_class")?
        .unwrap_or_default();
    node.expect_attr(
        "vectors_per_class",
        per_class.iter().all(|&n| n >= 0),
        "counts",
    )?;
    // Checked: a hostile file's counts must not wrap (usize is 32 bits in the component).
    let count = per_class.iter().try_fold(0usize, |total, &n| {
        usize::try_from(n).ok().and_then(|n| total.checked_add(n))
    });
    node.expect_attr("vectors_per_class", count.is_some(), "counts that add up")?;
    let count = count.unwrap_or_default();
    let a = node.get_attr_opt_vec::<f32>("prob_a")?.unwrap_or_default();
    let b = node.get_attr_opt_vec::<f32>("prob_b")?.unwrap_or_default();
    node.expect_attr("prob_b", a.len() == b.len(), "as many values as prob_a")?;
    let pairs = classes.checked_mul(classes - 1).map(|p| p / 2);
    node.expect_attr(
        "classlabels_ints",
        pairs.is_some(),
        "a number of classes that fits",
    )?;
    let pairs = pairs.unwrap_or_default();
    let (form, features) = if count > 0 {
        node.expect_attr("vectors_per_class", per_class.len() == classes, || {
            format!(
                "one count per class label ({classes}), got {}",
                per_class.len()
            )
        })?;
        let vectors = support_vectors(node, count, &format!("{count}"))?;
        let needed = (classes - 1).checked_mul(count);
        node.expect_attr(
            "coefficients",
            needed.is_some_and(|n| coefficients.len() >= n),
            || format!("(classes − 1) × {count} vectors values"),
        )?;
        node.expect_attr("rho", rho.len() >= pairs, || {
            format!("one per pair of classes ({pairs})")
        })?;
        node.expect_attr("prob_a", a.is_empty() || a.len() >= pairs, || {
            format!("one per pair of classes ({pairs}) or none")
        })?;
        let platt = (!a.is_empty()).then_some((a, b));
        if platt.is_none() && classes == 2 {
            node.expect_attr("post_transform", post != PostTransform::Probit, || {
                "not PROBIT for two classes without probabilities (onnxruntime's answer is \
                 undefined there)"
                    .to_string()
            })?;
        }
        let mut starts = vec![0];
        for &n in &per_class {
            starts.push(starts.last().unwrap() + n as usize);
        }
        let features = vectors.len() / count;
        let kernel = Kernel::parse(node)?;
        (
            Form::Vectors {
                vectors,
                starts,
                kernel,
                platt,
            },
            features,
        )
    } else {
        node.expect_attr("coefficients", coefficients.len() % classes == 0, || {
            format!(
                "one row per class label ({classes}), got {} values",
                coefficients.len()
            )
        })?;
        node.expect_attr("rho", !rho.is_empty(), "at least one value")?;
        Kernel::parse(node)?;
        let all_positive = coefficients.iter().all(|&c| c >= 0.0);
        let platt = !a.is_empty();
        (
            Form::Linear {
                all_positive,
                platt,
            },
            coefficients.len() / classes,
        )
    };
    expanded(Classifier {
        form,
        coefficients,
        rho,
        features,
        labels,
        post,
    })
}

impl Classifier {
    fn columns(&self) -> usize {
        let classes = self.labels.len();
        match &self.form {
            Form::Vectors { platt: None, .. } if classes > 2 => classes * (classes - 1) / 2,
            _ => classes,
        }
    }

    /// One row's label (an index into the labels) and its scores, appended to `scores`.
    fn row(&self, x: &[f32], kernels: &mut [f32], scores: &mut Vec<f32>) -> usize {
        let classes = self.labels.len();
        let at = scores.len();
        let label = match &self.form {
            Form::Vectors {
                vectors,
                starts,
                kernel,
                platt,
            } => {
                let count = starts[classes];
                for (k, v) in kernels.iter_mut().zip(vectors.chunks(self.features)) {
                    *k = kernel.eval(x, v);
                }
                let mut votes = vec![0usize; classes];
                let mut decisions = Vec::with_capacity(self.rho.len());
                for i in 0..classes {
                    for j in i + 1..classes {
                        // Class i's vectors weighed by row j − 1 of the coefficients, class j's
                        // by row i: each product in f32, summed in f64, as onnxruntime.
                        let side = |class: usize, row: usize| -> f64 {
                            (starts[class]..starts[class + 1])
                                .map(|v| f64::from(self.coefficients[row * count + v] * kernels[v]))
                                .sum()
                        };
                        let pair = decisions.len();
                        let sum = side(i, j - 1) + side(j, i) + f64::from(self.rho[pair]);
                        votes[if sum > 0.0 { i } else { j }] += 1;
                        decisions.push(sum as f32);
                    }
                }
                match platt {
                    Some((a, b)) => {
                        scores.extend(probability::probabilities(classes, &decisions, a, b))
                    }
                    None if classes == 2 => {
                        let s = decisions[0];
                        scores.extend(match self.post {
                            PostTransform::None => [-s, s],
                            PostTransform::Logistic => [logistic(-s), logistic(s)],
                            _ => [1.0 - s, s],
                        });
                    }
                    None => scores.extend(decisions),
                }
                (1..classes).fold(0, |b, c| if votes[c] > votes[b] { c } else { b })
            }
            Form::Linear {
                all_positive,
                platt,
            } => {
                for w in self.coefficients.chunks(self.features) {
                    scores.push(gemm_dot(x, w) + self.rho[0]);
                }
                let row = &scores[at..];
                let best = (1..classes).fold(0, |b, c| if row[c] > row[b] { c } else { b });
                let top = row[best];
                let second = if *all_positive { top >= 0.5 } else { top > 0.0 };
                if classes == 2 && !platt && second {
                    1
                } else {
                    best
                }
            }
        };
        let binary_decision =
            matches!(self.form, Form::Vectors { platt: None, .. }) && classes == 2;
        if !binary_decision {
            self.post.apply(&mut scores[at..]);
        }
        label
    }
}

impl MlOp for Classifier {
    fn name(&self) -> &'static str {
        OP
    }

    fn outputs(&self) -> usize {
        2
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        self.labels.output_types()
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        numeric(OP, inputs[0].datum_type)?;
        Ok(self.labels.output_facts(inputs[0], self.columns()))
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (n, x) = rows(OP, &inputs[0], self.features)?;
        let vectors = match &self.form {
            Form::Vectors { starts, .. } => *starts.last().unwrap(),
            Form::Linear { .. } => 0,
        };
        let mut kernels = vec![0f32; vectors];
        let mut scores = Vec::with_capacity(n * self.columns());
        let picks: Vec<usize> = x
            .chunks(self.features.max(1))
            .take(n)
            .map(|row| self.row(row, &mut kernels, &mut scores))
            .collect();
        Ok(tvec![
            self.labels.pick(&picks).into_tvalue(),
            Tensor::from_shape(&[n, self.columns()], &scores)?.into_tvalue()
        ])
    }
}
