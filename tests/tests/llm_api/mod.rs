//! `runtime-host up`'s language-model API on the app port (issue 60): OpenAI's own Python
//! client calls it as an OpenAI user's code does ([`openai_client`]), and the real `spin up`
//! sends its components' `infer` and `generate-embeddings` calls to it through Spin's
//! `remote_http` LLM runtime configuration, with either of its protocols ([`spin`]). The errors, the token, the body cap,
//! the full queue and a client hanging up are tested at the Rust level beside the code
//! (runtime-host/src/services/llm_api/tests.rs), on a real listener with the real models.

mod openai_client;
mod spin;

use e2e_tests::stack::Stack;
use e2e_tests::{Client, component, temp_dir};
use serde_json::{Value, json};

pub const LM: &str = edge_api::language_model::MODEL;
pub const EMBEDDING: &str = edge_api::embedding::MODEL;

/// `up` serving the minilm and textgen model components beside the API (minilm's
/// `/predict` is what the API's embeddings are held to; textgen is compared with itself
/// under Spin), with the API's token.
pub struct LlmStack {
    pub stack: Stack,
    pub token: String,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

impl LlmStack {
    pub fn up() -> Self {
        let (data, models) = (temp_dir(), temp_dir());
        // A copy: `up` refuses a model file that is a link.
        for model in ["minilm", "textgen"] {
            let file = models.path().join(format!("{model}.wasm"));
            std::fs::copy(component(model), file).unwrap();
        }
        let dir = models.path().display().to_string();
        let stack = Stack::up_at(data.path(), &["--models", &dir], 4);
        let token = std::fs::read_to_string(data.path().join("llm_api_token"))
            .expect("up writes the API's token into its data directory");
        Self {
            stack,
            token: token.trim().to_owned(),
            _dirs: (data, models),
        }
    }

    /// `POST path` on the app port with the token, as Spin's client sends it (lowercase
    /// `bearer`, no content type); the answer's JSON, asserting a 200.
    pub async fn post(&self, path: &str, body: &Value) -> Value {
        let auth = format!("bearer {}", self.token);
        let r = Client::new()
            .send(
                hyper::Method::POST,
                &self.stack.app(path),
                Some(body.to_string().into_bytes()),
                &[("authorization", auth.as_str())],
            )
            .await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        r.value()
    }

    /// Runtime-host's own `/infer` at temperature 0: text, prompt tokens, generated tokens.
    pub async fn infer(&self, prompt: &str, max_tokens: u32) -> (String, u64, u64) {
        let body = json!({
            "model": LM,
            "prompt": prompt,
            "options": {
                "maxTokens": max_tokens,
                "repeatPenalty": 1.0,
                "repeatPenaltyLastNTokenCount": 64,
                "temperature": 0.0,
                "topK": 40,
                "topP": 0.9,
            },
        });
        let v = self.post("/infer", &body).await;
        let usage = &v["usage"];
        (
            v["text"].as_str().unwrap().to_owned(),
            usage["promptTokenCount"].as_u64().unwrap(),
            usage["generatedTokenCount"].as_u64().unwrap(),
        )
    }

    /// Runtime-host's own `/embed` (Spin's protocol).
    pub async fn embed(&self, texts: &[&str]) -> (Vec<Vec<f64>>, u64) {
        let v = self
            .post("/embed", &json!({"model": EMBEDDING, "input": texts}))
            .await;
        (
            vectors(&v["embeddings"]),
            v["usage"]["promptTokenCount"].as_u64().unwrap(),
        )
    }
}

pub fn vectors(v: &Value) -> Vec<Vec<f64>> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list of vectors: {v}"))
        .iter()
        .map(|e| {
            e.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

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
