//! The Open Inference Protocol (KServe v2, Triton's REST API) on every shipped model, served
//! by `runtime-host` over real HTTP, with requests built here in JSON and in Triton's binary
//! framing: each model's metadata, and its inferences answering item by item what v1.2
//! `/predict` answers for the same batch ([`answers`]); every kind of bad request refused
//! with a JSON error naming the fault, the deployment healthy after ([`refusals`]).

mod answers;
pub mod compare;
mod refusals;
mod wire;

use e2e_tests::{Host, HostBuilder, ai_models_dir, component, example_files, model_dir, temp_dir};
use serde_json::{Value, json};
use tempfile::TempDir;
use wire::Tensor;

/// A model served alone by `runtime-host serve`.
pub struct Deployment {
    pub host: Host,
    pub name: &'static str,
    _data: TempDir,
}

impl Deployment {
    /// `molprop`, `minilm`, or a directory of models/ under the ONNX model component.
    pub fn start(name: &'static str) -> Self {
        let data = temp_dir();
        let builder = match name {
            "molprop" | "minilm" => HostBuilder::new(component(name), data.path()),
            dir => HostBuilder::new(component("onnx-model"), data.path())
                .mount(&model_dir(dir), "/model"),
        };
        let builder = match name {
            "minilm" => builder.ai_model("all-minilm-l6-v2", &ai_models_dir()),
            _ => builder,
        };
        Self {
            host: builder.shared_compile_cache().start(),
            name,
            _data: data,
        }
    }

    /// The URL of `rest` below the model's protocol path, `/v2/models/<name>`.
    pub fn model_url(&self, rest: &str) -> String {
        self.host.url(&format!("/v2/models/{}{rest}", self.name))
    }
}

/// A model's batch of three, as a tensor and as v1.2 `data`, and the metadata it must have.
pub struct Case {
    pub platform: &'static str,
    pub tensor: Tensor,
    /// `/predict`'s input type and the same three items as a v1.2 batch's `data`.
    pub input_type: &'static str,
    pub v12_batch: Value,
    /// Every output of the metadata, in order: name, datatype, shape.
    pub outputs: Vec<(&'static str, &'static str, Vec<i64>)>,
}

const SMILES: [&str; 3] = ["CCO", "c1ccc(cc1)O", "CC(=O)Oc1ccccc1C(=O)O"];

pub fn case(model: &str) -> Case {
    let flags = |first: Vec<(&'static str, &'static str, Vec<i64>)>| {
        let mut all = first;
        all.push(("in_domain", "BOOL", vec![-1]));
        all
    };
    let classes = |k: i64| {
        flags(vec![
            ("label", "BYTES", vec![-1]),
            ("probabilities", "FP64", vec![-1, k]),
        ])
    };
    let files = |field: &str| -> Vec<Vec<u8>> {
        let model = if field == "image" {
            "digits"
        } else {
            "spoken-digits"
        };
        example_files(model, field)
            .into_iter()
            .take(3)
            .map(|(_, _, f)| f)
            .collect()
    };
    match model {
        "molprop" => Case {
            platform: "wasm",
            tensor: Tensor::texts("smiles", &SMILES),
            input_type: "text",
            v12_batch: json!({"texts": SMILES}),
            outputs: e2e_tests::MOLPROP_PROPERTIES
                .iter()
                .map(|p| (*p, if *p == "formula" { "BYTES" } else { "FP64" }, vec![-1]))
                .chain([("in_reliable_range", "BOOL", vec![-1])])
                .collect(),
        },
        "solubility" => Case {
            platform: "onnx",
            tensor: Tensor::texts("smiles", &SMILES),
            input_type: "text",
            v12_batch: json!({"texts": SMILES}),
            outputs: flags(vec![
                ("prediction", "FP64", vec![-1]),
                ("in_reliable_range", "BOOL", vec![-1]),
            ]),
        },
        "iris" => {
            let rows = vec![
                vec![5.1f32, 3.5, 1.4, 0.2],
                vec![6.4, 3.2, 4.5, 1.5],
                vec![6.3, 3.3, 6.0, 2.5],
            ];
            let v12: Vec<Vec<f64>> = rows
                .iter()
                .map(|r| r.iter().map(|x| x.to_string().parse().unwrap()).collect())
                .collect();
            Case {
                platform: "onnx",
                tensor: Tensor::rows("features", &rows),
                input_type: "tabular",
                v12_batch: json!({"rows": v12}),
                outputs: classes(3),
            }
        }
        "digits" | "spoken-digits" => {
            let (field, many) = match model {
                "digits" => ("image", "images"),
                _ => ("audio", "audios"),
            };
            let files = files(field);
            let v12: Vec<String> = files.iter().map(|f| wire::b64(f)).collect();
            Case {
                platform: "onnx",
                tensor: Tensor::files(field, &files),
                input_type: field,
                v12_batch: json!({ many: v12 }),
                outputs: classes(10),
            }
        }
        "minilm" => {
            let texts = [
                "A man is playing a guitar.",
                "The weather is lovely today, and the forecast says it will stay that way.",
                "Rust compiles to WebAssembly.",
            ];
            Case {
                platform: "wasm",
                tensor: Tensor::texts("text", &texts),
                input_type: "text",
                v12_batch: json!({"texts": texts}),
                outputs: vec![("embedding", "FP32", vec![-1, 384])],
            }
        }
        other => panic!("no case for {other}"),
    }
}
