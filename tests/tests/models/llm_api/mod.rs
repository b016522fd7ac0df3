//! `runtime-host up`'s language-model API on the app port (issue 60): OpenAI's own Python
//! client calls it as an OpenAI user's code does ([`openai_client`]), and the real `spin up`
//! sends its components' `infer` and `generate-embeddings` calls to it through Spin's
//! `remote_http` LLM runtime configuration, with either of its protocols ([`spin`]). The errors, the token, the body cap,
//! the full queue and a client hanging up are tested at the Rust level beside the code
//! (runtime-host/src/services/llm_api/tests.rs), on a real listener with the real models.

mod openai_client;
mod spin;

pub use e2e_tests::llm::{EMBEDDING, LM, LlmStack, vectors};

/// Asserts `a` and `b` are the same vectors (to float32's precision through JSON).
pub fn assert_same_vectors(a: &[Vec<f64>], b: &[Vec<f64>], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.len(), y.len(), "{what}");
        let worst = x
            .iter()
            .zip(y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-6, "{what}: differ by {worst}");
    }
}
