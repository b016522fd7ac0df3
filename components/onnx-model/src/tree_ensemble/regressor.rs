//! `TreeEnsembleRegressor`: one output column per target, the trees' weights aggregated
//! (`SUM`, `AVERAGE`, `MIN`, `MAX`) plus `base_values`, then `post_transform` as onnxruntime
//! applies it: to each row of two or more targets, and for one target PROBIT only.

use super::parse::parse_forest;
use super::{Aggregate, Forest};
use crate::ml::op::{MlOp, expanded};
use crate::ml::post_transform::PostTransform;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

const OP: &str = "TreeEnsembleRegressor";

#[derive(Debug)]
struct Regressor {
    forest: Forest,
    post: PostTransform,
}

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let post = PostTransform::parse(node)?;
    let aggregate = match node
        .get_attr_opt::<&str>("aggregate_function")?
        .unwrap_or("SUM")
    {
        "SUM" => Aggregate::Sum,
        "AVERAGE" => Aggregate::Average,
        "MIN" => Aggregate::Min,
        "MAX" => Aggregate::Max,
        other => {
            node.expect_attr("aggregate_function", false, || {
                format!("SUM, AVERAGE, MIN or MAX, got {other}")
            })?;
            unreachable!()
        }
    };
    let n_targets: usize = node.get_attr("n_targets")?;
    let forest = parse_forest(node, OP, "target", n_targets, aggregate)?;
    let bases = forest.base_values.len();
    node.expect_attr("base_values", bases == 0 || bases == n_targets, || {
        format!("one value per target ({n_targets}), got {bases}")
    })?;
    expanded(Regressor { forest, post })
}

impl MlOp for Regressor {
    fn name(&self) -> &'static str {
        OP
    }

    fn outputs(&self) -> usize {
        1
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![Some(DatumType::F32)]
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let rows = inputs[0].shape[0].clone();
        Ok(tvec!(f32::fact(&[rows, self.forest.n_outputs.to_dim()])))
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = &inputs[0];
        let forest = &self.forest;
        let double = forest.in_double(input);
        let (rows, values) = forest.rows(input, OP)?;
        let targets = forest.n_outputs;
        let mut out = Vec::with_capacity(rows * targets);
        for scores in forest.eval(rows, &values, double) {
            let at = out.len();
            for (t, v) in scores.values.into_iter().enumerate() {
                let base = forest.base_values.get(t).copied().unwrap_or(0.0);
                out.push(Forest::add(double, v, base) as f32);
            }
            if targets > 1 || self.post == PostTransform::Probit {
                self.post.apply_per_score(&mut out[at..]);
            }
        }
        Ok(tvec!(
            Tensor::from_shape(&[rows, targets], &out)?.into_tvalue()
        ))
    }
}
