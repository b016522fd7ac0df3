//! The embedding model: the `minilm` component served by `runtime-host`, which runs
//! all-MiniLM-L6-v2 behind `fermyon:spin/llm`. Its vectors match sentence-transformers' own
//! for every sentence of the committed reference set, alone or batched with texts of very
//! different lengths; its input rules give 400s naming the field; the host's side of the
//! interface refuses what Spin refuses; missing weights say where they go and how to get
//! them; a long batch holds up no other request, embeddings included, and stops at the
//! deadline (`long_batches`).

mod input_rules;
mod long_batches;

use e2e_tests::{Client, Host, HostBuilder, ai_models_dir, component, temp_dir, workspace_root};
use serde_json::{Value, json};
use std::path::Path;

const MODEL: &str = "all-minilm-l6-v2";

/// `runtime-host serve minilm` with the model granted, its files read from `models`.
pub fn serve_with(models: &Path, data: &Path, extra: &[&str]) -> Host {
    let mut b = HostBuilder::new(component("minilm"), data)
        .shared_compile_cache()
        .ai_model(MODEL, models);
    for a in extra {
        b = b.arg(*a);
    }
    b.start()
}

pub fn serve(data: &Path) -> Host {
    serve_with(&ai_models_dir(), data, &[])
}

/// sentence-transformers' vectors for the committed sentences (tests/data/minilm).
fn reference() -> Vec<(String, Vec<f64>)> {
    let file = workspace_root().join("tests/data/minilm/reference.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["embeddings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["text"].as_str().unwrap().to_owned(), floats(&e["vector"])))
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
}

/// `POST /predict` of the model at `base` (a host's base URL, or `/models/minilm` of an app).
async fn predict(c: &Client, base: &str, data: Value) -> e2e_tests::Reply {
    c.post_json(
        &format!("{base}/predict"),
        &json!({"input_type": "text", "data": data}),
        None,
    )
    .await
}

/// The served vector of one text (asserting a 200 with 384 numbers of unit length).
pub async fn embed_one(c: &Client, base: &str, text: &str) -> Vec<f64> {
    let r = predict(c, base, json!({"text": text})).await;
    assert_eq!(r.status, 200, "{text}: {}", r.text());
    let v = r.value();
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["results"]["dimensions"], 384);
    assert_eq!(v["results"]["model"], MODEL);
    let vector = floats(&v["results"]["embedding"]);
    assert_eq!(vector.len(), 384);
    assert!(
        (dot(&vector, &vector) - 1.0).abs() < 1e-4,
        "not unit length"
    );
    vector
}

async fn embed_many(c: &Client, base: &str, texts: &[String]) -> Vec<Vec<f64>> {
    let r = predict(c, base, json!({"texts": texts})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    assert_eq!(v["results"]["failed"], 0, "{v}");
    let vectors: Vec<Vec<f64>> = v["results"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| floats(&item["results"]["embedding"]))
        .collect();
    assert_eq!(vectors.len(), texts.len());
    vectors
}

/// `word ` `n` times: "cat" is one word piece, so the text is `n` + 2 tokens.
fn words(n: usize) -> String {
    "cat ".repeat(n)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_reference_sentence_matches_sentence_transformers_alone_and_in_one_batch() {
    let data = temp_dir();
    let host = serve(data.path());
    matches_sentence_transformers(&Client::new(), &host.base_url()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_of_very_different_lengths_gives_each_text_its_vector_alone() {
    let data = temp_dir();
    let host = serve(data.path());
    mixed_lengths_embed_as_alone(&Client::new(), &host.base_url()).await;
}

/// The same two scenarios under Spin's own engine (issue 47 §1): the app's minilm, through
/// Spin's `fermyon:spin/llm`, agrees with sentence-transformers alone and in mixed batches.
#[tokio::test(flavor = "multi_thread")]
async fn under_spin_the_embeddings_match_sentence_transformers_alone_and_batched() {
    let Some(app) = e2e_tests::spin::SpinApp::up("embeddings under Spin", "t") else {
        return;
    };
    let c = Client::new();
    let base = app.url("/models/minilm");
    matches_sentence_transformers(&c, &base).await;
    mixed_lengths_embed_as_alone(&c, &base).await;
}

/// Every reference sentence, alone and all in one batch, at cosine >= 0.9999 to
/// sentence-transformers' vector.
async fn matches_sentence_transformers(c: &Client, base: &str) {
    let reference = reference();
    assert!(reference.len() >= 50);

    let mut worst = 1.0f64;
    for (text, want) in &reference {
        let got = embed_one(c, base, text).await;
        let similarity = cosine(&got, want);
        assert!(similarity >= 0.9999, "{text}: cosine {similarity}");
        worst = worst.min(similarity);
    }
    // All of them in one request: short and long texts share padded passes, and the
    // pooling must count each text's own tokens only.
    let texts: Vec<String> = reference.iter().map(|(t, _)| t.clone()).collect();
    let batch = embed_many(c, base, &texts).await;
    for ((text, want), got) in reference.iter().zip(&batch) {
        let similarity = cosine(got, want);
        assert!(
            similarity >= 0.9999,
            "{text} (batched): cosine {similarity}"
        );
        worst = worst.min(similarity);
    }
    println!(
        "{base}: {} sentences, alone and batched: lowest cosine similarity to sentence-transformers {worst:.7}",
        reference.len()
    );
}

/// Texts of very different lengths in one batch each get the vector they get alone.
async fn mixed_lengths_embed_as_alone(c: &Client, base: &str) {
    let long: String = reference()
        .iter()
        .map(|(t, _)| t.as_str())
        .collect::<Vec<_>>()
        .join(" ")
        .split(' ')
        .take(150)
        .collect::<Vec<_>>()
        .join(" ");
    let texts = vec![
        "Hi.".to_owned(),
        long.clone(),
        "A cat sat on the mat.".to_owned(),
        words(254),
        "Ok".to_owned(),
    ];
    let batch = embed_many(c, base, &texts).await;
    for (text, batched) in texts.iter().zip(&batch) {
        let alone = embed_one(c, base, text).await;
        let similarity = cosine(batched, &alone);
        assert!(
            similarity > 0.99999,
            "{:?}...: batched vs alone cosine {similarity}",
            &text[..text.len().min(20)]
        );
    }
    // Different texts stay different: the padding of the long ones leaks into nothing.
    assert!(cosine(&batch[0], &batch[1]) < 0.9);
}

/// The host's side of `fermyon:spin/llm`, through the testbed component.
#[tokio::test(flavor = "multi_thread")]
async fn the_host_grants_only_granted_models_and_refuses_what_spin_refuses() {
    let data = temp_dir();
    let c = Client::new();
    let models = ai_models_dir();
    let granted = HostBuilder::new(component("testbed"), data.path())
        .ai_model(MODEL, &models)
        .start();
    let embed = |host: &Host, model: &str| host.url(&format!("/llm/embed?model={model}"));

    let ok = c
        .post_json(
            &embed(&granted, MODEL),
            &json!(["A man is eating food.", "Hi"]),
            None,
        )
        .await
        .value();
    assert_eq!(ok["embeddings"].as_array().unwrap().len(), 2, "{ok}");
    assert_eq!(ok["tokens"], 8 + 3, "{ok}");
    let not_granted = c
        .post_json(&embed(&granted, "all-minilm-l12-v2"), &json!(["a"]), None)
        .await
        .value();
    assert_eq!(not_granted["error"], "model-not-supported");
    let infer = c
        .get(&granted.url(&format!("/llm/infer?model={MODEL}")))
        .await
        .value();
    assert_eq!(infer["error"], "model-not-supported");
    // The host measures every text itself: one over 256 tokens is refused, never cut.
    let long = c
        .post_json(&embed(&granted, MODEL), &json!(["a", words(300)]), None)
        .await
        .value();
    assert_eq!(long["error"], "invalid-input", "{long}");
    assert!(
        long["message"]
            .as_str()
            .unwrap()
            .contains("text 1 is 302 tokens")
    );
    let empty = c
        .post_json(&embed(&granted, MODEL), &json!([]), None)
        .await
        .value();
    assert_eq!(empty["embeddings"], json!([]), "{empty}");

    // A component granted nothing gets model-not-supported, as under Spin.
    let other = temp_dir();
    let bare = HostBuilder::new(component("testbed"), other.path()).start();
    let refused = c
        .post_json(&embed(&bare, MODEL), &json!(["a"]), None)
        .await
        .value();
    assert_eq!(refused["error"], "model-not-supported");
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_weights_say_where_they_go_and_installing_them_needs_no_restart() {
    let (data, empty) = (temp_dir(), temp_dir());
    let host = serve_with(empty.path(), data.path(), &[]);
    let c = Client::new();
    let expected = empty.path().join(MODEL);
    let health = c.get(&host.url("/health")).await;
    let body = health.assert_error(503, "not_ready");
    for needle in [
        expected.display().to_string().as_str(),
        "model.safetensors",
        "cargo xtask install-models",
    ] {
        assert!(body.error.contains(needle), "{needle}: {}", body.error);
    }
    let r = predict(&c, &host.base_url(), json!({"text": "hello"})).await;
    let body = r.assert_error(500, "internal_error");
    assert!(
        body.error.contains("cargo xtask install-models"),
        "{}",
        body.error
    );

    // Installed while the host runs: the next request loads them.
    std::fs::create_dir_all(&expected).unwrap();
    for file in ["model.safetensors", "tokenizer.json"] {
        std::os::unix::fs::symlink(ai_models_dir().join(MODEL).join(file), expected.join(file))
            .unwrap();
    }
    assert_eq!(c.get(&host.url("/health")).await.status, 200);
    embed_one(&c, &host.base_url(), "hello").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn check_passes_on_the_embedding_model() {
    let data = temp_dir();
    let host = serve(data.path());
    let report = e2e_tests::assert_check_passes(host.base_url()).await;
    assert!(report.contains("PASS  B.predict.batch"), "{report}");
}

/// The vocabulary the component counts word pieces with is the installed tokenizer's.
#[test]
fn the_components_vocabulary_is_the_models() {
    let tokenizer = ai_models_dir().join(MODEL).join("tokenizer.json");
    let t: Value = serde_json::from_str(&std::fs::read_to_string(tokenizer).unwrap()).unwrap();
    let mut vocab: Vec<(&str, u64)> = t["model"]["vocab"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_u64().unwrap()))
        .collect();
    vocab.sort_by_key(|(_, id)| *id);
    let committed =
        std::fs::read_to_string(workspace_root().join("components/minilm/vocab.txt")).unwrap();
    let lines: Vec<&str> = committed.lines().collect();
    assert_eq!(lines.len(), vocab.len());
    for (i, ((token, id), line)) in vocab.iter().zip(&lines).enumerate() {
        assert_eq!(*id as usize, i);
        assert_eq!(token, line, "entry {i}");
    }
    assert_eq!(t["model"]["type"], "WordPiece");
    assert_eq!(t["normalizer"]["type"], "BertNormalizer");
    assert_eq!(t["normalizer"]["lowercase"], true);
    assert_eq!(t["pre_tokenizer"]["type"], "BertPreTokenizer");
}
