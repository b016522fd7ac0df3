//! The real Spin with its LLM calls sent to `runtime-host up` (Spin 4.0.2's `[llm_compute]
//! type = "remote_http"`, its default protocol): the testbed component's `infer` and
//! `generate-embeddings` under `spin up` give what runtime-host's own `/infer` and `/embed`
//! give for the same prompt and texts, and the project's app under `spin up` (the `textgen`
//! model, the chat's reply) answers with the words it answers under runtime-host, so an app
//! written for Spin runs this host's models.

use super::{EMBEDDING, LM, LlmStack, assert_same_vectors, vectors};
use e2e_tests::spin::{SpinApp, spin_or_skip};
use e2e_tests::{Client, component, temp_dir};
use serde_json::json;

const PROMPT: &str = "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n";
const MAX_TOKENS: u32 = 16;

#[tokio::test(flavor = "multi_thread")]
async fn spin_sends_its_llm_calls_to_runtime_host() {
    let Some(spin) = spin_or_skip("Spin's remote LLM") else {
        return;
    };
    let llm = LlmStack::up();
    let work = temp_dir();
    let app = testbed_under_spin(&spin, work.path(), &llm, "default");
    let c = Client::new();

    let options = json!({
        "max_tokens": MAX_TOKENS,
        "repeat_penalty": 1.0,
        "repeat_penalty_last_n": 64,
        "temperature": 0.0,
        "top_k": 40,
        "top_p": 0.9,
    });
    let url = app.url(&format!("/llm/infer?model={LM}"));
    let r = c
        .post_json(&url, &json!({"prompt": PROMPT, "options": options}), None)
        .await;
    assert_eq!(r.status, 200, "{}\n{}", r.text(), app.log());
    let under_spin = r.value();
    assert!(
        under_spin["text"].is_string(),
        "{under_spin}\n{}",
        app.log()
    );
    let (text, prompt, generated) = llm.infer(PROMPT, MAX_TOKENS).await;
    assert!(!text.trim().is_empty());
    assert_eq!(under_spin["text"], text.as_str());
    assert_eq!(under_spin["prompt_tokens"], prompt);
    assert_eq!(under_spin["generated_tokens"], generated);

    embeddings_agree(&app, &llm).await;
}

/// Spin's `api_type = "open_ai"` reaches `/v1/chat/completions` and `/v1/embeddings` and
/// reads their answers. Spin then sends the prompt as one user message and drops the
/// temperature, so the text is sampled: its counts are checked, not its words.
#[tokio::test(flavor = "multi_thread")]
async fn spins_open_ai_client_reads_the_openai_endpoints() {
    let Some(spin) = spin_or_skip("Spin's remote LLM, open_ai") else {
        return;
    };
    let llm = LlmStack::up();
    let work = temp_dir();
    let app = testbed_under_spin(&spin, work.path(), &llm, "open_ai");
    let question = "Name three colours.";
    let body = json!({"prompt": question, "options": {"max_tokens": 8}});
    let url = app.url(&format!("/llm/infer?model={LM}"));
    let r = Client::new().post_json(&url, &body, None).await;
    assert_eq!(r.status, 200, "{}\n{}", r.text(), app.log());
    let v = r.value();
    assert!(v["text"].is_string(), "{v}\n{}", app.log());
    let generated = v["generated_tokens"].as_u64().unwrap();
    assert!((1..=8).contains(&generated), "{v}");
    // The prompt Spin's client made: the question as the chat's one user message.
    let chat = json!({"model": LM, "max_tokens": 1,
        "messages": [{"role": "user", "content": question}]});
    let direct = llm.post("/v1/chat/completions", &chat).await;
    assert_eq!(v["prompt_tokens"], direct["usage"]["prompt_tokens"], "{v}");
    embeddings_agree(&app, &llm).await;
}

/// The testbed component under `spin up`, granted both models, its LLM calls sent to
/// `llm` with Spin's `api_type`.
fn testbed_under_spin(
    spin: &std::path::Path,
    work: &std::path::Path,
    llm: &LlmStack,
    api_type: &str,
) -> SpinApp {
    let runtime_config = llm.spin_config(work, api_type);
    let manifest = work.join("spin.toml");
    std::fs::write(
        &manifest,
        format!(
            "spin_manifest_version = 2\n\n[application]\nname = \"remote-llm\"\n\
             version = \"1.0.0\"\n\n[[trigger.http]]\nroute = \"/...\"\ncomponent = \"testbed\"\n\n\
             [component.testbed]\nsource = {}\nai_models = [{LM:?}, {EMBEDDING:?}]\n",
            serde_json::to_string(&component("testbed").display().to_string()).unwrap(),
        ),
    )
    .unwrap();
    SpinApp::up_manifest_with(spin, &manifest, "/ok", &runtime_config)
}

/// The testbed's `generate-embeddings` under Spin gives runtime-host's own `/embed` vectors.
async fn embeddings_agree(app: &SpinApp, llm: &LlmStack) {
    let texts = ["a red apple", "a sentence about the sea"];
    let url = app.url(&format!("/llm/embed?model={EMBEDDING}"));
    let r = Client::new().post_json(&url, &json!(texts), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    let (direct, tokens) = llm.embed(&texts).await;
    assert_same_vectors(&vectors(&v["embeddings"]), &direct, "Spin and /embed");
    assert_eq!(v["tokens"], tokens, "{v}");
}

/// The project's own app (spin.toml) under `spin up`, its LLM calls sent to `runtime-host
/// up`: the generation model `textgen` and the chat's reply give, under Spin, the words they
/// give under runtime-host for the same request.
#[tokio::test(flavor = "multi_thread")]
async fn the_app_under_spin_generates_and_replies_with_runtime_hosts_model() {
    if spin_or_skip("the app under Spin on runtime-host's model").is_none() {
        return;
    }
    let llm = LlmStack::up();
    let work = temp_dir();
    let runtime_config = llm.spin_config(work.path(), "default");
    const TOKEN: &str = "remote-llm-chat-token";
    let app = SpinApp::up_with("the app", TOKEN, Some(&runtime_config), &[])
        .expect("spin was found above");
    let c = Client::new();
    let hosts = [
        (app.url(""), TOKEN.to_owned()),
        (llm.stack.app(""), llm.stack.admin_token.clone()),
    ];

    let predict = json!({"input_type": "text", "data": {
        "text": "Name three colours.",
        "max_tokens": MAX_TOKENS, "temperature": 0, "repeat_penalty": 1.0,
    }});
    let mut answers = Vec::new();
    for (base, _) in &hosts {
        let r = c
            .post_json(&format!("{base}/models/textgen/predict"), &predict, None)
            .await;
        assert_eq!(r.status, 200, "{base}: {}\n{}", r.text(), app.log());
        let results = r.value()["results"].clone();
        assert!(
            !results["text"].as_str().unwrap().trim().is_empty(),
            "{results}"
        );
        answers.push(results);
    }
    assert_eq!(
        answers[0], answers[1],
        "textgen under Spin and runtime-host"
    );

    let dialog = json!({"chatName": "remote", "messages": [
        {"role": "user", "content": "Name a colour of the sky."}
    ]});
    let greedy = json!({"max_tokens": MAX_TOKENS, "temperature": 0});
    let mut replies = Vec::new();
    for (base, token) in &hosts {
        let r = c
            .post_json(&format!("{base}/api/chats"), &dialog, Some(token))
            .await;
        assert_eq!(r.status, 201, "{base}: {}", r.text());
        let id = r.value()["id"].as_str().unwrap().to_owned();
        let url = format!("{base}/api/dialog/reply?id={id}");
        let r = c.post_json(&url, &greedy, Some(token)).await;
        assert_eq!(r.status, 201, "{base}: {}\n{}", r.text(), app.log());
        let v = r.value();
        replies.push((v["message"]["content"].clone(), v["usage"].clone()));
    }
    assert!(
        !replies[0].0.as_str().unwrap().trim().is_empty(),
        "{replies:?}"
    );
    assert_eq!(
        replies[0], replies[1],
        "the chat's reply under Spin and runtime-host"
    );
}
