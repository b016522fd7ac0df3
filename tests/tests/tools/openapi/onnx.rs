//! The ONNX models' answers against model.json.

use super::recorder::Recorder;
use super::registry_and_model::MODEL_GETS;
use e2e_tests::{HostBuilder, component, temp_dir};
use hyper::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn onnx_model_answers_validate_against_model_json() {
    let cases = [
        (
            "solubility",
            "text",
            vec![
                json!({"text": "Cn1c(=O)c2c(ncn2C)n(C)c1=O"}),
                json!({"text": "[Fe+3].[Cl-].[Cl-].[Cl-]"}),
                json!({"text": "C1CC"}),
                json!({"text": 7}),
            ],
        ),
        (
            "iris",
            "tabular",
            vec![
                json!({"features": [5.1, 3.5, 1.4, 0.2]}),
                json!({"features": {"sepal_length_cm": 51, "sepal_width_cm": 3.5,
                                    "petal_length_cm": 1.4, "petal_width_cm": 0.2}}),
                json!({"features": [1]}),
                json!({}),
            ],
        ),
    ];
    for (name, input_type, data) in cases {
        let dir = temp_dir();
        let host = HostBuilder::new(component("onnx-model"), dir.path())
            .shared_compile_cache()
            .mount(&e2e_tests::model_dir(name), "/model")
            .start();
        let mut m = Recorder::new("model", host.base_url());
        for path in MODEL_GETS {
            assert_eq!(m.get(path).await.status, 200, "{name} {path}");
        }
        let mut statuses = Vec::new();
        for d in data {
            let body = json!({"input_type": input_type, "data": d});
            statuses.push(m.json(Method::POST, "/predict", body, None).await.status);
        }
        assert_eq!(
            statuses,
            [200, 200, if name == "iris" { 400 } else { 200 }, 400]
        );
        m.assert_valid();
    }
}
