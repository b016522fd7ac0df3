//! The ONNX graph, loaded with tract, optimized for one input row, and run; a batch runs on a
//! second plan with a symbolic row count, prepared on the first batch (so a deployment that
//! never sees one pays nothing for it).

use crate::zipmap;
use std::sync::Arc;
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

/// What the component reads from the graph's outputs.
#[derive(Debug, Clone)]
pub enum Reading {
    /// One number: output 0, first value.
    Value,
    /// Class probabilities: the floating-point output with a column per label (these).
    Probabilities(Vec<String>),
}

pub struct Graph {
    plan: Arc<TypedSimplePlan>,
    width: usize,
    /// The output read, by index.
    output: usize,
    /// The graph as read, kept to prepare the batch plan from.
    source: InferenceModel,
    /// The plan for any number of rows, and its output's index.
    batch: std::sync::OnceLock<Result<(Arc<TypedSimplePlan>, usize), String>>,
}

/// The declared width of a rank-2 input (`[batch, width]`), when the graph states it.
fn declared_width(fact: &InferenceFact) -> Option<usize> {
    let dims: Vec<_> = fact.shape.dims().collect();
    if dims.len() != 2 {
        return None;
    }
    dims[1]
        .concretize()?
        .as_i64()
        .and_then(|w| usize::try_from(w).ok())
}

/// tract reads an operator it has no builder for as a placeholder that fails later, deep in
/// optimisation, with a message about shapes. Say it at load time instead, by its ONNX name.
fn refuse_unsupported_operators(model: &InferenceModel) -> Result<(), String> {
    let unsupported: Vec<String> = model
        .nodes()
        .iter()
        .filter_map(|node| {
            let name = node.op.name();
            let op = name.strip_prefix("Unimplemented(")?.strip_suffix(')')?;
            Some(format!("operator `{op}` (node `{}`)", node.name))
        })
        .collect();
    if unsupported.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} not supported by this component (the operators it runs are listed in \
         docs/DECISIONS.md, \"ONNX operators\"); export the model with supported operators",
        unsupported.join(", ")
    ))
}

impl Graph {
    /// Loads `bytes` for inputs of `width` numbers. `describe_width` says where the width comes
    /// from, for the message when the graph wants another.
    pub fn load(
        bytes: &[u8],
        width: usize,
        describe_width: &str,
        reading: Reading,
    ) -> Result<Self, String> {
        let mut onnx = tract_onnx::onnx();
        crate::tree_ensemble::register(&mut onnx.op_register);
        crate::ml::register(&mut onnx.op_register);
        let mut proto = onnx
            .proto_model_for_read(&mut std::io::Cursor::new(bytes))
            .map_err(|e| format!("not an ONNX model: {e:#}"))?;
        // A classifier's final ZipMap is paired here instead (see `zipmap`).
        let zipped = proto.graph.as_mut().map(zipmap::unzip).unwrap_or_default();
        if let Reading::Probabilities(labels) = &reading {
            for zipmap_labels in &zipped {
                zipmap::check_labels(zipmap_labels, labels)?;
            }
        }
        let model = onnx
            .model_for_proto_model(&proto)
            .map_err(|e| format!("not a model tract can read: {e:#}"))?;
        refuse_unsupported_operators(&model)?;
        if model.inputs.len() != 1 {
            return Err(format!(
                "the graph has {} inputs; this component feeds exactly one",
                model.inputs.len()
            ));
        }
        let fact = model.input_fact(0).map_err(|e| e.to_string())?;
        if let Some(declared) = declared_width(fact)
            && declared != width
        {
            return Err(format!(
                "the graph's input takes {declared} values per row, but {describe_width} \
                 gives {width}"
            ));
        }
        let plan = model
            .clone()
            .with_input_fact(0, f32::fact([1, width]).into())
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable())
            .map_err(|e| format!("tract could not prepare the graph: {e:#}"))?;
        let output = Self::find_output(&plan, &reading)?;
        Ok(Self {
            plan,
            width,
            output,
            source: model,
            batch: std::sync::OnceLock::new(),
        })
    }

    /// The plan for `N` rows: the graph optimized with a symbolic first dimension.
    fn batch_plan(&self) -> Result<(Arc<TypedSimplePlan>, usize), String> {
        let prepared = self.batch.get_or_init(|| {
            let rows = self.source.symbols.sym("N");
            let fact = f32::fact([rows.to_dim(), self.width.to_dim()]);
            let plan = self
                .source
                .clone()
                .with_input_fact(0, fact.into())
                .and_then(|m| m.into_optimized())
                .and_then(|m| m.into_runnable())
                .map_err(|e| format!("tract could not prepare the graph for batches: {e:#}"))?;
            Ok((plan, self.output))
        });
        prepared.clone()
    }

    fn find_output(plan: &TypedSimplePlan, reading: &Reading) -> Result<usize, String> {
        let model = plan.model();
        let facts: Vec<TypedFact> = (0..model.outputs.len())
            .map(|i| model.output_fact(i).cloned().map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let columns = |f: &TypedFact| f.shape.as_concrete().map(|s| s.iter().product::<usize>());
        match reading {
            Reading::Value => match facts.first() {
                Some(f) if f.datum_type.is_float() && columns(f) == Some(1) => Ok(0),
                Some(f) => Err(format!(
                    "a regression reads one number per row from the graph's first output, \
                     which is {f:?}"
                )),
                None => Err("the graph has no outputs".into()),
            },
            Reading::Probabilities(labels) => {
                let n = labels.len();
                facts
                    .iter()
                    .position(|f| f.datum_type == f32::datum_type() && columns(f) == Some(n))
                    .ok_or_else(|| {
                        format!(
                            "a classifier with {n} labels needs a float output of {n} columns \
                             (probabilities, or a ZipMap of them); the graph's outputs are \
                             {facts:?}"
                        )
                    })
            }
        }
    }

    /// Runs one row; the read output's values.
    pub fn run(&self, row: Vec<f32>) -> Result<Vec<f32>, String> {
        let mut rows = run_plan(&self.plan, self.output, self.width, 1, row)?;
        Ok(rows.pop().unwrap_or_default())
    }

    /// Runs many rows in one call (their values one after another); each row's output values,
    /// in order.
    pub fn run_rows(&self, count: usize, values: Vec<f32>) -> Result<Vec<Vec<f32>>, String> {
        let (plan, output) = self.batch_plan()?;
        run_plan(&plan, output, self.width, count, values)
    }
}

/// Runs `count` rows of `width` values through `plan`; the output `output`, split by row.
fn run_plan(
    plan: &Arc<TypedSimplePlan>,
    output: usize,
    width: usize,
    count: usize,
    values: Vec<f32>,
) -> Result<Vec<Vec<f32>>, String> {
    if count == 0 || values.len() != count * width {
        let n = values.len();
        return Err(format!("{n} values for {count} rows of a graph of {width}"));
    }
    let input = Tensor::from_shape(&[count, width], &values).map_err(|e| e.to_string())?;
    let outputs = plan
        .run(tvec!(input.into()))
        .map_err(|e| format!("inference failed: {e:#}"))?;
    let out = outputs[output]
        .cast_to::<f32>()
        .map_err(|e| e.to_string())?;
    let values = out
        .to_plain_array_view::<f32>()
        .map_err(|e| e.to_string())?;
    let values: Vec<f32> = values.iter().copied().collect();
    let per_row = values.len() / count;
    Ok(values.chunks(per_row.max(1)).map(<[f32]>::to_vec).collect())
}

/// A development check, not part of the test command (tests/tests/onnx_models/corpus.rs is
/// the real one, end to end): every single-input model of a corpus made by
/// tests/python/sklearn_corpus.py, run here natively and compared with onnxruntime's answers.
/// `ONNX_CORPUS=DIR cargo test -p onnx-model --lib corpus_dev -- --ignored --nocapture`
#[cfg(test)]
mod corpus_dev {
    use super::*;

    #[test]
    #[ignore]
    fn corpus_dev() {
        let dir = std::path::PathBuf::from(std::env::var("ONNX_CORPUS").expect("ONNX_CORPUS"));
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let only = std::env::var("ONLY").ok();
        for name in names {
            if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
                continue;
            }
            let d = dir.join(&name);
            let expected: serde_json::Value =
                serde_json::from_slice(&std::fs::read(d.join("expected.json")).unwrap()).unwrap();
            let text = std::fs::read_to_string(d.join("heldout.csv")).unwrap();
            let mut lines = text.lines();
            let width = lines.next().unwrap().split(',').count() - 1;
            let rows: Vec<Vec<f32>> = lines
                .map(|l| {
                    let cells: Vec<&str> = l.split(',').collect();
                    cells[..width]
                        .iter()
                        .map(|c| c.parse::<f32>().unwrap_or(f32::NAN))
                        .collect()
                })
                .collect();
            let first = &expected["rows"][0];
            let reading = match first.get("probabilities") {
                Some(p) => Reading::Probabilities(
                    p.as_object().unwrap().keys().cloned().collect::<Vec<_>>(),
                ),
                None => Reading::Value,
            };
            let bytes = std::fs::read(d.join("model.onnx")).unwrap();
            let graph = match Graph::load(&bytes, width, "the CSV", reading.clone()) {
                Ok(g) => g,
                Err(e) => {
                    println!("{name}: LOAD FAILED: {}", e.lines().next().unwrap_or(""));
                    continue;
                }
            };
            let values: Vec<f32> = rows.iter().flatten().copied().collect();
            let out = match graph.run_rows(rows.len(), values) {
                Ok(o) => o,
                Err(e) => {
                    println!("{name}: RUN FAILED: {}", e.lines().next().unwrap_or(""));
                    continue;
                }
            };
            let mut worst = 0f64;
            for (i, row) in out.iter().enumerate() {
                let want = &expected["rows"][i];
                let wanted: Vec<f64> = match &reading {
                    Reading::Value => vec![want["value"].as_f64().unwrap()],
                    Reading::Probabilities(labels) => labels
                        .iter()
                        .map(|l| want["probabilities"][l].as_f64().unwrap())
                        .collect(),
                };
                for (g, w) in row.iter().zip(&wanted) {
                    let diff = (f64::from(*g) - w).abs() / w.abs().max(1e-6);
                    worst = worst.max(diff);
                }
            }
            println!("{name}: ran {} rows, worst relative difference {worst:.2e}", out.len());
        }
    }
}
