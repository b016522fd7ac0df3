//! The tabular iris classifier: named or ordered features, and onnxruntime's answers on the
//! held-out flowers.

use super::{predict, serve, tsv};
use e2e_tests::{Client, model_dir, temp_dir};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn tabular_model_reads_named_or_ordered_features() {
    let data = temp_dir();
    let host = serve(&model_dir("iris"), data.path());
    let c = Client::new();
    let caps = c.get(&host.url("/capabilities")).await.value();
    assert_eq!(caps["capabilities"][0]["input_types"], json!(["tabular"]));

    let named = json!({"features": {"sepal_length_cm": 6.3, "sepal_width_cm": 3.3,
                                    "petal_length_cm": 6.0, "petal_width_cm": 2.5}});
    let by_name = predict(&c, &host, "tabular", named).await.value();
    let ordered = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [6.3, 3.3, 6.0, 2.5]}),
    )
    .await
    .value();
    let res = &by_name["results"];
    assert_eq!(res["prediction"], "virginica", "{by_name}");
    assert_eq!(ordered["results"]["probabilities"], res["probabilities"]);
    let p: f64 = ["setosa", "versicolor", "virginica"]
        .iter()
        .map(|l| res["probabilities"][l].as_f64().unwrap())
        .sum();
    assert!((p - 1.0).abs() < 1e-3, "probabilities sum to {p}");
    assert_eq!(res["in_domain"], true);
    assert_eq!(res["input"]["sepal_length_cm"], 6.3);
    // A finite number beyond the model's 32-bit floats is named as such.
    let huge = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [1e308, 3.3, 6.0, 2.5]}),
    )
    .await;
    let e = huge.assert_error(400, "invalid_field");
    assert!(e.error.contains("32-bit"), "{}", e.error);

    let setosa = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [5.1, 3.5, 1.4, 0.2]}),
    )
    .await;
    assert_eq!(setosa.value()["results"]["prediction"], "setosa");

    // A flower ten times too large is answered, and flagged.
    let huge = predict(
        &c,
        &host,
        "tabular",
        json!({"features": [51, 3.5, 1.4, 0.2]}),
    )
    .await;
    let v = huge.value();
    assert_eq!(v["results"]["in_domain"], false);
    assert!(
        v["results"]["warning"]
            .as_str()
            .unwrap()
            .contains("sepal_length_cm")
    );

    let missing = json!({"features": {"sepal_length_cm": 6.3, "sepal_width_cm": 3.3,
                                      "petal_length_cm": 6.0}});
    let e = predict(&c, &host, "tabular", missing)
        .await
        .assert_error(400, "missing_field");
    assert!(
        e.error.contains("data.features.petal_width_cm"),
        "{}",
        e.error
    );
    let wrong_type = json!({"features": {"sepal_length_cm": "6.3", "sepal_width_cm": 3.3,
                                         "petal_length_cm": 6.0, "petal_width_cm": 2.5}});
    let e = predict(&c, &host, "tabular", wrong_type)
        .await
        .assert_error(400, "invalid_field");
    assert!(
        e.error.contains("data.features.sepal_length_cm"),
        "{}",
        e.error
    );
    let e = predict(&c, &host, "tabular", json!({"features": [1, 2, 3]}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("has 3 values"), "{}", e.error);
    let e = predict(&c, &host, "tabular", json!({"features": {"colour": 1}}))
        .await
        .assert_error(400, "invalid_field");
    assert!(e.error.contains("data.features.colour"), "{}", e.error);
    predict(&c, &host, "tabular", json!({}))
        .await
        .assert_error(400, "missing_field");
}

#[tokio::test(flavor = "multi_thread")]
async fn classifier_reproduces_onnxruntime_on_the_held_out_flowers() {
    let data = temp_dir();
    let host = serve(&model_dir("iris"), data.path());
    let c = Client::new();
    let labels = ["setosa", "versicolor", "virginica"];
    let rows = tsv("iris", "heldout.tsv");
    let mut correct = 0;
    for row in &rows {
        let features: Vec<f64> = row[..4].iter().map(|v| v.parse().unwrap()).collect();
        let v = predict(&c, &host, "tabular", json!({ "features": features }))
            .await
            .value();
        let res = &v["results"];
        for (i, label) in labels.iter().enumerate() {
            let served = res["probabilities"][label].as_f64().unwrap();
            let reference: f64 = row[5 + i].parse().unwrap();
            assert!(
                (served - reference).abs() < 1e-4,
                "{row:?}: {label} served {served}, onnxruntime {reference}"
            );
        }
        if res["prediction"] == row[4].as_str() {
            correct += 1;
        }
    }
    // The accuracy /acceptable_ranges reports is the one served.
    let ranges = c.get(&host.url("/acceptable_ranges")).await.value();
    let recorded = ranges["property_ranges"]["petal_length_cm"]["validation_metrics"]["accuracy"]
        .as_f64()
        .unwrap();
    let served = f64::from(correct) / rows.len() as f64;
    assert!(
        (served - recorded).abs() < 1e-3,
        "served {served}, recorded {recorded}"
    );
    // GET /evidence: the confusion matrix of the same flowers.
    let evidence = c.get(&host.url("/evidence")).await.value();
    let confusion = &evidence["confusion"];
    assert_eq!(confusion["labels"], json!(labels));
    let counts: Vec<Vec<u64>> = serde_json::from_value(confusion["counts"].clone()).unwrap();
    let total: u64 = counts.iter().flatten().sum();
    let diagonal: u64 = (0..3).map(|i| counts[i][i]).sum();
    assert_eq!(total as usize, rows.len());
    assert_eq!(diagonal, correct as u64);
    for (i, label) in labels.iter().enumerate() {
        let truly: u64 = counts[i].iter().sum();
        let expected = rows.iter().filter(|r| r[4] == *label).count() as u64;
        assert_eq!(
            truly, expected,
            "row {label} counts the flowers that are {label}"
        );
    }
    assert!((confusion["accuracy"].as_f64().unwrap() - served).abs() < 1e-3);
    assert!(evidence.get("parity").is_none());
}
