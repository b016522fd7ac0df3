//! What `model init` writes, decided from the graph and the data before any text is made:
//! the features in the graph's order (numbers with their training ranges, categories with
//! their training values), what the output is, and the test examples. Every mismatch between
//! the graph and the data is an error saying which column or input.

use super::classes::{label_of, sorted_classes};
use super::onnx_graph::{Elem, GraphSummary, Port, Value};
use super::table::{Table, missing, number};
use anyhow::{Result, bail};

/// Min, max and mean of the values present (missing cells left out), and how many.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub count: usize,
}

impl Stats {
    /// Of finite values: the mean is finite too (a sum past f64::MAX is summed again,
    /// each value divided first), as a range's every number must be.
    fn of(values: &[f64]) -> Option<Self> {
        let (mut min, mut max, mut sum, mut count) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0);
        for &v in values {
            min = min.min(v);
            max = max.max(v);
            sum += v;
            count += 1;
        }
        let n = count as f64;
        let mean = if sum.is_finite() {
            sum / n
        } else {
            values.iter().map(|v| v / n).sum()
        };
        (count > 0).then_some(Self {
            min,
            max,
            mean,
            count,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A number; its training range (`None` when every training cell is missing).
    Number(Option<Stats>),
    /// Text: the values seen in training, sorted.
    Category(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    pub name: String,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum OutputPlan {
    Regression {
        property: String,
        target: Stats,
    },
    Classification {
        property: String,
        labels: Vec<String>,
        /// Where the labels came from (said in a comment).
        from: &'static str,
        /// The graph answers decision scores per label, not probabilities.
        scores: bool,
    },
}

/// A cell of a test example.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Number(f64),
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExamplePlan {
    pub name: String,
    pub description: String,
    pub category: String,
    pub values: Vec<Cell>,
}

#[derive(Debug)]
pub struct Plan {
    pub features: Vec<Feature>,
    pub output: OutputPlan,
    pub examples: Vec<ExamplePlan>,
    /// The training rows with a target (those a model is fitted on).
    pub training_rows: usize,
}

/// The plan for `graph` fed from `training` (target column `target`, else the last), with
/// test examples from `held_out` where given.
pub fn plan(
    graph: &GraphSummary,
    training: &Table,
    target: Option<&str>,
    held_out: Option<&Table>,
) -> Result<Plan> {
    let target = match target {
        Some(t) => t.to_owned(),
        None => training.header.last().cloned().unwrap_or_default(),
    };
    let Some(t) = training.column(&target) else {
        bail!(
            "{}: no column `{target}` (--target); its columns are {}",
            training.file,
            training.header.join(", ")
        );
    };
    let columns = feature_columns(graph, training, &target)?;
    let mut features = Vec::new();
    for (name, input) in &columns {
        features.push(feature(training, name, input)?);
    }
    let output = output(graph, training, t)?;
    let source = held_out.unwrap_or(training);
    let examples = examples(source, &features, &target, &output, held_out.is_some())?;
    Ok(Plan {
        features,
        output,
        examples,
        training_rows: training.present(t),
    })
}

/// The feature columns in the graph's order, each with the graph input that takes it.
fn feature_columns<'g>(
    graph: &'g GraphSummary,
    training: &Table,
    target: &str,
) -> Result<Vec<(String, &'g Port)>> {
    let file = &training.file;
    match graph.inputs.as_slice() {
        [] => bail!("the graph has no inputs to feed"),
        [one] => {
            let names: Vec<String> = training
                .header
                .iter()
                .filter(|h| *h != target)
                .cloned()
                .collect();
            if let Value::Tensor { dims, .. } = &one.value
                && let [_, Some(k)] = dims.as_slice()
                && *k as usize != names.len()
            {
                bail!(
                    "the graph's input `{}` takes {k} values per row; {file} has {} columns \
                     besides the target `{target}` ({}): give a CSV of the {k} features the \
                     model was trained on, in its order, and the target",
                    one.name,
                    names.len(),
                    names.join(", ")
                );
            }
            Ok(names.into_iter().map(|n| (n, one)).collect())
        }
        several => {
            // A DataFrame export: one input per column, named as the column.
            let missing: Vec<&str> = several
                .iter()
                .map(|p| p.name.as_str())
                .filter(|n| training.column(n).is_none())
                .collect();
            if !missing.is_empty() {
                bail!(
                    "the graph takes one input per column, named as the columns; {file} has \
                     no column {} (its columns are {})",
                    missing.join(", "),
                    training.header.join(", ")
                );
            }
            if several.iter().any(|p| p.name == target) {
                bail!(
                    "the target `{target}` is one of the graph's inputs: name the target column with --target"
                );
            }
            Ok(several.iter().map(|p| (p.name.clone(), p)).collect())
        }
    }
}

/// Column `name` as a feature of `input`: text where the input takes strings or the cells are
/// not numbers (then the input must take strings).
fn feature(training: &Table, name: &str, input: &Port) -> Result<Feature> {
    let i = training.column(name).expect("a column of the table");
    let takes_text = matches!(
        input.value,
        Value::Tensor {
            elem: Elem::Text,
            ..
        }
    );
    let kind = if takes_text {
        let mut values: Vec<String> = training.cells(i).flatten().map(str::to_owned).collect();
        if values.is_empty() {
            bail!(
                "{}: column `{name}` has no value in any row, but the graph's input `{}` takes \
                 text: its categories are the values seen in training; give the data the \
                 model was trained on",
                training.file,
                input.name
            );
        }
        values.sort();
        values.dedup();
        Kind::Category(values)
    } else if let Some(refused) = not_finite(training, i) {
        bail!(
            "{refused}, which the graph's input `{}` cannot be fed",
            input.name
        );
    } else if let Some((line, cell)) = training.first_text(i) {
        bail!(
            "{}: column `{name}` holds text ({cell:?} on line {line}) but the graph's input `{}` \
             takes numbers",
            training.file,
            input.name
        );
    } else {
        Kind::Number(Stats::of(&numbers(training, i)))
    };
    Ok(Feature {
        name: name.to_owned(),
        kind,
    })
}

fn output(graph: &GraphSummary, training: &Table, t: usize) -> Result<OutputPlan> {
    let property = training.header[t].clone();
    if graph.is_classifier() {
        let (labels, from) = match &graph.labels {
            Some(labels) => (labels.clone(), "the graph's classifier"),
            None => (
                sorted_classes(training, t),
                "the training target's values, sorted as scikit-learn's classes_ are",
            ),
        };
        if labels.len() < 2 {
            bail!(
                "{}: the labels, from {from}, are {labels:?}, but a classifier tells two or \
                 more classes apart (is `{property}` the target? name it with --target)",
                training.file
            );
        }
        return Ok(OutputPlan::Classification {
            property,
            labels,
            from,
            scores: graph.decision_scores,
        });
    }
    if let Some(refused) = not_finite(training, t) {
        bail!("{refused}: the graph is a regression of finite numbers");
    }
    if let Some((line, cell)) = training.first_text(t) {
        bail!(
            "{}: the target `{property}` holds text ({cell:?} on line {line}), but the graph is a \
             regression (no label and probability outputs); name the target column with --target",
            training.file
        );
    }
    let Some(target) = Stats::of(&numbers(training, t)) else {
        bail!("{}: the target `{property}` has no values", training.file);
    };
    Ok(OutputPlan::Regression { property, target })
}

/// The numbers of column `i`, missing cells left out.
fn numbers(training: &Table, i: usize) -> Vec<f64> {
    training.cells(i).flatten().filter_map(number).collect()
}

/// Where column `i` holds an infinite number (`inf`, `1e400`): the error saying so, for
/// scikit-learn refuses to train on one and JSON cannot carry one into a range.
fn not_finite(training: &Table, i: usize) -> Option<String> {
    let (line, cell) = training.first_infinite(i)?;
    Some(format!(
        "{}: column `{}` holds {cell:?} on line {line}, not a finite number (scikit-learn \
         refuses infinite values)",
        training.file, training.header[i]
    ))
}

/// Up to three complete rows of `source` (first, middle, last), their categories among those
/// seen in training.
fn examples(
    source: &Table,
    features: &[Feature],
    target: &str,
    output: &OutputPlan,
    held_out: bool,
) -> Result<Vec<ExamplePlan>> {
    let columns: Vec<usize> = features
        .iter()
        .map(|f| source.column(&f.name))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: it lacks a feature column of the training data (the held-out rows have \
                 the training data's columns)",
                source.file
            )
        })?;
    let Some(t) = source.column(target) else {
        bail!("{}: no target column `{target}`", source.file);
    };
    let usable: Vec<usize> = (0..source.rows.len())
        .filter(|&r| {
            let row = &source.rows[r];
            !missing(&row[t])
                && features.iter().zip(&columns).all(|(f, &c)| match &f.kind {
                    Kind::Number(_) => number(&row[c]).is_some(),
                    Kind::Category(seen) => seen.iter().any(|s| s == &row[c]),
                })
        })
        .collect();
    if usable.is_empty() {
        bail!(
            "{}: no row has every feature present (and every category one seen in training) \
             to make a test example of",
            source.file
        );
    }
    let mut picked = vec![
        usable[0],
        usable[usable.len() / 2],
        usable[usable.len() - 1],
    ];
    picked.dedup();
    let which = if held_out { "held-out" } else { "training" };
    Ok(picked
        .into_iter()
        .map(|r| {
            let row = &source.rows[r];
            let values = features
                .iter()
                .zip(&columns)
                .map(|(f, &c)| match f.kind {
                    Kind::Number(_) => Cell::Number(number(&row[c]).expect("checked")),
                    Kind::Category(_) => Cell::Text(row[c].to_owned()),
                })
                .collect();
            let line = r + 2;
            let category = match output {
                OutputPlan::Classification { labels, .. } => label_of(&row[t], labels),
                OutputPlan::Regression { .. } => format!("row {line}"),
            };
            ExamplePlan {
                name: format!("{which} row {line}"),
                description: format!(
                    "line {line} of {} (true {}: {})",
                    file_name(&source.file),
                    source.header[t],
                    &row[t]
                ),
                category,
                values,
            }
        })
        .collect())
}

fn file_name(path: &str) -> &str {
    std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}
