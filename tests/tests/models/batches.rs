//! Batches on every model built on the model SDK (issue 25): `data.texts` for text models,
//! `data.rows` for tabular ones, answered in order with a bad item failing alone, counted per
//! prediction in `/metrics`, described by each deployment's own `/openapi.json`, and refused
//! as a whole only when the list itself is wrong.

use e2e_tests::{Client, Host, HostBuilder, component, model_dir, temp_dir};
use openapi_contract::Contract;
use serde_json::{Value, json};

async fn predict(c: &Client, host: &Host, input_type: &str, data: Value) -> e2e_tests::Reply {
    let body = json!({"input_type": input_type, "data": data});
    c.post_json(&host.url("/predict"), &body, None).await
}

/// The deployment's own document: it describes the answer `reply`, and accepts `valid` (a
/// batch of valid items; the document types each item, so a bad one is not "valid" there,
/// though the model answers it in its own item).
async fn assert_documented(c: &Client, host: &Host, valid: &Value, reply: &e2e_tests::Reply) {
    let doc = c.get(&host.url("/openapi.json")).await.value();
    let contract = Contract::from_value("own", doc);
    let schema = contract.doc["components"]["schemas"]["PredictionRequest"].clone();
    let validator = contract.validator(&schema).unwrap();
    let refused: Vec<String> = validator
        .iter_errors(valid)
        .map(|e| e.to_string())
        .collect();
    assert!(refused.is_empty(), "{valid} refused: {refused:?}");
    contract
        .check("POST", "/predict", reply.status, &reply.body)
        .unwrap_or_else(|e| panic!("{e}"));
}

async fn served(c: &Client, host: &Host) -> u64 {
    let metrics = c.get(&host.url("/metrics")).await.value();
    metrics["requests_served"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn molprop_answers_a_batch_in_order_with_a_bad_item_failing_alone() {
    let data = temp_dir();
    let host = HostBuilder::new(component("molprop"), data.path()).start();
    let c = Client::new();
    let smiles = ["CCO", "C1CC(", "c1ccccc1O"];
    let single = |s: &str| json!({"text": s, "property": "logp"});
    let mut alone = Vec::new();
    for s in smiles {
        alone.push(predict(&c, &host, "text", single(s)).await.value());
    }
    let before = served(&c, &host).await;

    let data_field = json!({"texts": smiles, "property": "logp"});
    let valid = json!({"input_type": "text", "data": {"texts": ["CCO"], "property": "logp"}});
    let reply = predict(&c, &host, "text", data_field.clone()).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let v = reply.value();
    assert_eq!(v["success"], true, "the batch ran: {v}");
    assert_eq!(v["model_name"], "molprop");
    assert_eq!(v["error_message"], "1 of 3 items failed; see results.items");
    assert_eq!(v["results"]["count"], 3);
    assert_eq!(v["results"]["failed"], 1);
    let items = v["results"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    for (i, item) in items.iter().enumerate() {
        // Each item is what the same input gets alone.
        assert_eq!(item["success"], alone[i]["success"], "{item}");
        assert_eq!(item["results"], alone[i]["results"], "{item}");
        assert_eq!(item["error_message"], alone[i]["error_message"], "{item}");
    }
    assert_eq!(items[1]["success"], false);
    assert!(!items[1]["error_message"].as_str().unwrap().is_empty());

    assert_eq!(
        served(&c, &host).await,
        before + 3,
        "/metrics counts predictions, not requests"
    );
    assert_documented(&c, &host, &valid, &reply).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_refused_whole_only_when_the_list_itself_is_wrong() {
    let data = temp_dir();
    let host = HostBuilder::new(component("molprop"), data.path()).start();
    let c = Client::new();
    let too_many = vec!["C"; model_sdk_max_items() + 1];
    for (data, why) in [
        (json!({"texts": []}), "empty"),
        (json!({"texts": "CCO"}), "not a list"),
        (json!({"texts": ["CCO"], "text": "CCO"}), "both forms"),
        (json!({"texts": too_many}), "too many"),
    ] {
        let reply = predict(&c, &host, "text", data).await;
        let body = reply.assert_error(400, "invalid_field");
        assert!(body.error.contains("data.texts"), "{why}: {}", body.error);
    }
    // A bad field shared by every item fails every item, each saying why.
    let reply = predict(
        &c,
        &host,
        "text",
        json!({"texts": ["C", 7], "property": "nope"}),
    )
    .await;
    let v = reply.value();
    assert_eq!(v["results"]["failed"], 2, "{v}");
    let second = v["results"]["items"][1]["error_message"].as_str().unwrap();
    assert!(second.contains("data.text"), "{second}");
}

/// The documented maximum, read from the generic document (so the test follows it).
fn model_sdk_max_items() -> usize {
    let contract = e2e_tests::contract::load("model");
    let count = &contract.doc["components"]["schemas"]["BatchResults"]["properties"]["count"];
    count["maximum"].as_u64().unwrap() as usize
}

#[tokio::test(flavor = "multi_thread")]
async fn tabular_and_onnx_models_take_rows_and_texts() {
    let (iris_data, sol_data) = (temp_dir(), temp_dir());
    let onnx = |dir: &std::path::Path, data: &std::path::Path| {
        HostBuilder::new(component("onnx-model"), data)
            .shared_compile_cache()
            .mount(dir, "/model")
            .start()
    };
    let iris = onnx(&model_dir("iris"), iris_data.path());
    let solubility = onnx(&model_dir("solubility"), sol_data.path());
    let c = Client::new();

    let setosa = json!({"sepal_length_cm": 5.1, "sepal_width_cm": 3.5, "petal_length_cm": 1.4, "petal_width_cm": 0.2});
    let ordered = json!([6.7, 3.0, 5.2, 2.3]);
    let rows = json!({"rows": [setosa, {"sepal_length_cm": 5.0}, ordered]});
    let reply = predict(&c, &iris, "tabular", rows).await;
    let v = reply.value();
    let items = v["results"]["items"].as_array().unwrap();
    assert_eq!(v["results"]["failed"], 1, "{v}");
    let alone = predict(&c, &iris, "tabular", json!({"features": setosa}))
        .await
        .value();
    assert_eq!(items[0]["results"], alone["results"]);
    assert!(
        items[1]["error_message"]
            .as_str()
            .unwrap()
            .contains("data.features"),
        "{}",
        items[1]
    );
    assert_eq!(items[2]["success"], true);
    let valid = json!({"input_type": "tabular", "data": {"rows": [setosa, ordered]}});
    assert_documented(&c, &iris, &valid, &reply).await;

    let texts = json!({"texts": ["CCO", "c1ccccc1", "CC(=O)Oc1ccccc1C(=O)O"]});
    let reply = predict(&c, &solubility, "text", texts.clone()).await;
    let v = reply.value();
    assert_eq!(v["results"]["failed"], 0, "{v}");
    assert_eq!(v["error_message"], Value::Null);
    let aspirin = predict(
        &c,
        &solubility,
        "text",
        json!({"text": "CC(=O)Oc1ccccc1C(=O)O"}),
    )
    .await
    .value();
    assert_eq!(v["results"]["items"][2]["results"], aspirin["results"]);
    let request = json!({"input_type": "text", "data": texts});
    assert_documented(&c, &solubility, &request, &reply).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fault_or_failure_in_one_item_is_that_items_answer() {
    let data = temp_dir();
    let host = HostBuilder::new(component("echo-model"), data.path()).start();
    let c = Client::new();
    let rows = json!({"rows": [{"outcome": "fault"}, {"outcome": "fail"}, {"value": 1}]});
    let v = predict(&c, &host, "tabular", rows).await.value();
    let items = &v["results"]["items"];
    assert_eq!(v["results"]["failed"], 2, "{v}");
    assert_eq!(
        items[0]["error_message"],
        "prediction failed: asked to fault"
    );
    assert_eq!(items[1]["error_message"], "asked to fail");
    assert_eq!(
        items[2]["results"],
        json!({"echo": {"features": {"value": 1}}})
    );
    // Alone, the fault is the 500 it always was.
    let alone = predict(&c, &host, "tabular", json!({"outcome": "fault"})).await;
    alone.assert_error(500, "internal_error");
}

/// Each prediction of this echo model keeps the CPU 7 s: a batch of four reaches its 20 s
/// budget after the third and answers the fourth with why, well inside the host's 30 s
/// request deadline (no hung connection, no 504).
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_past_its_budget_answers_what_it_computed_and_says_why() {
    let data = temp_dir();
    let host = HostBuilder::new(component("echo-model"), data.path())
        .variable("echo_busy_ms", "7000")
        .start();
    let c = Client::new();
    let rows = json!({"rows": [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 3}]});
    let started = std::time::Instant::now();
    let reply = predict(&c, &host, "tabular", rows).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let v = reply.value();
    let items = v["results"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 4, "{v}");
    for item in &items[..3] {
        assert_eq!(item["success"], true, "{item}");
    }
    let why = items[3]["error_message"].as_str().unwrap();
    assert!(
        why.contains("budget") && why.contains("fewer items"),
        "{why}"
    );
    assert_eq!(v["error_message"], "1 of 4 items failed; see results.items");
    assert!(started.elapsed() < std::time::Duration::from_secs(29));
}

/// The ONNX component runs a batch as one tract call on a plan for any number of rows: the
/// whole solubility test set in one request answers every molecule exactly as alone.
#[tokio::test(flavor = "multi_thread")]
async fn the_solubility_test_set_as_one_batch_matches_each_molecule_alone() {
    let data = temp_dir();
    let host = HostBuilder::new(component("onnx-model"), data.path())
        .shared_compile_cache()
        .mount(&model_dir("solubility"), "/model")
        .start();
    let c = Client::new();
    let text = std::fs::read_to_string(model_dir("solubility").join("test_set.tsv")).unwrap();
    let smiles: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(1))
        .collect();
    assert!(smiles.len() > 50, "{} molecules", smiles.len());
    let v = predict(&c, &host, "text", json!({"texts": smiles}))
        .await
        .value();
    assert_eq!(v["results"]["failed"], 0, "{}", v["error_message"]);
    let items = v["results"]["items"].as_array().unwrap();
    assert_eq!(items.len(), smiles.len());
    for (s, item) in smiles.iter().zip(items) {
        let alone = predict(&c, &host, "text", json!({"text": s})).await.value();
        assert_eq!(item["results"], alone["results"], "{s}");
    }
}
