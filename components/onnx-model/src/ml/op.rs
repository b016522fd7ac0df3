//! The tract plumbing every operator of this module shares: an [`MlOp`] says how many inputs
//! and outputs it has, what its outputs are for given inputs and computes them; [`Parsed`] and
//! [`Typed`] are what tract sees. Written once here so that an operator is only its maths.
//!
//! tract analyses a graph twice: first with partial facts (shape rules, `Expansion::rules`),
//! then with complete typed facts (`TypedOp::output_facts`). The operators here state in the
//! first only what they always know (arity, and output types that do not depend on the
//! input), and compute the rest from the typed inputs, which is exact and short.

use tract_onnx::tract_hir::internal::*;

/// One ONNX-ML operator: its maths and the facts of its outputs.
pub trait MlOp: std::fmt::Debug + Send + Sync + 'static {
    /// The ONNX operator name (`Scaler`), for tract's messages.
    fn name(&self) -> &'static str;
    /// How many inputs it reads: all of them are required.
    fn inputs(&self) -> usize {
        1
    }
    fn outputs(&self) -> usize {
        1
    }
    /// Each output's type when it is fixed (`None`: it follows the input).
    fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![None; self.outputs()]
    }
    /// The outputs' facts for these typed inputs.
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>>;
    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>>;
}

/// The operator as tract's ONNX parser wants it.
pub fn expanded(op: impl MlOp) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Ok((expand(Parsed(Arc::new(op))), vec![]))
}

/// The operator as parsed: arity and fixed types for tract's analysis, then [`Typed`].
#[derive(Debug, Clone)]
struct Parsed(Arc<dyn MlOp>);

/// The typed operator tract plans and runs.
#[derive(Debug, Clone)]
struct Typed(Arc<dyn MlOp>);

impl PartialEq for Typed {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Typed {}

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
        check_input_arity(inputs, self.0.inputs())?;
        check_output_arity(outputs, self.0.outputs())?;
        for (output, datum_type) in outputs.iter().zip(self.0.output_types()) {
            if let Some(dt) = datum_type {
                s.equals(&output.datum_type, dt)?;
            }
        }
        // With one input, the outputs follow from its type and shape by `output_facts`, once
        // both are known: stated here too, as some operators downstream (a `Scan`'s body,
        // k-nearest neighbours' export) need their input's shape before the typed pass.
        if self.0.inputs() == 1 {
            let op = self.0.clone();
            s.given_2(
                &inputs[0].datum_type,
                &inputs[0].shape,
                move |s, datum_type, shape| {
                    let fact = datum_type.fact(shape.clone());
                    let facts = op.output_facts(&[&fact])?;
                    for (output, fact) in outputs.iter().zip(facts) {
                        s.equals(&output.datum_type, fact.datum_type)?;
                        s.equals(&output.shape, fact.shape.to_tvec())?;
                    }
                    Ok(())
                },
            )?;
        }
        Ok(())
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        model.wire_node(prefix, Typed(self.0.clone()), inputs)
    }
}

impl Op for Typed {
    fn name(&self) -> StaticName {
        self.0.name().into()
    }

    op_as_typed_op!();
}

impl EvalOp for Typed {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        self.0.eval(inputs)
    }
}

impl TypedOp for Typed {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        self.0.output_facts(inputs)
    }

    as_op!();
}

/// An input as a contiguous `f32` matrix `[rows, columns]` (a vector is one row; anything of
/// higher rank is refused, as ONNX-ML's operators are defined on `[N, C]`).
pub fn matrix(input: &TValue, op: &str) -> TractResult<(usize, usize, Vec<f32>)> {
    let shape = input.shape().to_vec();
    let (rows, columns) = match shape[..] {
        [c] => (1, c),
        [r, c] => (r, c),
        _ => bail!("{op}: input of shape {shape:?}; expected [N, C]"),
    };
    let values = input.cast_to::<f32>()?;
    let view = values.to_plain_array_view::<f32>()?;
    Ok((rows, columns, view.iter().copied().collect()))
}
