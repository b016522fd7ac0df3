//! `TreeEnsembleClassifier`: a score per class (the trees' weights summed, plus `base_values`,
//! then `post_transform`: `NONE`, `SOFTMAX` or `LOGISTIC`) and the label of the best score.
//! Outputs as skl2onnx writes them with `zipmap` off: labels `[N]`, scores `[N, classes]`.

use super::{Aggregate, Ensemble, Forest, expanded, parse_forest};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

#[derive(Debug, Clone, PartialEq)]
enum Labels {
    Ints(Vec<i64>),
    Strings(Vec<String>),
}

impl Labels {
    fn len(&self) -> usize {
        match self {
            Labels::Ints(l) => l.len(),
            Labels::Strings(l) => l.len(),
        }
    }

    fn datum_type(&self) -> DatumType {
        match self {
            Labels::Ints(_) => i64::datum_type(),
            Labels::Strings(_) => String::datum_type(),
        }
    }

    /// The labels at `picks`, as a tensor of one label per row.
    fn pick(&self, picks: &[usize]) -> Tensor {
        match self {
            Labels::Ints(l) => tensor1(&picks.iter().map(|&i| l[i]).collect::<Vec<_>>()),
            Labels::Strings(l) => tensor1(&picks.iter().map(|&i| l[i].clone()).collect::<Vec<_>>()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum PostTransform {
    None,
    Softmax,
    Logistic,
}

#[derive(Debug)]
struct Classifier {
    forest: Forest,
    labels: Labels,
    post: PostTransform,
    /// Two labels scored by one number (scikit-learn's binary boosting): the trees give the
    /// score of the second label, and the first gets its complement.
    single_score: bool,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Classifier {
    /// Final scores of one row from the forest's raw outputs.
    fn scores(&self, raw: &[f32]) -> Vec<f32> {
        if self.single_score {
            let s = match self.post {
                PostTransform::Logistic => sigmoid(raw[0]),
                _ => raw[0],
            };
            return vec![1.0 - s, s];
        }
        match self.post {
            PostTransform::None => raw.to_vec(),
            PostTransform::Logistic => raw.iter().map(|&x| sigmoid(x)).collect(),
            PostTransform::Softmax => {
                let max = raw.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let exp: Vec<f32> = raw.iter().map(|&x| (x - max).exp()).collect();
                let sum: f32 = exp.iter().sum();
                exp.into_iter().map(|e| e / sum).collect()
            }
        }
    }
}

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    const OP: &str = "TreeEnsembleClassifier";
    let ints = node.get_attr_opt_slice::<i64>("classlabels_int64s")?;
    let strings = node.get_attr_opt_vec::<String>("classlabels_strings")?;
    let labels = match (ints, strings) {
        (Some(i), None) => Labels::Ints(i.to_vec()),
        (None, Some(s)) => Labels::Strings(s),
        _ => bail!("{OP}: give exactly one of classlabels_int64s and classlabels_strings"),
    };
    if labels.len() < 2 {
        bail!("{OP}: at least two class labels are needed");
    }
    let post = match node
        .get_attr_opt::<&str>("post_transform")?
        .unwrap_or("NONE")
    {
        "NONE" => PostTransform::None,
        "SOFTMAX" => PostTransform::Softmax,
        "LOGISTIC" => PostTransform::Logistic,
        other => bail!("{OP}: post_transform {other} is not supported (NONE, SOFTMAX, LOGISTIC)"),
    };
    let class_ids = node.get_attr_slice::<i64>("class_ids")?;
    let single_score = labels.len() == 2 && class_ids.iter().all(|&c| c == 0);
    let outputs = if single_score { 1 } else { labels.len() };
    let forest = parse_forest(node, OP, "class", outputs, Aggregate::Sum)?;
    let classifier = Classifier {
        forest,
        labels,
        post,
        single_score,
    };
    expanded(classifier)
}

impl Ensemble for Classifier {
    fn name(&self) -> &'static str {
        "TreeEnsembleClassifier"
    }

    fn outputs(&self) -> usize {
        2
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        s.equals(&outputs[0].datum_type, self.labels.datum_type())?;
        s.equals(&outputs[0].rank, 1)?;
        s.equals(&outputs[0].shape[0], &inputs[0].shape[0])?;
        s.equals(&outputs[1].datum_type, DatumType::F32)?;
        s.equals(&outputs[1].rank, 2)?;
        s.equals(&outputs[1].shape[0], &inputs[0].shape[0])?;
        s.equals(&outputs[1].shape[1], self.labels.len().to_dim())?;
        Ok(())
    }

    fn output_facts(&self, rows: TDim) -> TVec<TypedFact> {
        tvec!(
            TypedFact::dt_shape(self.labels.datum_type(), [rows.clone()]),
            f32::fact(&[rows, self.labels.len().to_dim()])
        )
    }

    fn eval(&self, input: TValue) -> TractResult<TVec<TValue>> {
        let (rows, values) = self.forest.rows(input, self.name())?;
        let raw = self.forest.eval(rows, &values);
        let classes = self.labels.len();
        let mut scores = Vec::with_capacity(rows * classes);
        let mut best = Vec::with_capacity(rows);
        for row in raw.chunks(self.forest.n_outputs.max(1)).take(rows) {
            let s = self.scores(row);
            // The first of equal best scores, as ONNX Runtime picks.
            let top = (0..classes).fold(0, |b, i| if s[i] > s[b] { i } else { b });
            best.push(top);
            scores.extend(s);
        }
        Ok(tvec!(
            self.labels.pick(&best).into_tvalue(),
            Tensor::from_shape(&[rows, classes], &scores)?.into_tvalue()
        ))
    }
}
