//! A model that could not be loaded, through the protocol: the server answers for itself
//! and says not ready wherever readiness is asked, and the model's own routes say why not.

use super::serve_unavailable;
use guest_kit::http::ApiRequest;
use serde_json::Value;

fn get(path: &str) -> (u16, Value) {
    let req = ApiRequest {
        method: "GET".into(),
        path: path.into(),
        query: String::new(),
        headers: Vec::new(),
        body: Vec::new(),
    };
    let response = serve_unavailable("no model.onnx", &req, path);
    let body = serde_json::from_slice(response.body()).unwrap();
    (*response.status(), body)
}

#[test]
fn the_server_is_live_and_describes_itself() {
    assert_eq!(
        get("/v2/health/live"),
        (200, serde_json::json!({"live": true}))
    );
    let (status, metadata) = get("/v2");
    assert_eq!(status, 200);
    assert_eq!(metadata["extensions"][0], "binary_tensor_data");
}

#[test]
fn every_readiness_path_says_not_ready_with_the_reason() {
    for path in [
        "/v2/health/ready",
        "/v2/models/iris/ready",
        "/v2/models/iris/versions/1/ready",
    ] {
        let (status, body) = get(path);
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["ready"], false, "{path}");
        assert!(
            body["error"].as_str().unwrap().contains("no model.onnx"),
            "{path}"
        );
    }
}

#[test]
fn the_models_routes_answer_503_with_the_reason() {
    for path in ["/v2/models/iris", "/v2/models/iris/versions/1"] {
        let (status, body) = get(path);
        assert_eq!(status, 503, "{path}: {body}");
        assert!(body["error"].as_str().unwrap().contains("no model.onnx"));
    }
}
