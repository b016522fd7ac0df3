//! OpenAI's Python client (tests/python/openai_client.py, from target/test-python-openai)
//! against `up`'s app port: a chat completion, the same one streamed, embeddings and the
//! model list, with the client's default arguments.

use super::{EMBEDDING, LM, LlmStack, assert_same_vectors};
use e2e_tests::tools::{Tool, require_or_skip};
use e2e_tests::{Client, workspace_root};
use serde_json::Value;
use std::path::PathBuf;

const QUESTION: &str = "What is the capital of France?";
const MAX_TOKENS: u32 = 24;

/// The client's Python, or `None` where `cargo xtask test` could not install it (see
/// [`require_or_skip`]).
fn openai_python(test: &str) -> Option<PathBuf> {
    let venv = e2e_tests::pinned_python_env(
        "target/test-python-openai",
        "tests/python/openai-requirements.txt",
        "bin/python",
    );
    require_or_skip(Tool::OpenaiPython, test, venv).map(|venv| venv.join("bin/python"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a vector: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_client_chats_streams_embeds_and_lists_models() {
    let Some(python) = openai_python("the OpenAI client") else {
        return;
    };
    let llm = LlmStack::up();
    let script = workspace_root().join("tests/python/openai_client.py");
    let out = tokio::process::Command::new(&python)
        .arg(&script)
        .args([
            &llm.stack.app(""),
            LM,
            EMBEDDING,
            QUESTION,
            &MAX_TOKENS.to_string(),
        ])
        .env("OPENAI_API_KEY", &llm.token)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "openai_client.py failed:\n{stderr}");
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    println!("{}", serde_json::to_string_pretty(&got["whole"]).unwrap());

    // The whole answer.
    let whole = &got["whole"];
    let text = whole["text"].as_str().unwrap();
    assert!(!text.trim().is_empty(), "{got}");
    assert_eq!(whole["role"], "assistant");
    assert_eq!(whole["model"], LM);
    let usage = &whole["usage"];
    let (prompt, generated) = (
        usage["prompt_tokens"].as_u64().unwrap(),
        usage["completion_tokens"].as_u64().unwrap(),
    );
    assert!(
        prompt > 10 && (1..=MAX_TOKENS as u64).contains(&generated),
        "{usage}"
    );
    assert_eq!(usage["total_tokens"].as_u64(), Some(prompt + generated));
    let finish = whole["finish_reason"].as_str().unwrap();
    assert_eq!(
        finish == "length",
        generated == MAX_TOKENS as u64,
        "{whole}"
    );

    // Streamed: token by token, the same text at temperature 0, the same usage at the end.
    let stream = &got["stream"];
    let pieces: Vec<&str> = stream["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(pieces.len() >= 3, "several chunks: {pieces:?}");
    assert_eq!(pieces.concat(), text);
    assert_eq!(stream["finishes"], serde_json::json!([finish]));
    assert_eq!(&stream["usage"], usage);

    // The model's own chat template is ChatML with SmolLM2's default system line: the same
    // prompt written by hand and sent raw to `/infer` gives the same text and token counts.
    let by_hand = edge_api::language_model::chat_prompt([("user", QUESTION)]);
    let (raw, raw_prompt, raw_generated) = llm.infer(&by_hand, MAX_TOKENS).await;
    assert_eq!(
        (raw.as_str(), raw_prompt, raw_generated),
        (text, prompt, generated)
    );

    // Embeddings: the client's default (base64) and plain floats agree, and both are the
    // minilm model component's vectors and those of Spin's `/embed`.
    let emb = &got["embeddings"];
    let default: Vec<Vec<f64>> = emb["default"]
        .as_array()
        .unwrap()
        .iter()
        .map(floats)
        .collect();
    assert_eq!(default.len(), 2);
    assert_same_vectors(&default[..1], &[floats(&emb["float"])], "base64 and float");
    let texts = [
        "The cat sat on the mat.",
        "Edge computing runs code near its users.",
    ];
    let c = Client::new();
    let base = llm.stack.app("/models/minilm");
    let mut served = Vec::new();
    for t in texts {
        served.push(crate::models::embeddings::embed_one(&c, &base, t).await);
    }
    assert_same_vectors(&default, &served, "the API and the minilm model");
    let (spin_protocol, tokens) = llm.embed(&texts).await;
    assert_same_vectors(&default, &spin_protocol, "the API and /embed");
    assert_eq!(emb["prompt_tokens"].as_u64(), Some(tokens));

    let mut models = vec![LM, EMBEDDING];
    models.sort();
    assert_eq!(got["models"], serde_json::json!(models));
    assert_eq!(got["unknown_model"]["status"], 404, "{got}");
}
