//! The generation model `textgen` (issue 60): the component served by `runtime-host`, which
//! runs SmolLM2-135M-Instruct behind `fermyon:spin/llm` `infer`, over real HTTP. Greedy
//! decoding gives llama.cpp's own reply and token counts for the reference chats
//! (tests/data/llm-greedy.json); bad parameters and prompts past the context are 400s naming
//! what to change; a full queue is 503 with `Retry-After` (`busy`); it says plainly what it is
//! good for and passes its own examples (`describe`); `up` deploys it (`deploy`).

mod busy;
mod deploy;
mod describe;
mod hang_up;

use e2e_tests::{Client, Host, HostBuilder, ai_models_dir, component, temp_dir, workspace_root};
use serde_json::{Value, json};
use std::path::Path;

/// The language model's name, as the component asks the host for it.
const MODEL: &str = "smollm2-135m-instruct";

/// `runtime-host serve textgen` with the language model granted, and `extra` flags.
pub fn serve(data: &Path, extra: &[&str]) -> Host {
    let mut b = HostBuilder::new(component("textgen"), data)
        .shared_compile_cache()
        .ai_model(MODEL, &ai_models_dir());
    for a in extra {
        b = b.arg(*a);
    }
    b.start()
}

/// One reference chat of llama.cpp's (llama-cpp-python on the same GGUF file).
struct Case {
    text: String,
    prompt_tokens: usize,
    greedy_tokens: usize,
    greedy_text: String,
}

/// The reference chats that are a single user message, in the file's order.
fn single_message_cases() -> Vec<Case> {
    let file = workspace_root().join("tests/data/llm-greedy.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            let m = c["messages"].as_array().unwrap();
            m.len() == 1 && m[0]["role"] == "user"
        })
        .map(|c| Case {
            text: c["messages"][0]["content"].as_str().unwrap().to_owned(),
            prompt_tokens: c["prompt_tokens"].as_array().unwrap().len(),
            greedy_tokens: c["greedy_tokens"].as_array().unwrap().len(),
            greedy_text: c["greedy_text"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// The parameters of the reference: greedy, no repeat penalty, 32 tokens at most.
fn greedy(data: Value) -> Value {
    let mut data = data;
    data["temperature"] = json!(0);
    data["repeat_penalty"] = json!(1.0);
    data["max_tokens"] = json!(32);
    json!({"input_type": "text", "data": data})
}

#[tokio::test(flavor = "multi_thread")]
async fn greedy_replies_are_llama_cpps_with_exact_token_counts() {
    let data = temp_dir();
    let host = serve(data.path(), &[]);
    let c = Client::new();
    let cases = single_message_cases();
    let first = &cases[0];
    let r = c
        .post_json(
            &host.url("/predict"),
            &greedy(json!({"text": first.text})),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(v["success"], true, "{v}");
    let results = &v["results"];
    assert_eq!(results["text"], first.greedy_text.as_str(), "{v}");
    assert_eq!(results["generated_tokens"], first.greedy_tokens, "{v}");
    assert_eq!(results["prompt_tokens"], first.prompt_tokens, "{v}");
    assert_eq!(results["model"], MODEL);
    let reason = if first.greedy_tokens < 32 {
        "stop"
    } else {
        "length"
    };
    assert_eq!(results["finish_reason"], reason, "{v}");

    // Cut at 5 tokens: exactly 5 made, the start of the same reply.
    let mut short = greedy(json!({"text": first.text}));
    short["data"]["max_tokens"] = json!(5);
    let v = c
        .post_json(&host.url("/predict"), &short, None)
        .await
        .value();
    assert_eq!(v["results"]["generated_tokens"], 5, "{v}");
    assert_eq!(v["results"]["finish_reason"], "length", "{v}");
    let text = v["results"]["text"].as_str().unwrap();
    assert!(
        !text.is_empty() && first.greedy_text.starts_with(text),
        "{text:?} begins {:?}",
        first.greedy_text
    );

    // A batch: each message answered alone, in order, with its own counts.
    let texts: Vec<&str> = cases[..2].iter().map(|c| c.text.as_str()).collect();
    let r = c
        .post_json(
            &host.url("/predict"),
            &greedy(json!({"texts": texts})),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(
        (
            v["results"]["count"].clone(),
            v["results"]["failed"].clone()
        ),
        (json!(2), json!(0)),
        "{v}"
    );
    for (item, case) in v["results"]["items"].as_array().unwrap().iter().zip(&cases) {
        assert_eq!(item["results"]["text"], case.greedy_text.as_str(), "{item}");
        assert_eq!(item["results"]["generated_tokens"], case.greedy_tokens);
        assert_eq!(item["results"]["prompt_tokens"], case.prompt_tokens);
    }
}

/// A system message of the request's own replaces the default one: the prompt is longer by
/// what it adds, and the reply follows it.
#[tokio::test(flavor = "multi_thread")]
async fn a_system_message_is_the_requests_own() {
    let data = temp_dir();
    let host = serve(data.path(), &[]);
    let c = Client::new();
    let ask = |system: Option<&str>| {
        let mut data = json!({"text": "Hello! Who are you?", "max_tokens": 8});
        if let Some(s) = system {
            data["system"] = json!(s);
        }
        json!({"input_type": "text", "data": data})
    };
    let plain = c
        .post_json(&host.url("/predict"), &ask(None), None)
        .await
        .value();
    let own = c
        .post_json(&host.url("/predict"), &ask(Some("You are a pirate.")), None)
        .await
        .value();
    let tokens = |v: &Value| v["results"]["prompt_tokens"].as_u64().unwrap();
    // The default system line is 17 tokens longer than "You are a pirate.".
    assert!(tokens(&own) < tokens(&plain), "{own} {plain}");
    assert_ne!(own["results"]["text"], plain["results"]["text"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_parameters_and_prompts_past_the_context_are_400s_saying_what_to_change() {
    let data = temp_dir();
    let host = serve(data.path(), &[]);
    let c = Client::new();
    let predict = |data: Value| json!({"input_type": "text", "data": data});
    for (data, field) in [
        (json!({"text": "Hi", "max_tokens": 0}), "data.max_tokens"),
        (json!({"text": "Hi", "max_tokens": 1025}), "data.max_tokens"),
        (json!({"text": "Hi", "max_tokens": 2.5}), "data.max_tokens"),
        (json!({"text": "Hi", "temperature": -1}), "data.temperature"),
        (json!({"text": "Hi", "top_k": -3}), "data.top_k"),
        (json!({"text": "Hi", "top_p": 0}), "data.top_p"),
        (json!({"text": "Hi", "top_p": 1.01}), "data.top_p"),
        (
            json!({"text": "Hi", "repeat_penalty": 0}),
            "data.repeat_penalty",
        ),
        (
            json!({"text": "Hi", "repeat_penalty_last_n": 5000}),
            "data.repeat_penalty_last_n",
        ),
        (json!({"text": "Hi", "stream": true}), "data.stream"),
        (json!({"text": " \n "}), "data.text"),
        (json!({"text": "Hi<|im_end|>"}), "data.text"),
        (json!({"text": "Hi", "system": 7}), "data.system"),
        (json!({"prompt": "Hi"}), "data.prompt"),
    ] {
        let r = c
            .post_json(&host.url("/predict"), &predict(data.clone()), None)
            .await;
        let body = r.assert_error(400, "invalid_field");
        assert!(body.error.contains(field), "{data}: {}", body.error);
    }

    // Past the context: the host counts the tokens and names the context.
    let long = "word ".repeat(2100);
    let r = c
        .post_json(
            &host.url("/predict"),
            &predict(json!({"text": long, "max_tokens": 8})),
            None,
        )
        .await;
    let body = r.assert_error(400, "input_too_long");
    assert!(
        body.error.contains("context of 2048 tokens"),
        "{}",
        body.error
    );
    // A prompt that fits, with too many tokens asked for: the same.
    let r = c
        .post_json(
            &host.url("/predict"),
            &predict(json!({"text": "word ".repeat(1100), "max_tokens": 1024})),
            None,
        )
        .await;
    let body = r.assert_error(400, "input_too_long");
    assert!(body.error.contains("2048"), "{}", body.error);

    // In a batch a bad message fails alone; a bad shared parameter fails each item.
    let r = c
        .post_json(
            &host.url("/predict"),
            &predict(json!({"texts": ["Say hi.", "", long], "max_tokens": 4})),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let items = r.value()["results"]["items"].clone();
    assert_eq!(items[0]["success"], true, "{items}");
    assert_eq!(items[0]["results"]["generated_tokens"], 4, "{items}");
    assert!(
        items[1]["error_message"]
            .as_str()
            .unwrap()
            .contains("data.text")
    );
    assert!(
        items[2]["error_message"]
            .as_str()
            .unwrap()
            .contains("context")
    );
    let r = c
        .post_json(
            &host.url("/predict"),
            &predict(json!({"texts": ["a", "b"], "top_p": 5})),
            None,
        )
        .await;
    assert_eq!(r.value()["results"]["failed"], 2, "{}", r.text());
    // More messages than a batch takes: the batch itself is refused.
    let r = c
        .post_json(
            &host.url("/predict"),
            &predict(json!({"texts": vec!["hi"; 9]})),
            None,
        )
        .await;
    r.assert_error(400, "invalid_field");
}
