//! `runtime-host up` as the language-model server that a Spin app's LLM calls go to. Spin's
//! own engine has no SmolLM2 (it says "no model directory found"), so the project's app runs
//! its `textgen` model and the chat's reply under `spin up` only with a runtime configuration
//! whose `[llm_compute]` is `remote_http` pointed at runtime-host ([`LlmStack::spin_config`]).
//! Shared by the tests of that API (tests/tests/models/llm_api) and those that run the whole app
//! under Spin (tests/tests/spin/app.rs).

use crate::stack::Stack;
use crate::{Client, component, temp_dir};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The language model runtime-host serves.
pub const LM: &str = edge_api::language_model::MODEL;
/// The embedding model runtime-host serves.
pub const EMBEDDING: &str = edge_api::embedding::MODEL;

/// `up` serving the minilm and textgen model components beside the LLM API (minilm's
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

    /// Spin's runtime configuration sending its LLM calls to this stack's app port with
    /// Spin's `api_type` (`"default"`: Spin's own protocol, or `"open_ai"`), written as
    /// `runtime-config.toml` in `dir`; for `--runtime-config-file`.
    pub fn spin_config(&self, dir: &Path, api_type: &str) -> PathBuf {
        let file = dir.join("runtime-config.toml");
        let config = format!(
            "[llm_compute]\ntype = \"remote_http\"\nurl = {:?}\nauth_token = {:?}\n\
             api_type = {api_type:?}\n",
            self.stack.app(""),
            self.token
        );
        std::fs::write(&file, config).unwrap();
        file
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

/// A JSON list of vectors as numbers.
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
