//! A request's `data` turned into the graph's input vector: a SMILES featurized by `chem`, or
//! named tabular features put in the manifest's order. Malformed data is a 400 naming the field;
//! a SMILES that is not a molecule is a failed prediction (200, `success: false`).

use chem::features::{Features, Featurizer};
use model_sdk::{ApiError, ErrorCode, PredictError, input};
use serde_json::{Map, Value};

/// How this model reads its input.
pub enum Reader {
    Text {
        featurizer: Featurizer,
        max_tokens: usize,
    },
    Tabular {
        names: Vec<String>,
    },
}

/// One input, ready for the graph.
pub struct Prepared {
    pub vector: Vec<f32>,
    /// What the result echoes as `input`.
    pub echo: Value,
    /// The molecule's features (text input), for the applicability domain.
    pub features: Option<Features>,
}

impl Reader {
    pub fn width(&self) -> usize {
        match self {
            Reader::Text { featurizer, .. } => featurizer.len(),
            Reader::Tabular { names } => names.len(),
        }
    }

    pub fn read(&self, data: &Map<String, Value>) -> Result<Prepared, PredictError> {
        match self {
            Reader::Text {
                featurizer,
                max_tokens,
            } => {
                input::only_fields(data, &["text", "smiles"], "send the SMILES as text")?;
                let smiles = input::smiles(data)?;
                let tokens = chem::smiles::token_count(&smiles);
                if tokens > *max_tokens {
                    return Err(ApiError::new(
                        ErrorCode::InputTooLong,
                        format!(
                            "the SMILES has {tokens} tokens; at most {max_tokens} are accepted"
                        ),
                    )
                    .into());
                }
                let mol = chem::smiles::parse(&smiles)
                    .map_err(|e| PredictError::Failed(format!("invalid SMILES: {e}")))?;
                let features = featurizer.features(&mol);
                Ok(Prepared {
                    vector: features.vector(),
                    echo: Value::String(smiles),
                    features: Some(features),
                })
            }
            Reader::Tabular { names } => {
                input::only_fields(data, &["features"], "send data.features")?;
                let vector = tabular(names, data.get("features"))?;
                let echo = names
                    .iter()
                    .zip(&vector)
                    .map(|(n, v)| (n.clone(), serde_json::json!(v)))
                    .collect();
                Ok(Prepared {
                    vector,
                    echo: Value::Object(echo),
                    features: None,
                })
            }
        }
    }
}

fn number(field: &str, value: &Value) -> Result<f32, ApiError> {
    match value.as_f64() {
        Some(x) if x.is_finite() && x.abs() <= f64::from(f32::MAX) => Ok(x as f32),
        _ => Err(ApiError::invalid(field, "must be a finite number")),
    }
}

/// `data.features` as an object of every named feature, or an array in their order.
fn tabular(names: &[String], features: Option<&Value>) -> Result<Vec<f32>, ApiError> {
    match features {
        None | Some(Value::Null) => Err(ApiError::missing("data.features")),
        Some(Value::Object(map)) => {
            if let Some(k) = map.keys().find(|k| !names.contains(k)) {
                return Err(ApiError::invalid(
                    &format!("data.features.{k}"),
                    format!(
                        "is not a feature of this model; its features: {}",
                        names.join(", ")
                    ),
                ));
            }
            names
                .iter()
                .map(|n| {
                    let field = format!("data.features.{n}");
                    match map.get(n) {
                        Some(v) => number(&field, v),
                        None => Err(ApiError::missing(&field)),
                    }
                })
                .collect()
        }
        Some(Value::Array(values)) => {
            if values.len() != names.len() {
                return Err(ApiError::invalid(
                    "data.features",
                    format!(
                        "has {} values; this model takes {} in this order: {}",
                        values.len(),
                        names.len(),
                        names.join(", ")
                    ),
                ));
            }
            values
                .iter()
                .enumerate()
                .map(|(i, v)| number(&format!("data.features[{i}] ({})", names[i]), v))
                .collect()
        }
        Some(_) => Err(ApiError::invalid(
            "data.features",
            "must be an object of named features or an array of numbers",
        )),
    }
}
