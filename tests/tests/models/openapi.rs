//! Every model deployment serves `GET /openapi.json`, interface B's document specialised to
//! it by the model SDK; the document and the model agree: its examples are valid requests
//! the model answers 200 (valid answers too), and requests the document calls invalid are
//! refused with 400.

use e2e_tests::contract::Contract;
use e2e_tests::{Client, Host, HostBuilder, component, temp_dir};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A deployment under test, and `data` objects the document must call valid or invalid.
struct Case {
    name: &'static str,
    host: Host,
    valid: Vec<Value>,
    invalid: Vec<Value>,
}

async fn check_case(case: Case) {
    let c = Client::new();
    let url = |p: &str| case.host.url(p);
    let r = c.get(&url("/openapi.json")).await;
    assert_eq!(r.status, 200, "{}: {}", case.name, r.text());
    let doc = r.value();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut refs = Vec::new();
    e2e_tests::contract::references(&doc, &mut refs);
    let contract = Contract::from_value(case.name, doc.clone());
    for r in &refs {
        assert!(contract.resolve(r).is_some(), "{}: dangling {r}", case.name);
    }
    // The input types are exactly those the capabilities list.
    let capabilities = c.get(&url("/capabilities")).await.value();
    let listed: BTreeSet<String> = capabilities["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|cap| cap["input_types"].as_array().unwrap().clone())
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let request_schema = &doc["components"]["schemas"]["PredictionRequest"];
    let documented: BTreeSet<String> =
        serde_json::from_value(request_schema["properties"]["input_type"]["enum"].clone()).unwrap();
    assert_eq!(documented, listed, "{}", case.name);
    let input_type = listed.iter().next().unwrap().clone();
    let validator = contract.validator(request_schema).unwrap();
    // The model's own test examples are valid requests, and so is every `valid` case.
    let examples = c.get(&url("/test_examples")).await.value();
    let mut valid: Vec<Value> = examples["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            // An example's own fields are its request's `data` (spec 2.10).
            let mut data = e.as_object().unwrap().clone();
            for standard in ["name", "description", "category", "expected"] {
                data.remove(standard);
            }
            Value::Object(data)
        })
        .collect();
    valid.extend(case.valid);
    for data in valid {
        let body = json!({"input_type": input_type, "data": data});
        assert!(
            validator.is_valid(&body),
            "{}: the document refuses {body}",
            case.name
        );
        let r = c.post_json(&url("/predict"), &body, None).await;
        assert_eq!(r.status, 200, "{}: {body} -> {}", case.name, r.text());
        contract
            .check("POST", "/predict", r.status, &r.body)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    }
    let mut invalid = case.invalid;
    invalid.push(json!({"unknown_field": 1}));
    for data in invalid {
        let body = json!({"input_type": input_type, "data": data});
        assert!(
            !validator.is_valid(&body),
            "{}: the document accepts {body}",
            case.name
        );
        let r = c.post_json(&url("/predict"), &body, None).await;
        assert_eq!(r.status, 400, "{}: {body} -> {}", case.name, r.text());
    }
    // An input type the model does not list is outside the document too.
    let other = json!({"input_type": "audio", "data": {}});
    assert!(!validator.is_valid(&other), "{}", case.name);
    let r = c.post_json(&url("/predict"), &other, None).await;
    r.assert_error(400, "unsupported_input_type");
}

fn onnx_host(name: &str, dir: &std::path::Path) -> Host {
    HostBuilder::new(component("onnx-model"), dir)
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir(name), "/model")
        .start()
}

#[tokio::test(flavor = "multi_thread")]
async fn molprop_documents_its_fields_and_properties() {
    let dir = temp_dir();
    check_case(Case {
        name: "molprop",
        host: HostBuilder::new(component("molprop"), dir.path()).start(),
        valid: vec![
            json!({"text": "CCO", "property": "logp"}),
            json!({"smiles": "c1ccccc1", "property": null}),
            json!({"text": null, "smiles": "CCO"}),
        ],
        invalid: vec![
            json!({"text": "CCO", "property": "colour"}),
            json!({"property": "logp"}),
            json!({"text": null}),
            json!({"text": "   "}),
            json!({"text": 7}),
            // One molecule, one field: the alias beside the field is refused, equal or not.
            json!({"text": "CCO", "smiles": "CCO"}),
            json!({"text": "CCO", "smiles": "CCC"}),
        ],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn onnx_models_document_their_inputs() {
    let dirs = [temp_dir(), temp_dir()];
    check_case(Case {
        name: "solubility",
        host: onnx_host("solubility", dirs[0].path()),
        valid: vec![json!({"text": "Cn1c(=O)c2c(ncn2C)n(C)c1=O"})],
        invalid: vec![json!({}), json!({"text": ""})],
    })
    .await;
    check_case(Case {
        name: "iris",
        host: onnx_host("iris", dirs[1].path()),
        valid: vec![
            json!({"features": [5.1, 3.5, 1.4, 0.2]}),
            json!({"features": {"sepal_length_cm": 5.1, "sepal_width_cm": 3.5,
                                "petal_length_cm": 1.4, "petal_width_cm": 0.2}}),
        ],
        invalid: vec![
            json!({"features": [5.1, 3.5, 1.4]}),
            json!({"features": {"sepal_length_cm": 5.1}}),
            json!({"features": [5.1, 3.5, 1.4, "x"]}),
            json!({}),
        ],
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn minilm_documents_text_and_texts() {
    let dir = temp_dir();
    let host = HostBuilder::new(component("minilm"), dir.path())
        .shared_compile_cache()
        .ai_model("all-minilm-l6-v2", &e2e_tests::ai_models_dir())
        .start();
    let too_many: Vec<String> = (0..65).map(|i| format!("text {i}")).collect();
    check_case(Case {
        name: "minilm",
        host,
        valid: vec![json!({"texts": ["one", "two"]})],
        invalid: vec![
            json!({"texts": []}),
            json!({"texts": too_many}),
            json!({"text": "a", "texts": ["b"]}),
            // (`{"texts": [1]}` is outside the document too, but a bad item fails
            // alone inside a 200 batch answer: tests/embeddings checks that.)
            json!({"text": " "}),
        ],
    })
    .await;
}
