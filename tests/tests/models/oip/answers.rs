//! Each shipped model's metadata, and its answers in JSON and in binary equal to `/predict`'s.

use super::compare::{assert_same_as_predict, assert_same_outputs, predict_items};
use super::wire::{self, Output, answer, binary_body, json_body};
use super::{Deployment, case};
use e2e_tests::Client;
use serde_json::{Value, json};

/// The metadata: the model's name and version, its platform, its input and outputs with -1
/// for the batch; the same under the version's path.
async fn metadata(c: &Client, d: &Deployment) -> Value {
    let case = case(d.name);
    let r = c.get(&d.model_url("")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let meta = r.value();
    assert_eq!(meta["name"], d.name);
    assert_eq!(meta["platform"], case.platform);
    let t = &case.tensor;
    let mut shape = vec![-1];
    shape.extend(&t.shape[1..]);
    assert_eq!(
        meta["inputs"],
        json!([{"name": t.name, "datatype": t.datatype, "shape": shape}])
    );
    let outputs: Vec<(&str, &str, Vec<i64>)> = meta["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let shape = serde_json::from_value(o["shape"].clone()).unwrap();
            (
                o["name"].as_str().unwrap(),
                o["datatype"].as_str().unwrap(),
                shape,
            )
        })
        .collect();
    assert_eq!(outputs, case.outputs);
    let version = meta["versions"][0].as_str().unwrap();
    let again = c.get(&d.model_url(&format!("/versions/{version}"))).await;
    assert_eq!(again.value(), meta);
    let ready = c.get(&d.model_url("/ready")).await;
    assert_eq!((ready.status, ready.value()), (200, json!({"ready": true})));
    meta
}

/// Everything the model answers, in JSON and in binary, equal to `/predict`; and outputs
/// asked for by name, in the order asked, in JSON or binary each.
async fn answers_equal_predict(model: &'static str) {
    let d = Deployment::start(model);
    let c = Client::new();
    let meta = metadata(&c, &d).await;
    let version = meta["versions"][0].as_str().unwrap().to_owned();
    let case = case(model);
    let items = predict_items(&c, &d, &case).await;
    let tensors = [case.tensor.clone()];
    let infer = d.model_url("/infer");

    let body = json_body(&tensors, &json!({"id": "json-3"}));
    let r = wire::post(&c, &infer, body, None).await;
    assert_eq!(r.header("content-type"), Some("application/json"));
    let (head, in_json) = answer(&r);
    assert_eq!(
        (&head["id"], &head["model_name"], &head["model_version"]),
        (&json!("json-3"), &json!(model), &json!(version))
    );
    let names = |outputs: &[Output]| outputs.iter().map(|o| o.name.clone()).collect::<Vec<_>>();
    let listed: Vec<String> = case.outputs.iter().map(|o| o.0.to_owned()).collect();
    assert_eq!(names(&in_json), listed);
    assert!(in_json.iter().all(|o| !o.binary));
    assert_same_as_predict(&in_json, &meta, &items);

    let head = json!({"id": "binary-3", "parameters": {"binary_data_output": true}});
    let (body, length) = binary_body(&tensors, &head);
    let r = wire::post(&c, &infer, body, Some(length)).await;
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    let (head, in_binary) = answer(&r);
    assert_eq!(head["id"], "binary-3");
    assert!(in_binary.iter().all(|o| o.binary));
    assert_same_outputs(&in_binary, &in_json);

    // The last output in JSON, the first in binary, through the version's path; then the
    // first alone (molprop computes only that property).
    // (minilm has one output: asked for once, in binary.)
    let (first, last) = (&listed[0], listed.last().unwrap());
    let mut asked = vec![json!({"name": first, "parameters": {"binary_data": true}})];
    if last != first {
        asked.insert(0, json!({"name": last}));
    }
    let asked = json!({ "outputs": asked });
    let (body, length) = binary_body(&tensors, &asked);
    let versioned = d.model_url(&format!("/versions/{version}/infer"));
    let (_, picked) = answer(&wire::post(&c, &versioned, body, Some(length)).await);
    let by_name = |n: &String| in_json.iter().find(|o| &o.name == n).unwrap().clone();
    let expected: Vec<Output> = match last == first {
        true => vec![by_name(first)],
        false => vec![by_name(last), by_name(first)],
    };
    assert_same_outputs(&picked, &expected);
    assert!(picked.last().unwrap().binary);
    assert!(picked.len() == 1 || !picked[0].binary);
    let alone = json_body(&tensors, &json!({"outputs": [{"name": first}]}));
    let (_, alone) = answer(&wire::post(&c, &infer, alone, None).await);
    assert_same_outputs(&alone, &[by_name(first)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn molprop_answers_as_predict() {
    answers_equal_predict("molprop").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn solubility_answers_as_predict() {
    answers_equal_predict("solubility").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn iris_answers_as_predict() {
    answers_equal_predict("iris").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn digits_answers_as_predict() {
    answers_equal_predict("digits").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn spoken_digits_answer_as_predict() {
    answers_equal_predict("spoken-digits").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn minilm_answers_as_predict() {
    answers_equal_predict("minilm").await;
}
