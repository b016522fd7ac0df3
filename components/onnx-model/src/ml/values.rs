//! Reading numeric inputs the way onnxruntime's ONNX-ML kernels do: every element converted to
//! `f32` (a double rounded, an integer converted), and a string or other input refused with
//! the operator's name rather than parsed.

use tract_onnx::pb::NodeProto;
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::internal::*;

/// Whether `dt` is one of the numeric types the ONNX-ML operators take.
pub fn is_numeric(dt: DatumType) -> bool {
    matches!(
        dt,
        DatumType::F32 | DatumType::F64 | DatumType::I64 | DatumType::I32
    )
}

/// `dt`, or an error naming `op` when it is not numeric.
pub fn numeric(op: &str, dt: DatumType) -> TractResult<DatumType> {
    ensure!(
        is_numeric(dt),
        "{op}: input of type {dt:?}; expected float, double, int64 or int32"
    );
    Ok(dt)
}

/// Every element of `t` as `f32`.
pub fn to_f32(op: &str, t: &Tensor) -> TractResult<Vec<f32>> {
    Ok(match numeric(op, t.datum_type())? {
        DatumType::F32 => slice::<f32>(t)?.to_vec(),
        DatumType::F64 => slice::<f64>(t)?.iter().map(|&x| x as f32).collect(),
        DatumType::I64 => slice::<i64>(t)?.iter().map(|&x| x as f32).collect(),
        _ => slice::<i32>(t)?.iter().map(|&x| x as f32).collect(),
    })
}

/// The elements of `t`, in order.
pub fn slice<T: Datum>(t: &Tensor) -> TractResult<&[T]> {
    t.try_as_plain_ram()?.as_slice::<T>()
}

/// A tensor of `shape` holding `values` (any datum, strings included).
pub fn shaped<T: Datum>(shape: &[usize], values: Vec<T>) -> TractResult<Tensor> {
    Ok(tract_ndarray::ArrayD::from_shape_vec(shape, values)?.into())
}

/// The float list attribute `name` of `node`, which must hold at least one value (a model's
/// coefficients, rho): an error naming the attribute otherwise.
pub fn required_floats(node: &NodeProto, name: &str) -> TractResult<Vec<f32>> {
    let values = node.get_attr_opt_vec::<f32>(name)?.unwrap_or_default();
    node.expect_attr(name, !values.is_empty(), "at least one value")?;
    Ok(values)
}
