//! Interface B through the model SDK, with molprop as the model: every endpoint, the status
//! rules, metrics under concurrency, the reference file through `/predict`; hostile input
//! in `hostile`, the SDK with another model in `sdk_echo`.

mod hostile;
mod sdk_echo;

use e2e_tests::{Client, Host, HostBuilder, component, temp_dir, workspace_root};
use edge_api::model::{
    AcceptableRanges, Capabilities, Citation, Health, Metrics, ModelInfo, PredictionResponse,
    TestExamples,
};
use hyper::Method;
use serde_json::{Value, json};

pub fn molprop(dir: &std::path::Path) -> Host {
    HostBuilder::new(component("molprop"), dir).start()
}

pub async fn predict(c: &Client, h: &Host, data: Value) -> (u16, Value) {
    let r = c
        .post_json(
            &h.url("/predict"),
            &json!({"input_type": "text", "data": data}),
            None,
        )
        .await;
    (r.status, r.value())
}

/// Answers go out whole and length-delimited, small or large, errors too: the SDK writes
/// the body in one call up to 4 KiB and in pieces beyond, and declares its length.
#[tokio::test(flavor = "multi_thread")]
async fn answers_are_whole_and_declare_their_length() {
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    let one = json!({"input_type": "text", "data": {"text": "CCO", "property": "logp"}});
    let replies = [
        c.get(&h.url("/health")).await,
        c.get(&h.url("/openapi.json")).await,
        c.post_json(&h.url("/predict"), &one, None).await,
        c.post_raw(&h.url("/predict"), b"{".to_vec(), None).await,
    ];
    for r in &replies {
        assert_eq!(r.header("transfer-encoding"), None, "{}", r.text());
        let declared: usize = r.header("content-length").unwrap().parse().unwrap();
        assert_eq!(declared, r.body.len());
        serde_json::from_slice::<Value>(&r.body).expect("a whole JSON body");
    }
    assert!(replies[1].body.len() > 4096, "a body beyond one write");
    assert_eq!(replies[3].status, 400);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_endpoint_answers_with_the_documented_shape() {
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    let health: Health = c.get(&h.url("/health")).await.json();
    assert_eq!(
        (
            health.status.as_str(),
            health.model.as_str(),
            health.version.as_str()
        ),
        ("ok", "molprop", "1.2.0")
    );
    let caps: Capabilities = c.get(&h.url("/capabilities")).await.json();
    assert_eq!(caps.model, "molprop");
    assert!(!caps.capabilities.is_empty());
    let ranges: AcceptableRanges = c.get(&h.url("/acceptable_ranges")).await.json();
    assert!(ranges.property_ranges.contains_key("tpsa"));
    assert!(ranges.description.contains("144"));
    let info: ModelInfo = c.get(&h.url("/info")).await.json();
    assert_eq!(info.name, "molprop");
    let cite: Citation = c.get(&h.url("/citation")).await.json();
    assert!(cite.paper_citation.lines().count() >= 2);
    assert!(cite.software_bibtex.starts_with("@software{"));
    let metrics: Metrics = c.get(&h.url("/metrics")).await.json();
    assert_eq!(metrics.requests_served, 0);
    assert!(metrics.last_error.is_none());
    c.send(Method::POST, &h.url("/shutdown"), None, &[])
        .await
        .assert_error(403, "shutdown_disabled");
    c.get(&h.url("/shutdown"))
        .await
        .assert_error(405, "method_not_allowed");
    c.get(&h.url("/nothing"))
        .await
        .assert_error(404, "not_found");
    // A model without a test set of its own publishes no evidence (the console then shows
    // no plots).
    let none = c.get(&h.url("/evidence")).await;
    none.assert_error(404, "not_found");
    assert!(
        none.value()["error"]
            .as_str()
            .unwrap()
            .contains("no evidence")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn test_examples_predict_their_documented_values() {
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    let ex: TestExamples = c.get(&h.url("/test_examples")).await.json();
    assert!(ex.examples.len() >= 5);
    assert_eq!(ex.usage_instructions.endpoint, "/predict");
    for e in &ex.examples {
        let smiles = e.input["smiles"].as_str().unwrap();
        let expected = &e.input["expected"];
        let (status, body) = predict(&c, &h, json!({"text": smiles, "property": "all"})).await;
        assert_eq!(status, 200);
        // A model's own examples are inside its reliable range (issue 46, section 2).
        assert_eq!(
            body["results"]["in_reliable_range"], true,
            "{}: {body}",
            e.name
        );
        assert!(
            body["results"].get("warning").is_none_or(Value::is_null),
            "{}: {body}",
            e.name
        );
        let p = &body["results"]["prediction"];
        assert_eq!(p["formula"], expected["formula"], "{}", e.name);
        for key in ["mol_weight", "tpsa", "logp"] {
            let (ours, doc) = (p[key].as_f64().unwrap(), expected[key].as_f64().unwrap());
            assert!(
                (ours - doc).abs() <= 0.01,
                "{} {key}: {ours} vs documented {doc}",
                e.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn status_rules_400_200_false_and_error_bodies() {
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    let url = h.url("/predict");
    c.post_raw(&url, b"{nope".to_vec(), None)
        .await
        .assert_error(400, "invalid_json");
    c.post_json(&url, &json!({"data": {"text": "C"}}), None)
        .await
        .assert_error(400, "missing_field");
    c.post_json(&url, &json!({"input_type": "text"}), None)
        .await
        .assert_error(400, "missing_field");
    c.post_json(&url, &json!({"input_type": "text", "data": "C"}), None)
        .await
        .assert_error(400, "invalid_field");
    c.post_json(
        &url,
        &json!({"input_type": "audio", "data": {"text": "C"}}),
        None,
    )
    .await
    .assert_error(400, "unsupported_input_type");
    c.post_json(
        &url,
        &json!({"input_type": "text", "data": {"text": "C", "property": "colour"}}),
        None,
    )
    .await
    .assert_error(400, "invalid_field");
    c.post_json(
        &url,
        &json!({"input_type": "text", "data": {"property": "tpsa"}}),
        None,
    )
    .await
    .assert_error(400, "missing_field");
    let long = "C".repeat(1025);
    c.post_json(
        &url,
        &json!({"input_type": "text", "data": {"text": long}}),
        None,
    )
    .await
    .assert_error(400, "input_too_long");
    let ok_long = "C".repeat(1024);
    assert_eq!(
        predict(&c, &h, json!({"text": ok_long, "property": "heavy_atoms"}))
            .await
            .1["results"]["prediction"],
        1024
    );
    for (bad, what) in [
        ("C1CC", "ring closure 1"),
        ("C[Xx]", "unknown element"),
        ("C(C)(C)(C)(C)C", "valence"),
        ("c1cccc1", "kekulize"),
        // Aromatic atoms outside any ring (RDKit refuses them too).
        ("cc", "not in a ring"),
        ("cccc", "not in a ring"),
        ("c1ccccc1cc", "not in a ring"),
        // Numbers too large for a bracket atom are named, not misread.
        ("[99999999999999999999C]", "isotope"),
        ("[CH99999]", "H99999"),
    ] {
        let (status, body) = predict(&c, &h, json!({"text": bad})).await;
        assert_eq!(status, 200, "{bad}");
        let r: PredictionResponse = serde_json::from_value(body).unwrap();
        assert!(!r.success);
        let msg = r.error_message.unwrap();
        assert!(
            msg.contains(what) && msg.contains("position"),
            "{bad}: {msg}"
        );
    }
    // A key twice inside `data` is refused, as in every other body.
    let twice = br#"{"input_type": "text", "data": {"text": "CCO", "text": "CCC"}}"#;
    let r = c.post_raw(&h.url("/predict"), twice.to_vec(), None).await;
    r.assert_error(400, "invalid_field");
    let (_, body) = predict(&c, &h, json!({"smiles": "CCO", "property": "formula"})).await;
    assert_eq!(body["results"]["prediction"], "C2H6O");
    assert_eq!(body["success"], true);
    assert!(body["error_message"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn metrics_count_concurrent_predictions_exactly() {
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let (c, url) = (c.clone(), h.url("/predict"));
            let smiles = if i % 10 == 0 { "C1CC" } else { "c1ccccc1O" };
            tokio::spawn(async move {
                c.post_json(
                    &url,
                    &json!({"input_type": "text", "data": {"text": smiles}}),
                    None,
                )
                .await
                .status
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap(), 200);
    }
    let m: Metrics = c.get(&h.url("/metrics")).await.json();
    assert_eq!(m.requests_served, 40);
    assert!(m.avg_latency_ms > 0.0);
    assert!(m.last_error.unwrap().contains("ring closure"));
    assert!(m.uptime_s > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reference_file_through_predict_meets_the_targets() {
    let path = workspace_root().join("../shared/testdata/molprop-reference.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split('\t')
        .map(str::to_owned)
        .collect();
    let rows: Vec<Vec<String>> = lines
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    let dir = temp_dir();
    let h = molprop(dir.path());
    let c = Client::new();
    let props = e2e_tests::MOLPROP_PROPERTIES;
    let mut agree = [0usize; 13];
    for row in &rows {
        let (_, body) = predict(&c, &h, json!({"text": row[0], "property": "all"})).await;
        assert_eq!(body["success"], true, "{}: {body}", row[0]);
        let p = &body["results"]["prediction"];
        for (k, name) in props.iter().enumerate() {
            let theirs = &row[header.iter().position(|x| x == name).unwrap()];
            let ok = match &p[name] {
                Value::String(s) => s == theirs,
                v => (v.as_f64().unwrap() - theirs.parse::<f64>().unwrap()).abs() <= 0.01,
            };
            agree[k] += ok as usize;
        }
    }
    let n = rows.len();
    println!("agreement with RDKit through /predict on {n} molecules:");
    for (k, name) in props.iter().enumerate() {
        println!(
            "  {name:<15} {:>4}/{n}  {:6.2}%",
            agree[k],
            100.0 * agree[k] as f64 / n as f64
        );
        let needed = if matches!(*name, "mol_weight" | "exact_mass") {
            n
        } else {
            (n * 99).div_ceil(100)
        };
        assert!(agree[k] >= needed, "{name}: {}/{n}", agree[k]);
    }
}
