//! onnx-model: serves any ONNX model as a Lightweight AI Model Runtime Interface 1.2 deployment,
//! described by the files in the directory mounted at `/model` (Spin: `files = [{ source =
//! "models/solubility", destination = "/model" }]`; runtime-host: `--dir
//! models/solubility:/model`):
//!
//! - `model.toml`, the manifest ([`manifest`]): the model's self-description and how its input
//!   is built (a SMILES featurized by `chem`, or named tabular features);
//! - `model.onnx`, run by tract ([`graph`]), with scikit-learn's tree ensembles supported
//!   ([`tree_ensemble`]: our own tree-ensemble operators, fast for large forests);
//! - optionally packed training fingerprints for the applicability domain ([`domain`]).
//!
//! The directory is read once per instance, on its first request, and kept while the host
//! reuses the instance; the graph itself on the first request that runs it. A manifest that
//! cannot be served makes every endpoint answer 503 with the file and field at fault; a graph
//! that cannot be loaded makes `/health` and `/predict` answer 503 with the reason (the
//! descriptions still come from the manifest). So `runtime-host model` refuses to start with
//! that message and a Spin deployment's `/health` says what to fix.

mod describe;
mod domain;
mod evidence;
mod graph;
mod inputs;
mod load;
mod ml;
mod nearest;
mod result;
mod signature;
mod tree_ensemble;
mod zipmap;

use domain::Domain;
use graph::{Graph, Reading};
use inputs::Reader;
use load::read;
use model_manifest as manifest;
use model_manifest::{Input, Manifest, Output};
use model_sdk::{InputType, Model, PredictError};
use serde_json::{Map, Value};
#[cfg(target_arch = "wasm32")]
use std::path::Path;

/// Where the model directory is mounted.
pub const MODEL_DIR: &str = "/model";

pub struct OnnxModel {
    manifest: Manifest,
    reader: Reader,
    /// The graph, read and optimized by the first request that runs it. Spin starts an
    /// instance per request: `/health`, `/info` and the other descriptions are then answered
    /// from the manifest alone, without the ~15 ms tract takes to load solubility's forest (it
    /// made `/health` miss the spec's 100 ms under load). A pre-initialized snapshot loads it
    /// before the snapshot (see `preload`).
    graph: std::sync::OnceLock<Result<Graph, String>>,
    domain: Domain,
    /// Where the model directory is (named in messages about its files).
    dir: std::path::PathBuf,
    /// The text of `[evidence]`'s test set, read by the first `/evidence` or before the
    /// snapshot (`preload`), so that a snapshot served without the model directory (Spin)
    /// still has it and no other request reads it.
    test_set: std::sync::OnceLock<Result<String, String>>,
    /// `GET /evidence`, computed on first use.
    evidence: std::sync::OnceLock<Result<model_sdk::Evidence, String>>,
}

/// The model of this instance: loaded by the first request, or before the snapshot by a
/// host that pre-initializes ([`model_sdk::preinit!`]), so that every instance starts with it.
#[cfg(target_arch = "wasm32")]
fn loaded() -> &'static Result<OnnxModel, String> {
    static MODEL: std::sync::OnceLock<Result<OnnxModel, String>> = std::sync::OnceLock::new();
    MODEL.get_or_init(|| OnnxModel::load(Path::new(MODEL_DIR)))
}

#[cfg(target_arch = "wasm32")]
fn preload() {
    // The evidence (`/evidence`) is not computed here: predicting the test set leaves the
    // heap of every instance started from the snapshot larger and more scattered, and
    // measured, 25 models in one `up` took 220 instead of 188 MiB. It is computed by the
    // instance that first serves `/evidence`; only its test set's text (a few KB) is read
    // here, as the snapshot may be served without the model directory.
    if let Ok(model) = loaded() {
        let _ = model.graph();
        if let Some(spec) = &model.manifest.evidence {
            let _ = model.test_set(spec);
        }
        model_sdk::snapshot::self_test(model);
    }
}

model_sdk::preinit!(preload);

#[cfg(target_arch = "wasm32")]
#[spin_sdk::http_component]
async fn handle(req: spin_sdk::http::IncomingRequest, out: model_sdk::ResponseOutparam) {
    let resp = match loaded() {
        Ok(model) => model_sdk::serve(model, req).await,
        Err(reason) => model_sdk::serve_unavailable(reason, req).await,
    };
    model_sdk::respond(out, resp);
}

impl OnnxModel {
    /// The graph, loaded on first use; errors start with the file at fault.
    fn graph(&self) -> Result<&Graph, String> {
        let loaded = self.graph.get_or_init(|| {
            let file = &self.manifest.onnx.file;
            let reading = match &self.manifest.output {
                Output::Regression { .. } => Reading::Value,
                Output::Classification { labels, values, .. } => match values {
                    manifest::ClassValues::Probabilities => Reading::Classes(labels.clone()),
                    manifest::ClassValues::DecisionScores => Reading::Scores(labels.clone()),
                },
            };
            let describe_width = match &self.manifest.input {
                Input::Text { featurizer, .. } => format!(
                    "model.toml's featurizer ({} fingerprint bits + {} descriptors)",
                    featurizer.morgan_bits,
                    featurizer.descriptors.len()
                ),
                Input::Tabular { features, .. } => {
                    format!("model.toml's input.features ({} names)", features.len())
                }
                Input::Image { .. } => "model.toml's [input.image]".to_owned(),
                Input::Audio { .. } => "model.toml's [input.audio]".to_owned(),
            };
            let bytes = read(&self.dir, file)?;
            let path = self.dir.join(file);
            Graph::load(&bytes, &self.reader, &describe_width, reading).map_err(|problems| {
                problems
                    .iter()
                    .map(|p| format!("{}: {p}", path.display()))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        });
        loaded.as_ref().map_err(Clone::clone)
    }

    /// The test set's text, read on first use.
    fn test_set(&self, spec: &manifest::EvidenceSpec) -> &Result<String, String> {
        self.test_set.get_or_init(|| {
            let path = self.dir.join(&spec.test_set);
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
        })
    }

    fn input_type(&self) -> InputType {
        match self.manifest.input {
            Input::Text { .. } => InputType::Text,
            Input::Tabular { .. } => InputType::Tabular,
            Input::Image { .. } => InputType::Image,
            Input::Audio { .. } => InputType::Audio,
        }
    }

    /// What the domain check calls each checked value.
    fn checked(&self) -> &'static str {
        match self.manifest.input {
            Input::Text { .. } => "descriptor",
            Input::Tabular { .. } | Input::Image { .. } | Input::Audio { .. } => "feature",
        }
    }
}

/// A graph that cannot be loaded: the deployment is not ready (503, as its `/health` says).
fn not_ready(reason: String) -> PredictError {
    PredictError::Invalid(model_sdk::ApiError::new(
        model_sdk::ErrorCode::NotReady,
        reason,
    ))
}

impl Model for OnnxModel {
    fn name(&self) -> &str {
        &self.manifest.info.name
    }
    fn info(&self) -> model_sdk::ModelInfo {
        self.manifest.info.clone()
    }
    fn capabilities(&self) -> model_sdk::Capabilities {
        describe::capabilities(self)
    }
    fn acceptable_ranges(&self) -> model_sdk::AcceptableRanges {
        describe::acceptable_ranges(self)
    }
    fn citation(&self) -> model_sdk::Citation {
        self.manifest.citation.clone()
    }
    fn test_examples(&self) -> model_sdk::TestExamples {
        describe::test_examples(self)
    }
    fn data_schema(&self) -> Value {
        self.reader.schema()
    }
    fn signature(&self) -> model_sdk::oip::Signature {
        self.oip_signature()
    }
    fn max_batch(&self) -> usize {
        match &self.reader {
            Reader::Media(kind) => kind.max_batch(),
            _ => model_sdk::batch::MAX_ITEMS,
        }
    }
    fn max_body(&self) -> usize {
        match &self.reader {
            Reader::Media(kind) => kind.max_body(),
            _ => guest_kit::http::DEFAULT_MAX_BODY,
        }
    }
    fn evidence(&self) -> Option<Result<model_sdk::Evidence, String>> {
        let spec = self.manifest.evidence.as_ref()?;
        let computed = self.evidence.get_or_init(|| {
            let text = self.test_set(spec).as_ref().map_err(Clone::clone)?;
            evidence::compute(self, &self.dir.join(&spec.test_set), text, spec)
        });
        Some(computed.clone())
    }

    fn predict(&self, _t: InputType, data: &Map<String, Value>) -> Result<Value, PredictError> {
        let graph = self.graph().map_err(not_ready)?;
        let (row, assessment) = self.assess_input(graph, data)?;
        let output = graph
            .run(&row.cells)
            .map_err(|e| could_not_answer(&e, &row))?;
        self.answer(output, row.echo, assessment)
    }

    /// One tract call for every item that reads well; the others fail alone. When the call
    /// fails (a row the graph refuses, such as a category its encoder was exported to refuse),
    /// its rows are run one at a time, so that only that row's item fails.
    fn predict_batch(
        &self,
        _t: InputType,
        items: &[Map<String, Value>],
        deadline: std::time::Instant,
    ) -> Vec<Result<Value, PredictError>> {
        let graph = match self.graph() {
            Ok(graph) => graph,
            Err(e) => return items.iter().map(|_| Err(not_ready(e.clone()))).collect(),
        };
        let mut assessed = Vec::with_capacity(items.len());
        if let Reader::Media(kind) = &self.reader {
            for read in kind.read_all(items, deadline) {
                assessed.push(read.and_then(|p| {
                    let assessment = self.domain.assess_example(&p.cells).map_err(not_ready)?;
                    Ok((p, assessment))
                }));
            }
        } else {
            for data in items {
                if std::time::Instant::now() >= deadline {
                    break;
                }
                assessed.push(self.assess_input(graph, data));
            }
        }
        let read: Vec<&inputs::InputRow> = assessed.iter().flatten().map(|(p, _)| p).collect();
        let rows: Vec<&[inputs::Cell]> = read.iter().map(|p| p.cells.as_slice()).collect();
        let answers: Vec<Result<graph::Answer, PredictError>> = match graph.run_rows(&rows) {
            Ok(answers) if answers.len() == rows.len() => answers.into_iter().map(Ok).collect(),
            // One at a time, while the deadline allows: the rows left are not computed.
            _ => read
                .iter()
                .take_while(|_| std::time::Instant::now() < deadline)
                .map(|p| graph.run(&p.cells).map_err(|e| could_not_answer(&e, p)))
                .collect(),
        };
        let mut answers = answers.into_iter();
        let mut results = Vec::with_capacity(assessed.len());
        for item in assessed {
            let result = match item {
                Err(e) => Err(e),
                Ok((p, assessment)) => match answers.next() {
                    Some(answer) => answer.and_then(|a| self.answer(a, p.echo, assessment)),
                    // Past the deadline: this item and the rest are not computed.
                    None => break,
                },
            };
            results.push(result);
        }
        results
    }
}

/// A row the graph could not run: a failed prediction (200, `success: false`) saying why,
/// naming the categories never seen in training when the row has any (an encoder exported
/// with `handle_unknown='error'`, scikit-learn's default, refuses them).
fn could_not_answer(why: &str, row: &inputs::InputRow) -> PredictError {
    let mut said = format!("the model could not answer this input: {why}");
    if !row.unseen.is_empty() {
        let named: Vec<String> = row
            .unseen
            .iter()
            .map(|(n, v)| format!("{n} = {v:?}"))
            .collect();
        said.push_str(&format!(
            " (it holds a category not seen in training, {}, which the model's encoder refuses: \
             it was exported from a OneHotEncoder with handle_unknown='error', scikit-learn's \
             default; retrain with handle_unknown='ignore' to answer such rows)",
            named.join(", ")
        ));
    }
    PredictError::Failed(said)
}

impl OnnxModel {
    /// An input read, checked against what the graph takes and judged against the
    /// applicability domain, ready for the graph.
    fn assess_input<'a>(
        &'a self,
        graph: &Graph,
        data: &Map<String, Value>,
    ) -> Result<(inputs::InputRow<'a>, domain::Assessment), PredictError> {
        let row = self.reader.read(data)?;
        if let Reader::Media(_) = self.reader {
            let assessment = self.domain.assess_example(&row.cells).map_err(not_ready)?;
            return Ok((row, assessment));
        }
        if let Err((at, why)) = graph.check_row(&row.cells) {
            let field = match self.reader.names() {
                Some(names) => format!("data.features.{}", names[at]),
                None => "data.text".to_owned(),
            };
            return Err(model_sdk::ApiError::invalid(&field, why).into());
        }
        let assessment = self.domain.assess(
            row.fingerprint.as_ref(),
            |name| row.value(name),
            &row.unseen,
            self.checked(),
        );
        Ok((row, assessment))
    }
}
