//! `GET /evidence`: the model judged on the test set its directory ships (`[evidence]` in
//! model.toml), by the served graph itself, so the plots show what this deployment does and
//! not what a training script once printed. Computed once per instance, on first use.

use crate::OnnxModel;
use model_manifest::{EvidenceSpec, Input, Output};
use model_sdk::{Confusion, Evidence, Model, Parity, ParityPoint, ResidualPoint, Residuals};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// More rows than this in a test set are refused: the plots draw every point.
const MAX_ROWS: usize = 5000;

/// A test set's rows: a name, the model's input, the measured value or label.
struct Row {
    name: String,
    data: Map<String, Value>,
    measured: String,
}

pub fn compute(
    model: &OnnxModel,
    path: &Path,
    text: &str,
    spec: &EvidenceSpec,
) -> Result<Evidence, String> {
    let rows = read_rows(text, model, spec).map_err(|e| format!("{}: {e}", path.display()))?;
    let items: Vec<Map<String, Value>> = rows.iter().map(|r| r.data.clone()).collect();
    let far = Instant::now() + Duration::from_secs(3600);
    let results = model.predict_batch(model.input_type(), &items, far);
    let (property, unit) = match &model.manifest.output {
        Output::Regression { property, unit } | Output::Classification { property, unit, .. } => {
            (property.clone(), unit.clone())
        }
    };
    let mut evidence = Evidence {
        test_set: spec.description.clone(),
        property,
        unit,
        parity: None,
        residuals: None,
        confusion: None,
    };
    let predicted = rows.iter().zip(results).map(|(row, r)| {
        r.map_err(|e| {
            let why = match e {
                model_sdk::PredictError::Invalid(e) => e.message,
                model_sdk::PredictError::Failed(m) | model_sdk::PredictError::Fault(m) => m,
            };
            format!("test row {}: {why}", row.name)
        })
    });
    match &model.manifest.output {
        Output::Regression { .. } => {
            let mut points = Vec::new();
            let mut residuals = Vec::new();
            for (row, result) in rows.iter().zip(predicted) {
                let result = result?;
                let measured: f64 = row.measured.parse().map_err(|_| {
                    format!("test row {}: {:?} is not a number", row.name, row.measured)
                })?;
                let value = result["prediction"].as_f64().unwrap_or(f64::NAN);
                points.push(ParityPoint {
                    name: row.name.clone(),
                    measured,
                    predicted: value,
                });
                if let Some(similarity) =
                    result["applicability_domain"]["nearest_training_similarity"].as_f64()
                {
                    residuals.push(ResidualPoint {
                        name: row.name.clone(),
                        similarity,
                        residual: round4(value - measured),
                    });
                }
            }
            evidence.parity = Some(parity(points));
            let threshold = model.manifest.applicability_domain.min_similarity;
            if let (Some(threshold), false) = (threshold, residuals.is_empty()) {
                evidence.residuals = Some(Residuals {
                    points: residuals,
                    threshold,
                });
            }
        }
        Output::Classification { labels, .. } => {
            let mut counts = vec![vec![0u32; labels.len()]; labels.len()];
            let mut right = 0;
            for (row, result) in rows.iter().zip(predicted) {
                let result = result?;
                let truth = labels
                    .iter()
                    .position(|l| *l == row.measured)
                    .ok_or_else(|| {
                        format!(
                            "test row {}: label {:?} is not one of the model's",
                            row.name, row.measured
                        )
                    })?;
                let said = result["prediction"].as_str().unwrap_or_default();
                let guess = labels.iter().position(|l| l == said).unwrap_or(truth);
                counts[truth][guess] += 1;
                right += usize::from(truth == guess);
            }
            evidence.confusion = Some(Confusion {
                labels: labels.clone(),
                counts,
                accuracy: round4(right as f64 / rows.len().max(1) as f64),
            });
        }
    }
    Ok(evidence)
}

fn read_rows(text: &str, model: &OnnxModel, spec: &EvidenceSpec) -> Result<Vec<Row>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .ok_or("the file is empty")?
        .split('\t')
        .collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("no column {name:?} in the header"))
    };
    let measured = column(&spec.measured)?;
    let name = spec.name.as_deref().map(column).transpose()?;
    let inputs: Vec<(String, usize)> = match &model.manifest.input {
        Input::Text { .. } => vec![("smiles".to_owned(), column("smiles")?)],
        Input::Tabular { features, .. } => features
            .iter()
            .map(|f| Ok((f.clone(), column(f)?)))
            .collect::<Result<_, String>>()?,
        Input::Image { .. } | Input::Audio { .. } => vec![("file".to_owned(), column("file")?)],
    };
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        if rows.len() == MAX_ROWS {
            return Err(format!("more than {MAX_ROWS} rows"));
        }
        let cells: Vec<&str> = line.split('\t').collect();
        let cell = |at: usize| cells.get(at).map(|c| c.trim()).unwrap_or_default();
        let data = match &model.manifest.input {
            Input::Text { .. } => {
                let mut m = Map::new();
                m.insert("smiles".into(), json!(cell(inputs[0].1)));
                m
            }
            Input::Tabular { .. } => {
                let mut features = Map::new();
                for (f, at) in &inputs {
                    let text = cell(*at);
                    let v = if model.reader.is_text(f) {
                        json!(text)
                    } else if text.is_empty() {
                        Value::Null
                    } else {
                        let v: f64 = text
                            .parse()
                            .map_err(|_| format!("row {}: {f} is not a number", i + 1))?;
                        json!(v)
                    };
                    features.insert(f.clone(), v);
                }
                let mut m = Map::new();
                m.insert("features".into(), Value::Object(features));
                m
            }
            // A file of the model directory, sent as a request would send it.
            Input::Image { .. } | Input::Audio { .. } => {
                use base64::Engine;
                let file = model.dir.join(cell(inputs[0].1));
                let bytes = std::fs::read(&file)
                    .map_err(|e| format!("row {}: {}: {e}", i + 1, file.display()))?;
                let crate::inputs::Reader::Media(kind) = &model.reader else {
                    unreachable!("a picture or sound model reads media");
                };
                let field = kind.field();
                let mut m = Map::new();
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                m.insert(field.into(), json!(encoded));
                m
            }
        };
        rows.push(Row {
            name: name.map_or_else(|| format!("{}", i + 1), |at| cell(at).to_owned()),
            data,
            measured: cell(measured).to_owned(),
        });
    }
    if rows.is_empty() {
        return Err("no rows".into());
    }
    Ok(rows)
}

/// Error figures of predicted against measured values.
fn parity(points: Vec<ParityPoint>) -> Parity {
    let n = points.len().max(1) as f64;
    let mean = points.iter().map(|p| p.measured).sum::<f64>() / n;
    let sse: f64 = points
        .iter()
        .map(|p| (p.predicted - p.measured).powi(2))
        .sum();
    let sst: f64 = points.iter().map(|p| (p.measured - mean).powi(2)).sum();
    let mae = points
        .iter()
        .map(|p| (p.predicted - p.measured).abs())
        .sum::<f64>()
        / n;
    Parity {
        rmse: round4((sse / n).sqrt()),
        mae: round4(mae),
        r2: round4(if sst > 0.0 { 1.0 - sse / sst } else { 0.0 }),
        points,
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}
