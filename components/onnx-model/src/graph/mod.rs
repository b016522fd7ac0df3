//! The ONNX graph, loaded with tract, optimized for one input row, and run; a batch runs on a
//! second plan with a symbolic row count, prepared on the first batch (so a deployment that
//! never sees one pays nothing for it).
//!
//! A graph takes its features as one matrix (`to_onnx(model, X[:1])` of a numeric array) or
//! one column per feature, named as the feature (a DataFrame export, such as a
//! `ColumnTransformer` over numeric and text columns): [`feed`]. Its answer is read by
//! [`answer`]: the label the graph chose and its probabilities, or its value, at the
//! precision the graph computed them.

pub mod answer;
mod feed;

#[cfg(test)]
mod corpus_dev;
#[cfg(test)]
mod tensor_tests;

use crate::inputs::{Cell, Reader};
use crate::zipmap;
pub use answer::{Answer, Reading};
use feed::Feed;
use std::sync::Arc;
use tract_onnx::prelude::*;

pub struct Graph {
    plan: Arc<TypedSimplePlan>,
    feeds: Vec<Feed>,
    outputs: answer::Outputs,
    /// The graph as read, kept to prepare the batch plan from.
    source: InferenceModel,
    /// The plan for any number of rows.
    batch: std::sync::OnceLock<Result<Arc<TypedSimplePlan>, String>>,
}

/// tract reads an operator it has no builder for as a placeholder that fails later, deep in
/// optimisation, with a message about shapes. Say it at load time instead, by its ONNX name,
/// with what avoids it.
fn unsupported_operators(model: &InferenceModel) -> Vec<String> {
    model
        .nodes()
        .iter()
        .filter_map(|node| {
            let name = node.op.name();
            let op = name.strip_prefix("Unimplemented(")?.strip_suffix(')')?;
            Some(format!(
                "operator `{op}` (node `{}`) is not supported by this component: {}",
                node.name,
                advice(op)
            ))
        })
        .collect()
}

/// What to do about an operator this component does not run: the export option or the
/// estimator that avoids it.
fn advice(op: &str) -> &'static str {
    match op {
        "DictVectorizer" => {
            "a DictVectorizer reads maps, which a request never sends: train on a table (a \
             DataFrame with a ColumnTransformer) and export that"
        }
        "ZipMap" => "a ZipMap is run only as the graph's last node (skl2onnx's default)",
        "TreeEnsemble" => {
            "the ai.onnx.ml opset 5 tree ensemble: export with \
             target_opset={'': 17, 'ai.onnx.ml': 3}, which writes TreeEnsembleRegressor and \
             TreeEnsembleClassifier"
        }
        "StringNormalizer" | "TfIdfVectorizer" | "Tokenizer" => {
            "text vectorizers are not run: featurize text before the model, and send the \
             features"
        }
        _ => {
            "the operators it runs are listed in docs/DECISIONS.md (\"ONNX operators\"); \
             export with those (skl2onnx's default options for the estimators listed there)"
        }
    }
}

impl Graph {
    /// Loads `bytes` for the rows `reader` makes. `describe_width` says where the row's width
    /// comes from, for the message when the graph wants another. Every problem found, at
    /// once.
    pub fn load(
        bytes: &[u8],
        reader: &Reader,
        describe_width: &str,
        reading: Reading,
    ) -> Result<Self, Vec<String>> {
        let mut onnx = tract_onnx::onnx();
        crate::tree_ensemble::register(&mut onnx.op_register);
        crate::ml::register(&mut onnx.op_register);
        let mut proto = onnx
            .proto_model_for_read(&mut std::io::Cursor::new(bytes))
            .map_err(|e| vec![format!("not an ONNX model: {e:#}")])?;
        let mut problems = Vec::new();
        // A classifier's final ZipMap is paired here instead (see `zipmap`).
        let zipped = proto.graph.as_mut().map(zipmap::unzip).unwrap_or_default();
        if let Reading::Classes(labels) | Reading::Scores(labels) = &reading {
            for zipmap_labels in &zipped {
                problems.extend(zipmap::check_labels("ZipMap", zipmap_labels, labels).err());
            }
            if let (Reading::Classes(_), Some(graph)) = (&reading, &proto.graph)
                && let Some(node) = zipmap::decision_scores(graph)
            {
                problems.push(format!(
                    "the graph's {node} answers decision scores, not probabilities: write \
                     values = \"decision_scores\" in model.toml's [output] (model init does), \
                     or retrain for probabilities (SVC(probability=True), \
                     CalibratedClassifierCV)"
                ));
            }
            // Without a ZipMap (`zipmap=False`), the classifier's own labels order the columns.
            if zipped.is_empty()
                && let Some(graph) = &proto.graph
            {
                // One classifier makes the columns; several (one-vs-rest's inner binary
                // classifiers) each label their own, which the manifest need not list.
                let classifiers = zipmap::classifier_labels(graph);
                let only = if classifiers.len() == 1 {
                    classifiers
                } else {
                    Vec::new()
                };
                for (op, theirs) in only {
                    // A classifier trained on class numbers 0, 1, ... may be given names in
                    // the manifest, in that order (models/iris); any other list must match.
                    // Names only: a manifest of numbers in another order would be read by
                    // name and by position at once.
                    let names = !labels.iter().any(|l| l.parse::<i64>().is_ok());
                    if zipmap::numbered(&theirs) && theirs.len() == labels.len() && names {
                        continue;
                    }
                    let who = format!("classifier (`{op}`)");
                    problems.extend(zipmap::check_labels(&who, &theirs, labels).err());
                }
            }
        }
        let model = onnx
            .model_for_proto_model(&proto)
            .map_err(|e| vec![format!("not a model tract can read: {e:#}")])?;
        problems.extend(unsupported_operators(&model));
        let feeds = match feed::bind(&model, reader, describe_width) {
            Ok(feeds) => feeds,
            Err(why) => {
                problems.push(why);
                Vec::new()
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        let plan = feed::with_rows(model.clone(), &feeds, 1.to_dim())
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable())
            .map_err(|e| vec![format!("tract could not prepare the graph: {e:#}")])?;
        let outputs = answer::Outputs::find(plan.model(), &reading).map_err(|e| vec![e])?;
        Ok(Self {
            plan,
            feeds,
            outputs,
            source: model,
            batch: std::sync::OnceLock::new(),
        })
    }

    /// The plan for `N` rows: the graph optimized with a symbolic first dimension.
    fn batch_plan(&self) -> Result<Arc<TypedSimplePlan>, String> {
        let prepared = self.batch.get_or_init(|| {
            let rows = self.source.symbols.sym("N");
            feed::with_rows(self.source.clone(), &self.feeds, rows.to_dim())
                .and_then(|m| m.into_optimized())
                .and_then(|m| m.into_runnable())
                .map_err(|e| format!("tract could not prepare the graph for batches: {e:#}"))
        });
        prepared.clone()
    }

    /// Whether the graph can take `row` (see [`Feed::check`]): the position of the first
    /// feature it cannot take, and why.
    pub fn check_row(&self, row: &[Cell]) -> Result<(), (usize, String)> {
        self.feeds.iter().try_for_each(|f| f.check(row))
    }

    /// Runs one row.
    pub fn run(&self, row: &[Cell]) -> Result<Answer, String> {
        let mut answers = self.run_on(&self.plan, &[row])?;
        answers
            .pop()
            .ok_or_else(|| "the graph answered no row".into())
    }

    /// Runs many rows in one call; each row's answer, in order.
    pub fn run_rows(&self, rows: &[&[Cell]]) -> Result<Vec<Answer>, String> {
        let plan = self.batch_plan()?;
        self.run_on(&plan, rows)
    }

    fn run_on(&self, plan: &Arc<TypedSimplePlan>, rows: &[&[Cell]]) -> Result<Vec<Answer>, String> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let inputs = self
            .feeds
            .iter()
            .map(|f| f.tensor(rows).map(TValue::from))
            .collect::<Result<TVec<_>, _>>()?;
        let outputs = plan
            .run(inputs)
            .map_err(|e| format!("inference failed: {e:#}"))?;
        self.outputs.read(&outputs, rows.len())
    }
}
