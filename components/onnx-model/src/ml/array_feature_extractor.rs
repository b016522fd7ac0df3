//! `ArrayFeatureExtractor`: picks elements of the data's last axis by the int64 indices of
//! the second input (any shape, read flat). skl2onnx's k-nearest-neighbours exports gather
//! the training labels of the neighbours found with it, and its classifiers their labels.
//!
//! As onnxruntime: the output is the data's shape with the last axis replaced by the indices'
//! count, a vector `[C]` giving `[1, count]`; the data may be of any type (strings included);
//! no indices, or one outside `[0, C)`, is an error; scalar data is refused.

use super::op::{MlOp, expanded};
use super::values::{shaped, slice};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    _node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    expanded(ArrayFeatureExtractor)
}

#[derive(Debug)]
struct ArrayFeatureExtractor;

/// The output shape for data of `shape` and `count` indices.
fn output_shape<D: Clone + From<usize>>(shape: &[D], count: D) -> TVec<D> {
    let mut out: TVec<D> = match shape.len() {
        1 => tvec![D::from(1)],
        _ => shape[..shape.len() - 1].iter().cloned().collect(),
    };
    out.push(count);
    out
}

fn gather<T: Datum + Clone>(x: &Tensor, indices: &[usize]) -> TractResult<Tensor> {
    let columns = *x.shape().last().unwrap();
    let values = slice::<T>(x)?;
    let rows = values.len().checked_div(columns).unwrap_or(0);
    let mut out = Vec::with_capacity(rows * indices.len());
    for row in 0..rows {
        out.extend(indices.iter().map(|&i| values[row * columns + i].clone()));
    }
    shaped(&output_shape(x.shape(), indices.len()), out)
}

impl MlOp for ArrayFeatureExtractor {
    fn name(&self) -> &'static str {
        "ArrayFeatureExtractor"
    }

    fn inputs(&self) -> usize {
        2
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let (x, y) = (inputs[0], inputs[1]);
        ensure!(
            x.rank() > 0,
            "ArrayFeatureExtractor: scalar data (input X); expected [.., C]"
        );
        ensure!(
            y.datum_type == DatumType::I64,
            "ArrayFeatureExtractor: indices (input Y) of type {:?}; expected int64",
            y.datum_type
        );
        let shape: Vec<TDim> = x.shape.iter().cloned().collect();
        let count = y.shape.iter().product::<TDim>();
        Ok(tvec![x.datum_type.fact(output_shape(&shape, count))])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let columns = *x
            .shape()
            .last()
            .context("ArrayFeatureExtractor: scalar data")?;
        let indices = slice::<i64>(y)?;
        ensure!(
            !indices.is_empty(),
            "ArrayFeatureExtractor: no indices (input Y is empty)"
        );
        let indices = indices
            .iter()
            .enumerate()
            .map(|(at, &i)| match usize::try_from(i) {
                Ok(i) if i < columns => Ok(i),
                _ => bail!("ArrayFeatureExtractor: index Y[{at}] = {i} is outside [0, {columns})"),
            })
            .collect::<TractResult<Vec<usize>>>()?;
        let out = dispatch_datum!(gather(x.datum_type())(x, &indices))?;
        Ok(tvec![out.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{error, node, run};
    use super::super::values::slice;
    use super::*;

    fn extract(x: Tensor, indices: Tensor) -> TractResult<Tensor> {
        let mut n = node("ArrayFeatureExtractor", vec![]);
        n.input = vec!["x".into(), "y".into()];
        Ok(run(parse, &n, vec![x, indices])?.remove(0))
    }

    fn grid() -> Tensor {
        Tensor::from_shape(&[3, 4], &(0..12).map(|i| i as f32).collect::<Vec<_>>()).unwrap()
    }

    // Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper).
    #[test]
    fn columns_by_index() {
        let out = extract(grid(), tensor1(&[2i64, 0])).unwrap();
        assert_eq!(out.shape(), &[3, 2]);
        assert_eq!(slice::<f32>(&out).unwrap(), [2.0, 0.0, 6.0, 4.0, 10.0, 8.0]);
        // The indices' shape does not matter, nor repeats.
        let out = extract(grid(), tensor2(&[[2i64], [0]])).unwrap();
        assert_eq!(out.shape(), &[3, 2]);
        let out = extract(grid(), tensor0(1i64)).unwrap();
        assert_eq!(
            (out.shape(), slice::<f32>(&out).unwrap()),
            (&[3, 1][..], &[1.0, 5.0, 9.0][..])
        );
        let out = extract(grid(), tensor1(&[1i64, 1, 3])).unwrap();
        assert_eq!(
            slice::<f32>(&out).unwrap(),
            [1., 1., 3., 5., 5., 7., 9., 9., 11.]
        );
    }

    #[test]
    fn a_vector_gives_one_row_and_higher_ranks_keep_their_axes() {
        let out = extract(tensor1(&[5f32, 6.0, 7.0]), tensor1(&[2i64, 0, 2])).unwrap();
        assert_eq!(out.shape(), &[1, 3]);
        assert_eq!(slice::<f32>(&out).unwrap(), [7.0, 5.0, 7.0]);
        let cube = Tensor::from_shape(&[2, 2, 3], &(0..12).map(|i| i as f32).collect::<Vec<_>>());
        let out = extract(cube.unwrap(), tensor1(&[2i64, 1])).unwrap();
        assert_eq!(out.shape(), &[2, 2, 2]);
        assert_eq!(
            slice::<f32>(&out).unwrap(),
            [2., 1., 5., 4., 8., 7., 11., 10.]
        );
    }

    #[test]
    fn any_data_type_is_kept() {
        let labels = shaped(&[3], ["a", "b", "c"].map(String::from).to_vec()).unwrap();
        let out = extract(labels, tensor2(&[[2i64, 0], [1, 1]])).unwrap();
        assert_eq!(out.shape(), &[1, 4]);
        assert_eq!(slice::<String>(&out).unwrap(), ["c", "a", "b", "b"]);
        let out = extract(tensor2(&[[1i64, 2], [3, 4]]), tensor1(&[1i64])).unwrap();
        assert_eq!(slice::<i64>(&out).unwrap(), [2, 4]);
        let out = extract(tensor2(&[[1f64, 2.0]]), tensor1(&[0i64])).unwrap();
        assert_eq!(slice::<f64>(&out).unwrap(), [1.0]);
    }

    #[test]
    fn empty_or_outside_indices_are_errors() {
        let mut n = node("ArrayFeatureExtractor", vec![]);
        n.input = vec!["x".into(), "y".into()];
        let e = error(parse, &n, vec![grid(), tensor1::<i64>(&[])]);
        assert!(e.contains("ArrayFeatureExtractor: no indices"), "{e}");
        let e = error(parse, &n, vec![grid(), tensor1(&[1i64, 4])]);
        assert!(
            e.contains("ArrayFeatureExtractor: index Y[1] = 4 is outside [0, 4)"),
            "{e}"
        );
        let e = error(parse, &n, vec![grid(), tensor1(&[-1i64])]);
        assert!(e.contains("index Y[0] = -1 is outside [0, 4)"), "{e}");
        let e = error(parse, &n, vec![tensor0(5f32), tensor1(&[0i64])]);
        assert!(e.contains("ArrayFeatureExtractor: scalar data"), "{e}");
    }
}
