//! `FeatureVectorizer`: the inputs' rows side by side in one `f32` matrix, input `i` giving
//! `inputdimensions[i]` columns. skl2onnx writes it to join a ColumnTransformer's parts.
//!
//! As onnxruntime: a row is everything after the first axis (a vector is one row); an input
//! with fewer values per row than its dimension is padded with zeros, one with more is cut;
//! every input has the same rows. onnxruntime binds all inputs to one type; the specification
//! allows any numeric mix, so each is converted to `f32` on its own.

use super::op::{MlOp, expanded};
use super::values::{numeric, shaped, to_f32};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let dims = node
        .get_attr_opt_vec::<usize>("inputdimensions")?
        .unwrap_or_default();
    node.expect_attr(
        "inputdimensions",
        !dims.is_empty(),
        "one dimension per input",
    )?;
    node.expect_attr("inputdimensions", dims.len() == node.input.len(), || {
        format!(
            "one dimension per input ({}), got {}",
            node.input.len(),
            dims.len()
        )
    })?;
    // The output's width, checked once here (a hostile file's dimensions must not wrap or
    // ask for gigabytes per row).
    let width = dims.iter().try_fold(0usize, |w, &d| w.checked_add(d));
    node.expect_attr(
        "inputdimensions",
        width.is_some_and(|w| w <= MAX_WIDTH),
        || format!("at most {MAX_WIDTH} columns in all"),
    )?;
    expanded(FeatureVectorizer { dims })
}

/// The most columns a FeatureVectorizer may make (16 million, 64 MiB of floats a row).
const MAX_WIDTH: usize = 1 << 24;

#[derive(Debug)]
struct FeatureVectorizer {
    dims: Vec<usize>,
}

/// The rows of an input of `shape`: its first axis, or 1 for a vector.
fn rows<D: Clone + From<usize>>(shape: &[D]) -> D {
    if shape.len() > 1 {
        shape[0].clone()
    } else {
        D::from(1)
    }
}

impl MlOp for FeatureVectorizer {
    fn name(&self) -> &'static str {
        "FeatureVectorizer"
    }

    fn inputs(&self) -> usize {
        self.dims.len()
    }

    fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![Some(DatumType::F32)]
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        for input in inputs {
            numeric("FeatureVectorizer", input.datum_type)?;
            ensure!(
                input.rank() > 0,
                "FeatureVectorizer: a scalar input; expected [N, C]"
            );
        }
        let shape: Vec<TDim> = inputs[0].shape.iter().cloned().collect();
        let width: usize = self.dims.iter().sum();
        Ok(tvec![f32::fact([rows(&shape), width.to_dim()])])
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let n = rows(inputs[0].shape());
        let width: usize = self.dims.iter().sum();
        let mut out = vec![0f32; n * width];
        let mut start = 0;
        for (i, (x, &dim)) in inputs.iter().zip(&self.dims).enumerate() {
            let r = rows(x.shape());
            ensure!(
                r == n,
                "FeatureVectorizer: input {i} has {r} rows, input 0 has {n}; all inputs need \
                 the same rows"
            );
            let values = to_f32("FeatureVectorizer", x)?;
            let stride = values.len().checked_div(n).unwrap_or(0);
            let taken = stride.min(dim);
            for row in 0..n {
                let from = &values[row * stride..][..taken];
                out[row * width + start..][..taken].copy_from_slice(from);
            }
            start += dim;
        }
        Ok(tvec![shaped(&[n, width], out)?.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{error, ints, node, run};
    use super::super::values::slice;
    use super::*;

    fn vectorizer(dims: &[i64]) -> NodeProto {
        let mut n = node("FeatureVectorizer", vec![ints("inputdimensions", dims)]);
        n.input = (0..dims.len()).map(|i| format!("in{i}")).collect();
        n
    }

    fn joined(dims: &[i64], inputs: Vec<Tensor>) -> (Vec<usize>, Vec<f32>) {
        let out = run(parse, &vectorizer(dims), inputs).unwrap();
        (
            out[0].shape().to_vec(),
            slice::<f32>(&out[0]).unwrap().to_vec(),
        )
    }

    fn parts() -> Vec<Tensor> {
        vec![
            tensor2(&[[1.5f32, 2.0], [3.0, 4.0]]),
            tensor2(&[[7f32], [8.0]]),
            tensor2(&[[0.25f32, 0.5, 0.75], [1.0, 2.0, 3.0]]),
        ]
    }

    // Expected values: onnxruntime 1.32 on the same node (Python, onnx.helper).
    #[test]
    fn rows_side_by_side() {
        let (shape, values) = joined(&[2, 1, 3], parts());
        assert_eq!(shape, [2, 6]);
        assert_eq!(
            values,
            [1.5, 2.0, 7.0, 0.25, 0.5, 0.75, 3.0, 4.0, 8.0, 1.0, 2.0, 3.0]
        );
    }

    #[test]
    fn padded_or_cut_to_the_dimensions() {
        let (shape, values) = joined(&[3, 2, 3], parts());
        assert_eq!(shape, [2, 8]);
        assert_eq!(&values[..8], [1.5, 2.0, 0.0, 7.0, 0.0, 0.25, 0.5, 0.75]);
        let (shape, values) = joined(&[1, 1, 2], parts());
        assert_eq!(shape, [2, 4]);
        assert_eq!(values, [1.5, 7.0, 0.25, 0.5, 3.0, 8.0, 1.0, 2.0]);
    }

    #[test]
    fn vectors_higher_ranks_and_mixed_types() {
        let (shape, values) = joined(&[2, 1], vec![tensor1(&[1f32, 2.0]), tensor1(&[3f32])]);
        assert_eq!((shape, values), (vec![1, 3], vec![1.0, 2.0, 3.0]));
        let cube = Tensor::from_shape(&[2, 2, 2], &[0f32, 1., 2., 3., 4., 5., 6., 7.]).unwrap();
        let (shape, values) = joined(&[3, 1], vec![cube, tensor2(&[[7f32], [8.0]])]);
        assert_eq!(shape, [2, 4]);
        assert_eq!(values, [0.0, 1.0, 2.0, 7.0, 4.0, 5.0, 6.0, 8.0]);
        // Not in onnxruntime (one type for all inputs): each converted as its own type is.
        let mixed = vec![tensor2(&[[1i64, 2]]), tensor2(&[[16777217.0f64]])];
        let (_, values) = joined(&[2, 1], mixed);
        assert_eq!(values, [1.0, 2.0, 16777216.0]);
    }

    #[test]
    fn rows_and_dimensions_are_checked() {
        let e = error(
            parse,
            &vectorizer(&[2, 1]),
            vec![tensor2(&[[1f32, 2.0], [3.0, 4.0]]), tensor2(&[[1f32]])],
        );
        assert!(
            e.contains("FeatureVectorizer: input 1 has 1 rows, input 0 has 2"),
            "{e}"
        );
        let mut n = vectorizer(&[2]);
        n.input.push("in1".into());
        let e = error(parse, &n, parts()[..2].to_vec());
        assert!(
            e.contains("(FeatureVectorizer), attribute 'inputdimensions'"),
            "{e}"
        );
        // Dimensions a hostile file made huge are refused before any row is allocated.
        let e = error(parse, &vectorizer(&[1 << 40]), parts()[..1].to_vec());
        assert!(e.contains("at most 16777216 columns"), "{e}");
    }
}
