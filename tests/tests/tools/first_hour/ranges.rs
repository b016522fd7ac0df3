//! Right flags on every answer (issue 46 §2): each model's own test examples are inside its
//! own applicability domain and reliable range, answered without a warning, or the model
//! says why it has no range. molprop's examples are checked by its own test
//! (`molprop::test_examples_predict_their_documented_values`); here every ONNX model
//! directory of the repository (`models/*/model.toml`) and the embedding model.

use e2e_tests::{Client, HostBuilder, component, temp_dir, workspace_root};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn every_onnx_models_examples_are_inside_its_domain_and_reliable_range() {
    let mut dirs: Vec<_> = std::fs::read_dir(workspace_root().join("models"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("model.toml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 2, "the repository's models: {dirs:?}");
    let c = Client::new();
    for dir in dirs {
        let data = temp_dir();
        let h = HostBuilder::new(component("onnx_model"), data.path())
            .mount(&dir, "/model")
            .shared_compile_cache()
            .start();
        let examples = c.get(&h.url("/test_examples")).await.value();
        let ranges = c.get(&h.url("/acceptable_ranges")).await.value();
        let body_format = &examples["usage_instructions"]["body_format"];
        let list = examples["examples"].as_array().expect("examples");
        assert!(!list.is_empty(), "{}: no examples", dir.display());
        for example in list {
            let name = format!("{} {}", dir.display(), example["name"]);
            let request = e2e_tests::request_for(example, body_format);
            let r = c.post_json(&h.url("/predict"), &request, None).await;
            assert_eq!(r.status, 200, "{name}: {}", r.text());
            let results = &r.value()["results"];
            assert_eq!(results["in_domain"], true, "{name}: {results}");
            assert!(
                results.get("warning").is_none_or(Value::is_null),
                "{name}: {results}"
            );
            // A numeric prediction (a regression) has a reliable range, and lies within it.
            let property = results["property_type"].as_str().unwrap_or_default();
            if let Some(p) = results["prediction"].as_f64() {
                let range = &ranges["property_ranges"][property]["reliable_range"];
                let (Some(min), Some(max)) = (range["min"].as_f64(), range["max"].as_f64()) else {
                    panic!("{name}: no reliable range for {property:?} in {ranges}");
                };
                assert!((min..=max).contains(&p), "{name}: {p} outside {min}..{max}");
            }
        }
    }
}

/// The embedding model has no property with a range, and says so.
#[tokio::test(flavor = "multi_thread")]
async fn the_embedding_model_says_why_it_has_no_range() {
    let data = temp_dir();
    let h = HostBuilder::new(component("minilm"), data.path())
        .ai_model("all-minilm-l6-v2", &e2e_tests::ai_models_dir())
        .shared_compile_cache()
        .start();
    let ranges = Client::new()
        .get(&h.url("/acceptable_ranges"))
        .await
        .value();
    assert_eq!(ranges["property_ranges"], json!({}), "{ranges}");
    let why = ranges["description"].as_str().unwrap_or_default();
    assert!(
        why.contains("not a numeric property with a training range"),
        "{why}"
    );
}
