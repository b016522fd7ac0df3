//! `LinearClassifier`: labels `[N]` and scores `[N, classes]`.
//!
//! As onnxruntime: `multi_class` is ignored; with several coefficient rows the label is the
//! first class of the highest raw score (before the post-transform) and each row of scores
//! is transformed; with one row and two labels (a binary model) the label is the second when
//! the raw score is above 0, and the scores are `[1 − p, p]`, `p` the score through LOGISTIC
//! or, for every other transform, the raw score itself.

use super::super::labels::Labels;
use super::super::op::{MlOp, expanded};
use super::super::post_transform::{PostTransform, logistic};
use super::super::values::{numeric, required_floats};
use super::Affine;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

const OP: &str = "LinearClassifier";

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let coefficients = required_floats(node, "coefficients")?;
    let intercepts = node
        .get_attr_opt_vec::<f32>("intercepts")?
        .unwrap_or_default();
    let labels = Labels::parse(node, "classlabels_ints")?;
    let post = PostTransform::parse(node)?;
    if intercepts.len() == 1 {
        node.expect_attr("classlabels_ints", labels.len() == 2, || {
            format!(
                "two labels for one row of coefficients, got {}",
                labels.len()
            )
        })?;
        // onnxruntime transforms the one score in place and then reads two columns of which
        // only the first was written: its answer is undefined.
        node.expect_attr("post_transform", post != PostTransform::Probit, || {
            "NONE, LOGISTIC, SOFTMAX or SOFTMAX_ZERO for one row of coefficients \
             (onnxruntime's PROBIT answer is undefined there), got PROBIT"
                .to_string()
        })?;
    } else if !intercepts.is_empty() {
        node.expect_attr("intercepts", intercepts.len() == labels.len(), || {
            format!(
                "one per class label ({}), got {}",
                labels.len(),
                intercepts.len()
            )
        })?;
    }
    expanded(Classifier {
        affine: Affine {
            coefficients,
            intercepts,
        },
        labels,
        post,
    })
}

#[derive(Debug)]
struct Classifier {
    affine: Affine,
    labels: Labels,
    post: PostTransform,
}

impl Classifier {
    /// The score columns for `outputs` rows of coefficients, checked against the labels.
    fn columns(&self, outputs: usize) -> TractResult<usize> {
        match outputs {
            1 if self.labels.len() == 2 => Ok(2),
            n if n == self.labels.len() => Ok(n),
            n => bail!(
                "{OP}: {n} rows of coefficients for {} class labels",
                self.labels.len()
            ),
        }
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
        let columns = self.columns(self.affine.outputs_for(OP, inputs[0])?)?;
        Ok(self.labels.output_facts(inputs[0], columns))
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (rows, outputs, raw) = self.affine.scores(OP, &inputs[0])?;
        let columns = self.columns(outputs)?;
        let mut picks = Vec::with_capacity(rows);
        let mut scores = Vec::with_capacity(rows * columns);
        if outputs == 1 {
            for &s in &raw {
                picks.push(usize::from(s > 0.0));
                let p = match self.post {
                    PostTransform::Logistic => logistic(s),
                    _ => s,
                };
                scores.extend([1.0 - p, p]);
            }
        } else {
            for row in raw.chunks(outputs) {
                // The first of equal best scores.
                let best = (1..outputs).fold(0, |b, i| if row[i] > row[b] { i } else { b });
                picks.push(best);
                let at = scores.len();
                scores.extend_from_slice(row);
                self.post.apply(&mut scores[at..]);
            }
        }
        Ok(tvec![
            self.labels.pick(&picks).into_tvalue(),
            Tensor::from_shape(&[rows, columns], &scores)?.into_tvalue()
        ])
    }
}

/// onnxruntime's answers are written as Python printed them, digits beyond f32's included.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::super::super::testing::{
        assert_close, error, floats, ints, node, run, string, strings,
    };
    use super::super::super::values::slice;
    use super::*;

    fn x() -> Tensor {
        tensor2(&[[1.0f32, -2.0], [0.5, 0.25], [-3.0, 1.0], [0.0, 0.0]])
    }

    fn close(got: &[f32], want: &[f32]) {
        assert_close("", got, want, 1e-6);
    }

    fn binary(post: &str, labels: AttributeProto) -> NodeProto {
        node(
            OP,
            vec![
                floats("coefficients", &[0.2, 0.1]),
                floats("intercepts", &[0.05]),
                labels,
                string("post_transform", post),
            ],
        )
    }

    fn three(post: &str) -> NodeProto {
        node(
            OP,
            vec![
                floats("coefficients", &[0.2, 0.1, -0.3, 0.4, 0.0, 0.0]),
                floats("intercepts", &[0.05, -0.1, 0.0]),
                strings("classlabels_strings", &["a", "b", "c"]),
                string("post_transform", post),
            ],
        )
    }

    use tract_onnx::pb::AttributeProto;

    // Expected values: onnxruntime 1.32 on the same nodes (Python, onnx.helper, /tmp/ops2/lin.py:
    // `run('LinearClassifier', dict(coefficients=[0.2, 0.1], intercepts=[0.05],
    // classlabels_ints=[3, 7], post_transform=post), X)` and the three-class node below).
    #[test]
    fn binary_with_one_row_of_coefficients() {
        let labels = || ints("classlabels_ints", &[3, 7]);
        for post in ["NONE", "SOFTMAX", "SOFTMAX_ZERO"] {
            let out = run(parse, &binary(post, labels()), vec![x()]).unwrap();
            assert_eq!(out[0], tensor1(&[7i64, 7, 3, 7]));
            close(
                slice::<f32>(&out[1]).unwrap(),
                &[0.95, 0.05, 0.825, 0.175, 1.45, -0.45, 0.95, 0.05],
            );
        }
        let out = run(parse, &binary("LOGISTIC", labels()), vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(&[7i64, 7, 3, 7]));
        close(
            slice::<f32>(&out[1]).unwrap(),
            &[
                0.4875026345252991,
                0.5124973654747009,
                0.4563612937927246,
                0.5436387062072754,
                0.6106392741203308,
                0.3893607258796692,
                0.4875026345252991,
                0.5124973654747009,
            ],
        );
        let strings = strings("classlabels_strings", &["no", "yes"]);
        let out = run(parse, &binary("LOGISTIC", strings), vec![x()]).unwrap();
        let want: Vec<String> = ["yes", "yes", "no", "yes"].map(String::from).to_vec();
        assert_eq!(out[0], tensor1(&want));
    }

    #[test]
    fn binary_probit_and_a_wrong_label_count_are_refused() {
        let e = error(
            parse,
            &binary("PROBIT", ints("classlabels_ints", &[0, 1])),
            vec![x()],
        );
        assert!(
            e.contains("(LinearClassifier), attribute 'post_transform'"),
            "{e}"
        );
        let e = error(
            parse,
            &binary("NONE", ints("classlabels_ints", &[5])),
            vec![x()],
        );
        assert!(
            e.contains("(LinearClassifier), attribute 'classlabels_ints'"),
            "{e}"
        );
    }

    #[test]
    fn several_classes_label_by_the_raw_scores() {
        let labels: Vec<String> = ["a", "a", "b", "a"].map(String::from).to_vec();
        let out = run(parse, &three("NONE"), vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(&labels));
        assert_eq!(out[1].shape(), &[4, 3]);
        close(
            &slice::<f32>(&out[1]).unwrap()[..6],
            &[0.05, -1.2, 0.0, 0.175, -0.15, 0.0],
        );
        let out = run(parse, &three("SOFTMAX"), vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(&labels));
        close(
            &slice::<f32>(&out[1]).unwrap()[6..],
            &[
                0.12861253321170807,
                0.6696829199790955,
                0.20170459151268005,
                0.3556267023086548,
                0.30609074234962463,
                0.33828258514404297,
            ],
        );
        let out = run(parse, &three("SOFTMAX_ZERO"), vec![x()]).unwrap();
        close(
            &slice::<f32>(&out[1]).unwrap()[..3],
            &[0.7772998809814453, 0.22270014882087708, 0.0],
        );
        let out = run(parse, &three("LOGISTIC"), vec![x()]).unwrap();
        close(
            &slice::<f32>(&out[1]).unwrap()[3..6],
            &[0.5436387062072754, 0.4625701606273651, 0.5],
        );
        let out = run(parse, &three("PROBIT"), vec![x()]).unwrap();
        close(
            &slice::<f32>(&out[1]).unwrap()[..3],
            &[-1.6446696519851685, f32::NAN, f32::NEG_INFINITY],
        );
    }

    // onnxruntime: two rows (scikit-learn's binary LogisticRegression as skl2onnx writes it)
    // and equal scores, which go to the first class.
    #[test]
    fn two_rows_and_ties() {
        let n = node(
            OP,
            vec![
                floats("coefficients", &[0.2, 0.1, -0.2, -0.1]),
                floats("intercepts", &[0.05, -0.05]),
                ints("classlabels_ints", &[0, 1]),
                string("post_transform", "LOGISTIC"),
            ],
        );
        let out = run(parse, &n, vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(&[0i64, 0, 1, 0]));
        close(
            &slice::<f32>(&out[1]).unwrap()[..4],
            &[
                0.5124973654747009,
                0.4875026047229767,
                0.5436387062072754,
                0.456361323595047,
            ],
        );
        let tie = node(
            OP,
            vec![
                floats("coefficients", &[0.2, 0.1, 0.2, 0.1]),
                floats("intercepts", &[0.05, 0.05]),
                ints("classlabels_ints", &[0, 1]),
            ],
        );
        let out = run(parse, &tie, vec![x()]).unwrap();
        assert_eq!(out[0], tensor1(&[0i64, 0, 0, 0]));
    }

    // onnxruntime reads double and integer inputs as float: the same labels and scores as
    // for the float values (2·X here; Python: lin.py's `cls float64/int64/int32` lines).
    #[test]
    fn double_and_integer_inputs() {
        let n = binary("NONE", ints("classlabels_ints", &[3, 7]));
        let want = [0.95f32, 0.05, 0.75, 0.25, 1.95, -0.95, 0.95, 0.05];
        let inputs = [
            tensor2(&[[2f64, -4.0], [1.0, 0.5], [-6.0, 2.0], [0.0, 0.0]]),
            tensor2(&[[2i64, -4], [1, 0], [-6, 2], [0, 0]]),
            tensor2(&[[2i32, -4], [1, 0], [-6, 2], [0, 0]]),
        ];
        for (i, input) in inputs.into_iter().enumerate() {
            let out = run(parse, &n, vec![input]).unwrap();
            assert_eq!(out[0], tensor1(&[7i64, 7, 3, 7]));
            let got = slice::<f32>(&out[1]).unwrap();
            if i == 0 {
                close(got, &[0.95, 0.05, 0.7, 0.3, 1.95, -0.95, 0.95, 0.05]);
            } else {
                close(got, &want);
            }
        }
    }

    #[test]
    fn coefficients_must_fit_the_input() {
        let e = error(
            parse,
            &three("NONE"),
            vec![tensor2(&[[1f32, 2.0, 3.0, 4.0]])],
        );
        assert!(
            e.contains("LinearClassifier: 6 coefficients for an input of 4 features"),
            "{e}"
        );
        let e = error(
            parse,
            &node(OP, vec![ints("classlabels_ints", &[0, 1])]),
            vec![x()],
        );
        assert!(
            e.contains("(LinearClassifier), attribute 'coefficients'"),
            "{e}"
        );
    }
}
