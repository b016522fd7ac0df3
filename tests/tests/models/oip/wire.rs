//! Inference requests and answers as bytes, built and read here on their own (not with the
//! component's code), as a client of the protocol would: a JSON header, and after it, when
//! `Inference-Header-Content-Length` says where the JSON ends, the binary tensor data
//! (numbers little-endian, each BYTES element after its 4-byte length).

use e2e_tests::{Client, Reply};
use hyper::Method;
use serde_json::{Map, Value, json};

/// The header of Triton's binary tensor data extension.
pub const HEADER_LENGTH: &str = "inference-header-content-length";

/// A tensor's elements.
#[derive(Clone)]
pub enum Elements {
    /// Each element's bytes in binary data, and the string JSON carries for it (the text
    /// itself, or a file's base64).
    Bytes(Vec<(Vec<u8>, String)>),
    Fp32(Vec<f32>),
}

/// An input tensor.
#[derive(Clone)]
pub struct Tensor {
    pub name: String,
    pub datatype: &'static str,
    pub shape: Vec<i64>,
    pub elements: Elements,
}

impl Tensor {
    /// A BYTES tensor `[N]` of texts (a SMILES, a sentence).
    pub fn texts(name: &str, texts: &[&str]) -> Self {
        let items = texts
            .iter()
            .map(|t| (t.as_bytes().to_vec(), t.to_string()))
            .collect();
        Self::bytes(name, items)
    }

    /// A BYTES tensor `[N]` of files, sent in JSON as base64.
    pub fn files(name: &str, files: &[Vec<u8>]) -> Self {
        let items = files.iter().map(|f| (f.clone(), b64(f))).collect();
        Self::bytes(name, items)
    }

    fn bytes(name: &str, items: Vec<(Vec<u8>, String)>) -> Self {
        Self {
            name: name.into(),
            datatype: "BYTES",
            shape: vec![items.len() as i64],
            elements: Elements::Bytes(items),
        }
    }

    /// An FP32 tensor `[N, K]` of rows.
    pub fn rows(name: &str, rows: &[Vec<f32>]) -> Self {
        Self {
            name: name.into(),
            datatype: "FP32",
            shape: vec![rows.len() as i64, rows[0].len() as i64],
            elements: Elements::Fp32(rows.concat()),
        }
    }

    /// The tensor in JSON, its data nested by rows as clients often send it.
    pub fn json(&self) -> Value {
        let data = match &self.elements {
            Elements::Bytes(items) => json!(items.iter().map(|(_, s)| s).collect::<Vec<_>>()),
            Elements::Fp32(v) => {
                let width = self.shape[1..].iter().product::<i64>().max(1) as usize;
                json!(v.chunks(width).collect::<Vec<_>>())
            }
        };
        json!({"name": self.name, "datatype": self.datatype, "shape": self.shape, "data": data})
    }

    /// The tensor's binary data.
    pub fn binary(&self) -> Vec<u8> {
        match &self.elements {
            Elements::Bytes(items) => items
                .iter()
                .flat_map(|(b, _)| (b.len() as u32).to_le_bytes().into_iter().chain(b.clone()))
                .collect(),
            Elements::Fp32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }
}

pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `head`'s members (`id`, `outputs`, `parameters`) with `inputs` added.
fn with_inputs(head: &Value, inputs: Vec<Value>) -> Value {
    let mut head: Map<String, Value> = head.as_object().cloned().unwrap_or_default();
    head.insert("inputs".into(), Value::Array(inputs));
    Value::Object(head)
}

/// A request of `tensors` in JSON.
pub fn json_body(tensors: &[Tensor], head: &Value) -> Vec<u8> {
    let inputs = tensors.iter().map(Tensor::json).collect();
    serde_json::to_vec(&with_inputs(head, inputs)).unwrap()
}

/// A request of `tensors` as binary data: the body and the JSON header's length.
pub fn binary_body(tensors: &[Tensor], head: &Value) -> (Vec<u8>, usize) {
    let mut blobs = Vec::new();
    let inputs = tensors
        .iter()
        .map(|t| {
            let blob = t.binary();
            let mut input = t.json();
            input.as_object_mut().unwrap().remove("data");
            input["parameters"] = json!({"binary_data_size": blob.len()});
            blobs.extend(blob);
            input
        })
        .collect();
    let mut body = serde_json::to_vec(&with_inputs(head, inputs)).unwrap();
    let length = body.len();
    body.extend(blobs);
    (body, length)
}

/// POSTs an inference body to `url`, with `Inference-Header-Content-Length` when given.
pub async fn post(c: &Client, url: &str, body: Vec<u8>, header_length: Option<usize>) -> Reply {
    let length = header_length.map(|n| n.to_string());
    let mut headers = vec![("content-type", "application/json")];
    if let Some(n) = &length {
        headers = vec![
            ("content-type", "application/octet-stream"),
            (HEADER_LENGTH, n),
        ];
    }
    c.send(Method::POST, url, Some(body), &headers).await
}

/// One output of an answer, its data flat (decoded from binary data when sent so).
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub name: String,
    pub datatype: String,
    pub shape: Vec<i64>,
    pub data: Vec<Value>,
    pub binary: bool,
}

/// The answer's JSON header (asserting a 200) and its outputs.
pub fn answer(r: &Reply) -> (Value, Vec<Output>) {
    assert_eq!(r.status, 200, "{}", r.text());
    let length = match r.header(HEADER_LENGTH) {
        Some(n) => n.parse().unwrap(),
        None => r.body.len(),
    };
    let head: Value = serde_json::from_slice(&r.body[..length]).unwrap();
    let mut rest = &r.body[length..];
    let mut outputs = Vec::new();
    for o in head["outputs"].as_array().unwrap() {
        let datatype = o["datatype"].as_str().unwrap().to_owned();
        let (data, binary) = match o["parameters"]["binary_data_size"].as_u64() {
            Some(size) => {
                let (mine, after) = rest.split_at(size as usize);
                rest = after;
                (decode(&datatype, mine), true)
            }
            None => (flatten(&o["data"]), false),
        };
        outputs.push(Output {
            name: o["name"].as_str().unwrap().to_owned(),
            datatype,
            shape: serde_json::from_value(o["shape"].clone()).unwrap(),
            data,
            binary,
        });
    }
    assert!(rest.is_empty(), "{} bytes after the outputs", rest.len());
    (head, outputs)
}

fn flatten(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items.iter().flat_map(flatten).collect(),
        scalar => vec![scalar.clone()],
    }
}

/// Binary data of `datatype` as JSON values (an FP32 as the decimal it prints as).
fn decode(datatype: &str, mut bytes: &[u8]) -> Vec<Value> {
    match datatype {
        "BOOL" => bytes.iter().map(|b| json!(*b != 0)).collect(),
        "FP32" => bytes
            .chunks_exact(4)
            .map(|c| {
                let x = f32::from_le_bytes(c.try_into().unwrap());
                json!(x.to_string().parse::<f64>().unwrap())
            })
            .collect(),
        "FP64" => bytes
            .chunks_exact(8)
            .map(|c| json!(f64::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        "BYTES" => {
            let mut out = Vec::new();
            while !bytes.is_empty() {
                let (len, rest) = bytes.split_at(4);
                let len = u32::from_le_bytes(len.try_into().unwrap()) as usize;
                out.push(json!(String::from_utf8(rest[..len].to_vec()).unwrap()));
                bytes = &rest[len..];
            }
            out
        }
        other => panic!("no output here is {other}"),
    }
}
