//! `TreeEnsembleClassifier`: a score per class (the trees' weights summed, plus
//! `base_values`, then `post_transform`) and a label, as onnxruntime answers them. Outputs as
//! skl2onnx writes them with `zipmap` off: labels `[N]`, scores `[N, classes]`.
//!
//! More than two classes: the label is the first best score among the classes some leaf or
//! base value scored. Two classes follow onnxruntime's binary rules ([`Classifier::binary`]):
//! with one class id in the weights (scikit-learn's binary boosting) the label is the second
//! when its score is above 0.5 (no negative weight) or above 0 (some negative), and the two
//! scores are made from the one; with both class ids, the label is positive when the second
//! score is above 0, and for integer labels onnxruntime then answers the integer 1 or 0
//! itself, whatever the labels are, which is reproduced.

use super::parse::parse_forest;
use super::{Aggregate, Forest, Scores};
use crate::ml::labels::Labels;
use crate::ml::op::{MlOp, expanded};
use crate::ml::post_transform::{PostTransform, logistic, probit};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

const OP: &str = "TreeEnsembleClassifier";

#[derive(Debug)]
struct Classifier {
    forest: Forest,
    labels: Labels,
    post: PostTransform,
    /// Two labels and one class id in the weights.
    binary: bool,
    /// No class weight is negative.
    all_positive: bool,
}

/// A row's label: a position in the labels, or (two classes, two class ids, integer labels)
/// the literal integer onnxruntime answers.
enum Label {
    At(usize),
    Literal(i64),
}

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let labels = Labels::parse(node, "classlabels_int64s")?;
    let classes = labels.len();
    node.expect_attr(
        "classlabels_int64s",
        classes >= 2,
        "at least two class labels",
    )?;
    let post = PostTransform::parse(node)?;
    let class_ids = node.get_attr_slice::<i64>("class_ids")?;
    let forest = parse_forest(node, OP, "class", classes, Aggregate::Sum)?;
    let bases = forest.base_values.len();
    node.expect_attr(
        "base_values",
        bases == 0 || bases == classes || (classes == 2 && bases == 1),
        || format!("one value per class ({classes}), got {bases}"),
    )?;
    let first = class_ids.first().copied();
    let binary = classes == 2 && class_ids.iter().all(|&c| Some(c) == first);
    let all_positive = forest.weights.iter().all(|&(_, w)| w >= 0.0);
    // One score (class id 0 only): onnxruntime writes PROBIT's first column and leaves the
    // second as whatever its buffer held; no answer to reproduce.
    node.expect_attr(
        "post_transform",
        !(binary && first == Some(0) && post == PostTransform::Probit),
        || {
            "not PROBIT for two classes scored by one class id (onnxruntime's answer is undefined)"
                .to_string()
        },
    )?;
    expanded(Classifier {
        forest,
        labels,
        post,
        binary,
        all_positive,
    })
}

impl Classifier {
    /// A row of more than two classes: base values added, the label among scored classes.
    fn several(&self, s: Scores, double: bool, out: &mut Vec<f32>) -> Label {
        let mut best: Option<usize> = None;
        let at = out.len();
        for (c, (v, hit)) in s.values.into_iter().zip(s.hit).enumerate() {
            let (v, hit) = match self.forest.base_values.get(c) {
                Some(&b) => (Forest::add(double, v, b), true),
                None => (v, hit),
            };
            if hit && best.is_none_or(|b| (v as f32) > out[at + b]) {
                best = Some(c);
            }
            out.push(v as f32);
        }
        self.post.apply_per_score(&mut out[at..]);
        Label::At(best.unwrap_or(0))
    }

    /// A row of two classes, as onnxruntime 1.32 answers it (checked case by case in the
    /// tests, where its sources and its answers differ).
    fn binary(&self, s: Scores, double: bool, out: &mut Vec<f32>) -> Label {
        let (mut s0, mut s1) = (s.values[0], s.values[1]);
        let (h0, mut h1) = (s.hit[0], s.hit[1]);
        let base = &self.forest.base_values;
        match base.len() {
            2 if h1 => {
                s1 = Forest::add(double, base[1], s0);
                s0 = -s1;
            }
            2 => s0 = Forest::add(double, s0, base[0]),
            1 => s0 = Forest::add(double, s0, base[0]),
            _ => {}
        }
        if base.len() == 2 {
            h1 |= s.hit[1];
        }
        // One score: the second class's when it has one, else the first's.
        let single = !h1 && base.len() != 2;
        let positive = if h1 {
            s1
        } else if h0 {
            s0
        } else {
            0.0
        };
        let (s0, s1) = (s0 as f32, s1 as f32);
        let (label, spread) = if self.binary {
            let second = if self.all_positive {
                positive > 0.5
            } else {
                positive > 0.0
            };
            (Label::At(usize::from(second)), !self.all_positive)
        } else {
            let yes = positive > 0.0;
            let label = match self.labels {
                Labels::Ints(_) => Label::Literal(i64::from(yes)),
                Labels::Strings(_) => Label::At(usize::from(yes)),
            };
            (label, true)
        };
        if !single {
            let at = out.len();
            out.extend([s0, s1]);
            self.post.apply_per_score(&mut out[at..]);
        } else if self.post == PostTransform::Probit {
            // Refused at parse for one class id; here two ids, the second never scored.
            out.extend([probit(s0), 0.0]);
        } else if spread {
            // Weights of both signs: the score and its opposite.
            out.extend(match self.post {
                PostTransform::Logistic => [logistic(-s0), logistic(s0)],
                _ => [-s0, s0],
            });
        } else {
            // Positive weights: a probability and its complement.
            let p = match self.post {
                PostTransform::Logistic => logistic(s0),
                _ => s0,
            };
            out.extend([1.0 - p, p]);
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
        Ok(self.labels.output_facts(inputs[0], self.labels.len()))
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = &inputs[0];
        let double = self.forest.in_double(input);
        let (rows, values) = self.forest.rows(input, OP)?;
        let classes = self.labels.len();
        let mut scores = Vec::with_capacity(rows * classes);
        let mut labels = Vec::with_capacity(rows);
        for s in self.forest.eval(rows, &values, double) {
            labels.push(if classes == 2 {
                self.binary(s, double, &mut scores)
            } else {
                self.several(s, double, &mut scores)
            });
        }
        let label = match (
            &self.labels,
            labels.iter().any(|l| matches!(l, Label::Literal(_))),
        ) {
            (Labels::Ints(_), true) => {
                let at = |l: &Label| match *l {
                    Label::Literal(v) => v,
                    Label::At(i) => match &self.labels {
                        Labels::Ints(ls) => ls[i],
                        Labels::Strings(_) => unreachable!(),
                    },
                };
                tensor1(&labels.iter().map(at).collect::<Vec<_>>())
            }
            _ => {
                let picks: Vec<usize> = labels
                    .iter()
                    .map(|l| match *l {
                        Label::At(i) => i,
                        Label::Literal(v) => v as usize,
                    })
                    .collect();
                self.labels.pick(&picks)
            }
        };
        Ok(tvec!(
            label.into_tvalue(),
            Tensor::from_shape(&[rows, classes], &scores)?.into_tvalue()
        ))
    }
}
