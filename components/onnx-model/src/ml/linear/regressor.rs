//! `LinearRegressor`: `[N, targets]` floats. As onnxruntime: intercepts count only when there
//! is one per target, and a post_transform other than PROBIT does nothing to a single target.

use super::super::op::{MlOp, expanded};
use super::super::post_transform::PostTransform;
use super::super::values::{numeric, required_floats};
use super::Affine;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

const OP: &str = "LinearRegressor";

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let coefficients = required_floats(node, "coefficients")?;
    let targets = node.get_attr_opt::<i64>("targets")?.unwrap_or(1);
    node.expect_attr("targets", targets >= 1, "at least 1")?;
    let targets = targets as usize;
    node.expect_attr("coefficients", coefficients.len() % targets == 0, || {
        format!(
            "a multiple of targets ({targets}) values, got {}",
            coefficients.len()
        )
    })?;
    let mut intercepts = node
        .get_attr_opt_vec::<f32>("intercepts")?
        .unwrap_or_default();
    if intercepts.len() != targets {
        intercepts.clear();
    }
    let post = PostTransform::parse(node)?;
    expanded(Regressor {
        affine: Affine {
            coefficients,
            intercepts,
        },
        targets,
        post,
    })
}

#[derive(Debug)]
struct Regressor {
    affine: Affine,
    targets: usize,
    post: PostTransform,
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
        let outputs = self.affine.outputs_for(OP, inputs[0])?;
        ensure!(
            outputs == self.targets,
            "{OP}: {outputs} rows of coefficients for {} targets",
            self.targets
        );
        let rows = match inputs[0].rank() {
            1 => 1.to_dim(),
            _ => inputs[0].shape[0].clone(),
        };
        Ok(tvec![f32::fact(&[rows, self.targets.to_dim()])])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (rows, targets, mut y) = self.affine.scores(OP, &inputs[0])?;
        ensure!(
            targets == self.targets,
            "{OP}: {targets} rows of coefficients for {} targets",
            self.targets
        );
        if targets > 1 {
            y.chunks_mut(targets).for_each(|row| self.post.apply(row));
        } else if self.post == PostTransform::Probit {
            self.post.apply(&mut y);
        }
        Ok(tvec![
            Tensor::from_shape(&[rows, targets], &y)?.into_tvalue()
        ])
    }
}

/// onnxruntime's answers are written as Python printed them, digits beyond f32's included.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::super::super::testing::{assert_close, error, floats, int, node, run, string};
    use super::super::super::values::slice;
    use super::*;

    fn x() -> Tensor {
        tensor2(&[[1.0f32, -2.0], [0.5, 0.25], [-3.0, 1.0], [0.0, 0.0]])
    }

    fn close(got: &[f32], want: &[f32]) {
        assert_close("", got, want, 1e-6);
    }

    // Expected values: onnxruntime 1.32 on the same nodes (Python, onnx.helper:
    // /tmp/ops2/lin.py, `run('LinearRegressor', dict(coefficients=..., ...), X)`).
    #[test]
    fn two_targets_with_a_post_transform() {
        let n = |post: &str| {
            node(
                OP,
                vec![
                    floats("coefficients", &[0.2, 0.1, -0.3, 0.4]),
                    floats("intercepts", &[0.05, -0.1]),
                    int("targets", 2),
                    string("post_transform", post),
                ],
            )
        };
        let out = run(parse, &n("NONE"), vec![x()]).unwrap();
        assert_eq!(out[0].shape(), &[4, 2]);
        close(
            slice::<f32>(&out[0]).unwrap(),
            &[0.05, -1.2, 0.175, -0.15, -0.45, 1.2, 0.05, -0.1],
        );
        let out = run(parse, &n("SOFTMAX"), vec![x()]).unwrap();
        close(
            &slice::<f32>(&out[0]).unwrap()[..4],
            &[
                0.7772998809814453,
                0.22270014882087708,
                0.580542266368866,
                0.41945770382881165,
            ],
        );
        let out = run(parse, &n("LOGISTIC"), vec![x()]).unwrap();
        close(
            &slice::<f32>(&out[0]).unwrap()[4..],
            &[
                0.38936078548431396,
                0.7685247659683228,
                0.5124973654747009,
                0.4750208258628845,
            ],
        );
    }

    #[test]
    fn one_target_is_transformed_by_probit_only() {
        let n = |post: &str| {
            node(
                OP,
                vec![
                    floats("coefficients", &[0.2, 0.1]),
                    floats("intercepts", &[0.05]),
                    string("post_transform", post),
                ],
            )
        };
        let raw = [0.05f32, 0.175, -0.45, 0.05];
        for post in ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"] {
            let out = run(parse, &n(post), vec![x()]).unwrap();
            close(slice::<f32>(&out[0]).unwrap(), &raw);
        }
        let out = run(parse, &n("PROBIT"), vec![x()]).unwrap();
        close(
            slice::<f32>(&out[0]).unwrap(),
            &[
                -1.6446696519851685,
                -0.9347488880157471,
                f32::NAN,
                -1.6446696519851685,
            ],
        );
    }

    #[test]
    fn intercepts_count_only_with_one_per_target() {
        let without = node(OP, vec![floats("coefficients", &[0.2, 0.1])]);
        let out = run(parse, &without, vec![x()]).unwrap();
        close(slice::<f32>(&out[0]).unwrap(), &[0.0, 0.125, -0.5, 0.0]);
        let two = node(
            OP,
            vec![
                floats("coefficients", &[0.2, 0.1]),
                floats("intercepts", &[0.5, 1.0]),
            ],
        );
        let out = run(parse, &two, vec![x()]).unwrap();
        close(slice::<f32>(&out[0]).unwrap(), &[0.0, 0.125, -0.5, 0.0]);
    }

    // onnxruntime's LinearRegressor takes float only; an integer or double input is read as
    // float, as its other ONNX-ML kernels do, and answers what onnxruntime answers for the
    // same values in float (rows 1, 3 and 4 of `two_targets...`'s input: 0.5, 0.0, 0.5).
    #[test]
    fn integer_and_double_inputs() {
        let n = node(
            OP,
            vec![
                floats("coefficients", &[0.2, 0.1]),
                floats("intercepts", &[0.5]),
            ],
        );
        let want = [0.5, 0.0, 0.5];
        let out = run(parse, &n, vec![tensor2(&[[1i64, -2], [-3, 1], [0, 0]])]).unwrap();
        close(slice::<f32>(&out[0]).unwrap(), &want);
        let out = run(
            parse,
            &n,
            vec![tensor2(&[[1f64, -2.0], [-3.0, 1.0], [0.0, 0.0]])],
        )
        .unwrap();
        close(slice::<f32>(&out[0]).unwrap(), &want);
        let out = run(parse, &n, vec![tensor2(&[[1i32, -2], [-3, 1], [0, 0]])]).unwrap();
        close(slice::<f32>(&out[0]).unwrap(), &want);
    }

    #[test]
    fn errors_name_the_operator_and_attribute() {
        let e = error(parse, &node(OP, vec![]), vec![x()]);
        assert!(
            e.contains("(LinearRegressor), attribute 'coefficients'"),
            "{e}"
        );
        let three = node(OP, vec![floats("coefficients", &[0.2, 0.1, 0.3])]);
        let e = error(parse, &three, vec![x()]);
        assert!(
            e.contains("LinearRegressor: 3 coefficients for an input of 2 features"),
            "{e}"
        );
        let e = error(
            parse,
            &node(
                OP,
                vec![
                    floats("coefficients", &[1.0]),
                    string("post_transform", "X"),
                ],
            ),
            vec![x()],
        );
        assert!(e.contains("attribute 'post_transform'"), "{e}");
    }
}
