//! What textgen says about itself: a small assistant, said plainly in `/info` and
//! `/acceptable_ranges` (with the context and the limits as numbers), the SmolLM2 paper
//! cited, and test examples that `/predict` answers; `runtime-host check` passes it.

use super::{MODEL, serve};
use e2e_tests::{Client, temp_dir};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn it_says_what_it_is_good_for_and_its_examples_run() {
    let data = temp_dir();
    let host = serve(data.path(), &[]);
    let c = Client::new();
    let health = c.get(&host.url("/health")).await;
    assert_eq!(health.status, 200, "{}", health.text());

    let info = c.get(&host.url("/info")).await.value();
    let description = info["description"].as_str().unwrap();
    for said in [
        "small assistant",
        "short, simple replies",
        "gets them wrong",
        "capital of France",
        "Check anything it states",
        "2048 tokens",
        MODEL,
    ] {
        assert!(
            description.contains(said),
            "/info says {said:?}: {description}"
        );
    }
    assert!(
        info["license"].as_str().unwrap().contains("Apache-2.0"),
        "{info}"
    );
    assert_eq!(info["citation"], "https://arxiv.org/abs/2502.02737");

    let ranges = c.get(&host.url("/acceptable_ranges")).await.value();
    let scope = ranges["chemical_scope"].to_string();
    for said in [
        "short, simple replies",
        "not good for facts",
        "capital of France",
        "a context of 2048 tokens in all",
        "up to 1024 generated tokens",
        "temperature (a number at least 0, default 0",
    ] {
        assert!(
            scope.contains(said),
            "/acceptable_ranges says {said:?}: {scope}"
        );
    }
    assert!(
        ranges["description"]
            .as_str()
            .unwrap()
            .contains("2 trillion tokens")
    );

    let citation = c.get(&host.url("/citation")).await.value();
    let paper = citation["paper_citation"].as_str().unwrap();
    assert!(
        paper.contains("Allal") && paper.contains("2502.02737") && paper.contains("2025"),
        "{paper}"
    );
    assert!(
        citation["software_bibtex"]
            .as_str()
            .unwrap()
            .starts_with("@misc{")
    );

    let caps = c.get(&host.url("/capabilities")).await.value();
    let capability = &caps["capabilities"][0];
    assert_eq!(capability["name"], "text-generation", "{caps}");
    assert_eq!(capability["input_types"], json!(["text"]));
    for output in ["text", "prompt_tokens", "generated_tokens", "finish_reason"] {
        assert!(capability["output_schema"].get(output).is_some(), "{caps}");
    }

    // Each example through /predict, as a client fills it into the request format: a
    // reply within the format's max_tokens.
    let examples = c.get(&host.url("/test_examples")).await.value();
    let format = examples["usage_instructions"]["body_format"].clone();
    let max = format["data"]["max_tokens"].as_u64().unwrap();
    let examples = examples["examples"].as_array().unwrap();
    assert!(examples.len() >= 3, "{examples:?}");
    for example in examples {
        let mut request = format.clone();
        request["data"]["text"] = example["text"].clone();
        let r = c.post_json(&host.url("/predict"), &request, None).await;
        assert_eq!(r.status, 200, "{}: {}", example["name"], r.text());
        let v = r.value();
        assert_eq!(v["success"], true, "{v}");
        assert!(
            !v["results"]["text"].as_str().unwrap().trim().is_empty(),
            "{v}"
        );
        let made = v["results"]["generated_tokens"].as_u64().unwrap();
        assert!((1..=max).contains(&made), "{v}");
    }
}

/// The conformance checkers judge it as they judge every model: v1.2 (the examples,
/// malformed requests, the metadata against the answers, a batch of the examples against
/// each alone) and the Open Inference Protocol (JSON and binary tensors giving the same
/// reply: greedy by default).
#[tokio::test(flavor = "multi_thread")]
async fn runtime_host_check_passes_it_on_both_protocols() {
    let data = temp_dir();
    let host = serve(data.path(), &[]);
    e2e_tests::assert_check_passes(host.base_url()).await;
    let out = std::process::Command::new(e2e_tests::host_binary())
        .args(["check", "--oip", &host.base_url()])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("PASS  OIP.textgen.infer.binary"),
        "{report}"
    );
}
