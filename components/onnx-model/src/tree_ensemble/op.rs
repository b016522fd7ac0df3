//! The tract operator plumbing both tree-ensemble operators share: an [`Ensemble`] says what
//! its outputs are and computes them; [`Parsed`] and [`EnsembleOp`] are what tract sees.

use tract_onnx::tract_hir::internal::*;

/// What sets the two operators apart: their outputs. Everything tract needs of an operator is
/// written once, below, for any `Ensemble`.
pub trait Ensemble: std::fmt::Debug + Send + Sync + 'static {
    fn name(&self) -> &'static str;
    fn outputs(&self) -> usize;
    /// The outputs' types and shapes, for tract's analysis of the graph.
    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult;
    /// The outputs' facts for `rows` input rows.
    fn output_facts(&self, rows: TDim) -> TVec<TypedFact>;
    fn eval(&self, input: TValue) -> TractResult<TVec<TValue>>;
}

/// The operator as parsed: shape rules for tract's analysis, then [`EnsembleOp`].
#[derive(Debug, Clone)]
struct Parsed(Arc<dyn Ensemble>);

/// The typed operator tract plans and runs.
#[derive(Debug, Clone)]
struct EnsembleOp(Arc<dyn Ensemble>);

impl PartialEq for EnsembleOp {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for EnsembleOp {}

pub fn expanded(e: impl Ensemble) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Ok((expand(Parsed(Arc::new(e))), vec![]))
}

impl Expansion for Parsed {
    fn name(&self) -> StaticName {
        self.0.name().into()
    }

    fn nboutputs(&self) -> TractResult<usize> {
        Ok(self.0.outputs())
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 1)?;
        check_output_arity(outputs, self.0.outputs())?;
        self.0.rules(s, inputs, outputs)
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        model.wire_node(prefix, EnsembleOp(self.0.clone()), inputs)
    }
}

impl Op for EnsembleOp {
    fn name(&self) -> StaticName {
        self.0.name().into()
    }

    op_as_typed_op!();
}

impl EvalOp for EnsembleOp {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        self.0.eval(args_1!(inputs))
    }
}

impl TypedOp for EnsembleOp {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(self.0.output_facts(inputs[0].shape[0].clone()))
    }

    as_op!();
}
