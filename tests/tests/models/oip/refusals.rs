//! Every kind of request the protocol or the model cannot take, each refused with a JSON
//! `{"error": ...}` of the right status naming the fault; none leaves the deployment unhealthy.

use super::wire::{self, HEADER_LENGTH, Tensor, binary_body, json_body};
use super::{Deployment, case};
use e2e_tests::Client;
use hyper::Method;
use serde_json::{Value, json};

/// A request and the refusal it must get: its status and words of the error.
struct Refused {
    method: Method,
    url: String,
    body: Vec<u8>,
    header_length: Option<usize>,
    /// Other headers sent (a `content-encoding`).
    headers: Vec<(&'static str, &'static str)>,
    status: u16,
    says: String,
}

fn get(url: String, status: u16, says: &str) -> Refused {
    Refused {
        method: Method::GET,
        url,
        body: Vec::new(),
        header_length: None,
        headers: Vec::new(),
        status,
        says: says.into(),
    }
}

fn post(url: &str, body: Vec<u8>, header_length: Option<usize>, says: &str) -> Refused {
    Refused {
        method: Method::POST,
        url: url.into(),
        body,
        header_length,
        headers: Vec::new(),
        status: 400,
        says: says.into(),
    }
}

impl Refused {
    fn with_status(self, status: u16) -> Self {
        Self { status, ..self }
    }

    fn with_header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }
}

/// A JSON request of `inputs` (tensors as JSON values), with `head`'s other members.
fn inputs(inputs: Value, head: Value) -> Vec<u8> {
    let mut head = head;
    head["inputs"] = inputs;
    serde_json::to_vec(&head).unwrap()
}

/// Sends each request and asserts its refusal; then that the deployment is healthy (v1.2
/// `/health` and the protocol's readiness) and still answers a good inference.
async fn assert_refused(c: &Client, d: &Deployment, requests: Vec<Refused>) {
    for r in requests {
        let length = r.header_length.map(|n| n.to_string());
        let headers: Vec<(&str, &str)> = length
            .iter()
            .map(|n| (HEADER_LENGTH, n.as_str()))
            .chain(r.headers.iter().copied())
            .collect();
        let reply = c
            .send(r.method.clone(), &r.url, Some(r.body), &headers)
            .await;
        let what = format!("{} {} ({})", r.method, r.url, r.says);
        assert_eq!(reply.status, r.status, "{what}: {}", reply.text());
        assert_eq!(
            reply.header("content-type"),
            Some("application/json"),
            "{what}"
        );
        let body = reply.value();
        let error = body["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {body}"));
        assert_eq!(
            body.as_object().unwrap().len(),
            1,
            "{what}: only error: {body}"
        );
        assert!(error.contains(&r.says), "{what}: {error}");
    }
    assert_eq!(c.get(&d.host.url("/health")).await.status, 200);
    let ready = c.get(&d.host.url("/v2/health/ready")).await;
    assert_eq!((ready.status, ready.value()), (200, json!({"ready": true})));
    let good = json_body(&[case(d.name).tensor], &json!({}));
    wire::answer(&wire::post(c, &d.model_url("/infer"), good, None).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_routes_and_bad_requests_to_molprop_are_refused_by_name() {
    let d = Deployment::start("molprop");
    let c = Client::new();
    let infer = d.model_url("/infer");
    let smiles = |data: Value, shape: Value| json!({"name": "smiles", "datatype": "BYTES", "shape": shape, "data": data});
    let one = smiles(json!(["CCO"]), json!([1]));
    let many: Vec<String> = (0..1001).map(|_| "C".to_owned()).collect();
    let mut requests = vec![
        get(d.host.url("/v2/models/nope"), 404, "unknown model 'nope'"),
        get(
            d.host.url("/v2/models/nope/infer"),
            404,
            "unknown model 'nope'",
        ),
        get(d.model_url("/versions/99"), 404, "no version '99'"),
        get(d.model_url("/versions/99/infer"), 404, "no version '99'"),
        get(d.model_url("/explain"), 404, "no route for"),
        get(d.host.url("/v2/repository/index"), 404, "no route for"),
        get(infer.clone(), 405, "GET is not allowed"),
        post(
            &d.host.url("/v2/health/live"),
            Vec::new(),
            None,
            "POST is not allowed",
        )
        .with_status(405),
        post(&infer, b"{\"inputs\": [".to_vec(), None, "not valid"),
        post(
            &infer,
            inputs(json!([one.clone()]), json!({})),
            None,
            "content-encoding gzip is not accepted",
        )
        .with_header("content-encoding", "gzip")
        .with_status(415),
        post(&infer, b"[1, 2]".to_vec(), None, "not valid"),
        post(
            &infer,
            inputs(json!([]), json!({})),
            None,
            "input 'smiles' is missing",
        ),
        post(
            &infer,
            inputs(
                json!([one.clone(), {"name": "extra", "datatype": "BYTES",
            "shape": [1], "data": ["x"]}]),
                json!({}),
            ),
            None,
            "unexpected inference input 'extra'",
        ),
        post(
            &infer,
            inputs(json!([one.clone(), one.clone()]), json!({})),
            None,
            "'smiles' is sent twice",
        ),
        post(
            &infer,
            inputs(
                json!([{"name": "smiles", "datatype": "FP32", "shape": [1],
            "data": [1.0]}]),
                json!({}),
            ),
            None,
            "'smiles' is FP32; this model takes BYTES",
        ),
        post(
            &infer,
            inputs(
                json!([{"name": "smiles", "datatype": "STRING", "shape": [1],
            "data": ["CCO"]}]),
                json!({}),
            ),
            None,
            "does not define",
        ),
        post(
            &infer,
            inputs(json!([smiles(json!(["CCO", "CC"]), json!([3]))]), json!({})),
            None,
            "holds 2 elements; its shape [3] says 3",
        ),
        post(
            &infer,
            inputs(json!([smiles(json!(["CCO"]), json!([1, 2]))]), json!({})),
            None,
            "has shape [1, 2]",
        ),
        post(
            &infer,
            inputs(json!([smiles(json!(many), json!([1001]))]), json!({})),
            None,
            "the batch holds 1001 items; send 1 to 1000",
        ),
        post(
            &infer,
            inputs(
                json!([smiles(json!(["CCO", "C1CC(", "CC"]), json!([3]))]),
                json!({}),
            ),
            None,
            "item 1: invalid SMILES",
        ),
        post(
            &infer,
            inputs(
                json!([one.clone()]),
                json!({"outputs": [{"name": "logp"},
            {"name": "colour"}]}),
            ),
            None,
            "unexpected inference output 'colour'",
        ),
        post(
            &infer,
            inputs(
                json!([one.clone()]),
                json!({"outputs": [{"name": "logp"}, {"name": "logp"}]}),
            ),
            None,
            "output 'logp' is asked for twice",
        ),
    ];
    requests.extend(binary_framing(
        &infer,
        Tensor::texts("smiles", &["CCO", "CC"]),
    ));
    assert_refused(&c, &d, requests).await;
}

/// Binary data that does not add up: a size past the body, bytes no input accounts for, a
/// BYTES element longer than its data, a JSON header longer than the body.
fn binary_framing(infer: &str, tensor: Tensor) -> Vec<Refused> {
    let (body, length) = binary_body(std::slice::from_ref(&tensor), &json!({}));
    let mut head: Value = serde_json::from_slice(&body[..length]).unwrap();
    let data = &body[length..];
    let with = |head: &Value, data: &[u8]| {
        let mut body = serde_json::to_vec(head).unwrap();
        let length = body.len();
        body.extend_from_slice(data);
        (body, Some(length))
    };
    let mut refused = Vec::new();
    head["inputs"][0]["parameters"]["binary_data_size"] = json!(data.len() + 100);
    let (b, n) = with(&head, data);
    refused.push(post(
        infer,
        b,
        n,
        &format!("says {} bytes of binary data", data.len() + 100),
    ));
    head["inputs"][0]["parameters"]["binary_data_size"] = json!(data.len());
    let (b, n) = with(&head, &[data, b"tail"].concat());
    refused.push(post(infer, b, n, "4 bytes of binary data that no input"));
    let mut lying = data.to_vec();
    if tensor.datatype == "BYTES" {
        lying[..4].copy_from_slice(&1000u32.to_le_bytes());
        let (b, n) = with(&head, &lying);
        refused.push(post(infer, b, n, "BYTES element 0 says 1000 bytes"));
    } else {
        lying.pop();
        head["inputs"][0]["parameters"]["binary_data_size"] = json!(lying.len());
        let (b, n) = with(&head, &lying);
        refused.push(post(
            infer,
            b,
            n,
            "bytes of binary data; 8 FP32 elements take 32",
        ));
    }
    refused.push(post(
        infer,
        body.clone(),
        Some(body.len() + 1),
        "inference-header-content-length says",
    ));
    refused
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_of_the_wrong_type_shape_or_size_are_refused_by_iris() {
    let d = Deployment::start("iris");
    let c = Client::new();
    let infer = d.model_url("/infer");
    let features = |datatype: &str, shape: Value, data: Value| {
        inputs(
            json!([{"name": "features", "datatype": datatype, "shape": shape, "data": data}]),
            json!({}),
        )
    };
    let row = json!([5.1, 3.5, 1.4, 0.2]);
    let mut requests = vec![
        post(
            &infer,
            features("BYTES", json!([1, 4]), json!(["a", "b", "c", "d"])),
            None,
            "'features' is BYTES; this model takes a number type",
        ),
        post(
            &infer,
            features("FP32", json!([1, 5]), json!([5.1, 3.5, 1.4, 0.2, 1])),
            None,
            "has shape [1, 5]; this model takes [-1, 4]",
        ),
        post(
            &infer,
            features("FP32", json!([1, 4]), json!([5.1, 3.5, "1.4", 0.2])),
            None,
            "not a FP32 element",
        ),
        post(
            &infer,
            features("FP32", json!([i64::MAX, 4]), row.clone()),
            None,
            "too large a shape",
        ),
        // 2^32 + 1 rows: a 32-bit count would read it as 1, which the data matches.
        post(
            &infer,
            features("FP32", json!([4294967297i64, 4]), row.clone()),
            None,
            "'features' has too large a shape",
        ),
        post(
            &infer,
            features("FP32", json!([-1, 4]), row.clone()),
            None,
            "has shape [-1, 4]",
        ),
    ];
    let rows = vec![vec![5.1f32, 3.5, 1.4, 0.2], vec![6.4, 3.2, 4.5, 1.5]];
    requests.extend(binary_framing(&infer, Tensor::rows("features", &rows)));
    assert_refused(&c, &d, requests).await;
}
