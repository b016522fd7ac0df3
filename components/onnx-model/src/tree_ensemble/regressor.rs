//! `TreeEnsembleRegressor`: one output column per target, the trees' weights aggregated
//! (`SUM`, `AVERAGE`, `MIN`, `MAX`) plus `base_values`.

use super::{Aggregate, Ensemble, Forest, expanded, parse_forest};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    if let Some(t) = node.get_attr_opt::<&str>("post_transform")?
        && t != "NONE"
    {
        bail!("TreeEnsembleRegressor: post_transform {t} is not supported (only NONE)");
    }
    let aggregate = match node
        .get_attr_opt::<&str>("aggregate_function")?
        .unwrap_or("SUM")
    {
        "SUM" => Aggregate::Sum,
        "AVERAGE" => Aggregate::Average,
        "MIN" => Aggregate::Min,
        "MAX" => Aggregate::Max,
        other => bail!("TreeEnsembleRegressor: unknown aggregate_function {other}"),
    };
    let n_targets: usize = node.get_attr("n_targets")?;
    let forest = parse_forest(
        node,
        "TreeEnsembleRegressor",
        "target",
        n_targets,
        aggregate,
    )?;
    expanded(forest)
}

impl Ensemble for Forest {
    fn name(&self) -> &'static str {
        "TreeEnsembleRegressor"
    }

    fn outputs(&self) -> usize {
        1
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        s.equals(&outputs[0].datum_type, DatumType::F32)?;
        s.equals(&outputs[0].rank, 2)?;
        s.equals(&outputs[0].shape[0], &inputs[0].shape[0])?;
        s.equals(&outputs[0].shape[1], self.n_outputs.to_dim())?;
        Ok(())
    }

    fn output_facts(&self, rows: TDim) -> TVec<TypedFact> {
        tvec!(f32::fact(&[rows, self.n_outputs.to_dim()]))
    }

    fn eval(&self, input: TValue) -> TractResult<TVec<TValue>> {
        let (rows, values) = self.rows(input, self.name())?;
        let out = Forest::eval(self, rows, &values);
        Ok(tvec!(
            Tensor::from_shape(&[rows, self.n_outputs], &out)?.into_tvalue()
        ))
    }
}
