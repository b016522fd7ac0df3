//! ONNX's `Sigmoid` in place of tract's, a fast approximation that reaches 0 near x = -14: a
//! binary MLP or SGD classifier exported by skl2onnx answers P(class) = sigmoid(logit), and
//! tract answered 0 where onnxruntime says 4.7683716e-07 (exactly 5.05e-07). A float is computed as onnxruntime
//! computes it (its batched logistic, [`batched_logistic`], within ~6e-8 of the exact value),
//! so that a small probability `1 - p` matches to the bit; a double exactly.

use super::op::{MlOp, expanded};
use super::post_transform::batched_logistic;
use super::values::{shaped, slice};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    _node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    expanded(Sigmoid)
}

#[derive(Debug)]
struct Sigmoid;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl MlOp for Sigmoid {
    fn name(&self) -> &'static str {
        "Sigmoid"
    }

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        match inputs[0].datum_type {
            DatumType::F32 | DatumType::F64 => Ok(tvec![inputs[0].without_value()]),
            other => bail!("Sigmoid: input of type {other:?}; it takes float or double"),
        }
    }

    fn eval(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let x = &inputs[0];
        let out = match x.datum_type() {
            DatumType::F64 => {
                let v = slice::<f64>(x)?.iter().map(|&v| sigmoid(v)).collect();
                shaped(x.shape(), v)?
            }
            _ => {
                let v = slice::<f32>(x)?
                    .iter()
                    .map(|&v| batched_logistic(v))
                    .collect();
                shaped(x.shape(), v)?
            }
        };
        Ok(tvec![out.into_tvalue()])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{node, run};
    use super::*;

    #[test]
    fn saturating_logits_keep_their_small_probabilities() {
        // onnxruntime 1.32's float Sigmoid (one node, Python: ort.InferenceSession(...).run
        // on these values): -14.499562 -> 4.7683716e-07 (the mlp_classifier corpus graph's
        // logit; tract's said 0), and at the middle, the top and beyond its clamp.
        let x = tensor1(&[-14.499562f32, 0.0, 20.0, -200.0]);
        let out = run(parse, &node("Sigmoid", vec![]), vec![x]).unwrap();
        let got: Vec<f32> = slice::<f32>(&out[0]).unwrap().to_vec();
        assert_eq!(got, [4.7683716e-07, 0.5, 1.0, 0.0]);
        // In double, exact: Python's 1 / (1 + math.exp(30)) = 9.357622968839299e-14
        // (onnxruntime's double Sigmoid approximates: 9.348077867343818e-14).
        let x = tensor1(&[-30.0f64]);
        let out = run(parse, &node("Sigmoid", vec![]), vec![x]).unwrap();
        assert_eq!(slice::<f64>(&out[0]).unwrap()[0], 9.357622968839299e-14);
    }
}
