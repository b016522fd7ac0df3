//! minilm through the Open Inference Protocol: a `text` BYTES tensor in, `embedding` FP32
//! `[N, 384]` out. The vector is the one `/predict` answers in `results.embedding`, read from
//! there, so both protocols give the same numbers; FP32 is the network's own precision (the
//! JSON answer already writes each number as the `f32` it is).

use edge_api::embedding::DIMENSIONS;
use model_sdk::InputType;
use model_sdk::oip::{Binding, Datatype, InputSpec, OutputSpec, Signature};

pub fn signature() -> Signature {
    Signature {
        platform: "wasm".into(),
        input_type: InputType::Text,
        inputs: vec![InputSpec::new(
            "text",
            Datatype::Bytes,
            &[],
            Binding::Text("text".into()),
        )],
        outputs: vec![OutputSpec::array(
            "embedding",
            Datatype::Fp32,
            DIMENSIONS,
            "/embedding",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_in_and_a_vector_of_384_fp32_out() {
        assert_eq!(
            signature().metadata("minilm", "1"),
            json!({
                "name": "minilm", "versions": ["1"], "platform": "wasm",
                "inputs": [{"name": "text", "datatype": "BYTES", "shape": [-1]}],
                "outputs": [{"name": "embedding", "datatype": "FP32", "shape": [-1, 384]}],
            })
        );
    }

    /// The field the signature reads is the one the answer writes.
    #[test]
    fn the_output_is_read_where_the_answer_puts_the_vector() {
        let answer = crate::answer(&[0.5; DIMENSIONS]);
        let model_sdk::oip::Source::Pointer(pointer) = &signature().outputs[0].source else {
            panic!("one pointer")
        };
        let vector = answer.pointer(pointer).and_then(|v| v.as_array()).unwrap();
        assert_eq!(vector.len(), DIMENSIONS);
    }
}
