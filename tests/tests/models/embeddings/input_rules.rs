//! The embedding model's input rules: every malformed request a 400 naming its field.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn input_rules_answer_400_naming_the_field() {
    let data = temp_dir();
    let host = serve(data.path());
    let c = Client::new();
    let refused = [
        (json!({"text": ""}), "invalid_field", "data.text"),
        (json!({"text": " \n\t "}), "invalid_field", "data.text"),
        // Only what the tokenizer drops: no content either.
        (
            json!({"text": "\u{200b}\u{7}\u{feff}"}),
            "invalid_field",
            "data.text",
        ),
        (json!({"text": 42}), "invalid_field", "data.text"),
        (json!({}), "missing_field", "data.text"),
        (json!({"texts": []}), "invalid_field", "data.texts"),
        (json!({"texts": "one"}), "invalid_field", "data.texts"),
        (
            json!({"text": "a", "texts": ["b"]}),
            "invalid_field",
            "data.texts",
        ),
        (
            json!({"text": "a", "lang": "en"}),
            "invalid_field",
            "data.lang",
        ),
        (
            json!({"texts": vec!["a"; 65]}),
            "invalid_field",
            "data.texts",
        ),
        (
            json!({"text": words(255)}),
            "input_too_long",
            "257 word pieces",
        ),
    ];
    for (data, code, mention) in refused {
        let r = predict(&c, &host.base_url(), data.clone()).await;
        let body = r.assert_error(400, code);
        assert!(body.error.contains(mention), "{data}: {}", body.error);
    }
    // In a batch, a bad text fails alone, saying why as it would alone; the rest are
    // embedded.
    let batch = json!({"texts": ["a", 7, "", words(300), "b"]});
    let v = predict(&c, &host.base_url(), batch).await.value();
    let items = v["results"]["items"].as_array().unwrap();
    assert_eq!(v["results"]["failed"], 3, "{v}");
    let why = |i: usize| items[i]["error_message"].as_str().unwrap().to_owned();
    assert!(why(1).contains("must be a string"), "{}", why(1));
    assert!(why(2).contains("must not be empty"), "{}", why(2));
    assert!(why(3).contains("302 word pieces"), "{}", why(3));
    for i in [0, 4] {
        assert_eq!(floats(&items[i]["results"]["embedding"]).len(), 384);
    }
    // The limits themselves are accepted: 254 word pieces (+ [CLS], [SEP]) and 64 texts.
    embed_one(&c, &host.base_url(), &words(254)).await;
    assert_eq!(
        embed_many(&c, &host.base_url(), &vec!["a".to_owned(); 64])
            .await
            .len(),
        64
    );
    // Accents and case do not matter to an uncased model; other scripts are embedded.
    let plain = embed_one(&c, &host.base_url(), "cafe resume").await;
    let accented = embed_one(&c, &host.base_url(), "Café Résumé").await;
    assert!(cosine(&plain, &accented) > 0.99999);
    embed_one(&c, &host.base_url(), "日本語の文です。🙂").await;
    // Only `text` is an input type of this model.
    let r = c
        .post_json(
            &host.url("/predict"),
            &json!({"input_type": "tabular", "data": {"text": "a"}}),
            None,
        )
        .await;
    r.assert_error(400, "unsupported_input_type");
}
