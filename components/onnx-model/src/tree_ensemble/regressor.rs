//! `TreeEnsembleRegressor`: one output column per target, the trees' weights aggregated
//! (`SUM`, `AVERAGE`, `MIN`, `MAX`) plus `base_values`.

use super::{Aggregate, Forest, parse_forest};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

/// The inference-time operator: shape rules for tract's analysis, then [`ForestOp`].
#[derive(Debug, Clone)]
struct TreeEnsembleRegressor(Arc<Forest>);

/// The typed operator tract plans and runs.
#[derive(Debug, Clone)]
struct ForestOp(Arc<Forest>);

impl PartialEq for ForestOp {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ForestOp {}

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
    Ok((expand(TreeEnsembleRegressor(Arc::new(forest))), vec![]))
}

impl Expansion for TreeEnsembleRegressor {
    fn name(&self) -> StaticName {
        "TreeEnsembleRegressor".into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 1)?;
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].datum_type, DatumType::F32)?;
        s.equals(&outputs[0].rank, 2)?;
        s.equals(&outputs[0].shape[0], &inputs[0].shape[0])?;
        s.equals(&outputs[0].shape[1], self.0.n_outputs.to_dim())?;
        Ok(())
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        model.wire_node(prefix, ForestOp(self.0.clone()), inputs)
    }
}

impl Op for ForestOp {
    fn name(&self) -> StaticName {
        "TreeEnsembleRegressor".into()
    }

    op_as_typed_op!();
}

impl EvalOp for ForestOp {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let forest = &self.0;
        let (rows, values) = forest.rows(args_1!(inputs), "TreeEnsembleRegressor")?;
        let out = forest.eval(rows, &values);
        Ok(tvec!(
            Tensor::from_shape(&[rows, forest.n_outputs], &out)?.into_tvalue()
        ))
    }
}

impl TypedOp for ForestOp {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let rows = inputs[0].shape[0].clone();
        Ok(tvec!(f32::fact(&[rows, self.0.n_outputs.to_dim()])))
    }

    as_op!();
}
