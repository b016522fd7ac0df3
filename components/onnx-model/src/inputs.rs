//! A request's `data` turned into the graph's input vector: a SMILES featurized by `chem`, or
//! named tabular features put in the manifest's order. Malformed data is a 400 naming the field;
//! a SMILES that is not a molecule is a failed prediction (200, `success: false`).

use chem::features::Featurizer;
use chem::fingerprint::Fingerprint;
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
pub struct Prepared<'a> {
    pub vector: Vec<f32>,
    /// What the result echoes as `input`.
    pub echo: Value,
    /// The molecule's fingerprint (text input), for the applicability domain.
    pub fingerprint: Option<Fingerprint>,
    /// Named values the applicability domain checks: descriptors, or tabular features.
    pub named: Vec<(&'a str, f64)>,
}

impl Prepared<'_> {
    pub fn value(&self, name: &str) -> Option<f64> {
        self.named.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

impl Reader {
    pub fn width(&self) -> usize {
        match self {
            Reader::Text { featurizer, .. } => featurizer.len(),
            Reader::Tabular { names } => names.len(),
        }
    }

    /// JSON Schema of the `data` [`Reader::read`] accepts, for the model's `/openapi.json`.
    pub fn schema(&self) -> Value {
        match self {
            Reader::Text { max_tokens, .. } => input::smiles_data_schema(*max_tokens, Map::new()),
            Reader::Tabular { names } => {
                let limit = f64::from(f32::MAX);
                let number =
                    serde_json::json!({"type": "number", "minimum": -limit, "maximum": limit});
                let described = format!(
                    "Every feature, by name or as an array in this order: {}",
                    names.join(", ")
                );
                let by_name: Map<String, Value> =
                    names.iter().map(|n| (n.clone(), number.clone())).collect();
                serde_json::json!({
                    "type": "object",
                    "properties": {"features": {
                        "description": described,
                        "oneOf": [
                            {"type": "object", "properties": by_name, "required": names,
                             "additionalProperties": false},
                            {"type": "array", "items": number, "minItems": names.len(),
                             "maxItems": names.len()},
                        ],
                    }},
                    "required": ["features"],
                    "additionalProperties": false,
                })
            }
        }
    }

    pub fn read<'a>(&'a self, data: &Map<String, Value>) -> Result<Prepared<'a>, PredictError> {
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
                let named = featurizer
                    .descriptors
                    .iter()
                    .map(|d| d.code)
                    .zip(features.descriptors.iter().copied())
                    .collect();
                Ok(Prepared {
                    vector: features.vector(),
                    echo: Value::String(smiles),
                    fingerprint: features.fingerprint,
                    named,
                })
            }
            Reader::Tabular { names } => {
                input::only_fields(data, &["features"], "send data.features")?;
                let values = tabular(names, data.get("features"))?;
                let echo = names
                    .iter()
                    .zip(&values)
                    .map(|(n, v)| (n.clone(), serde_json::json!(v)))
                    .collect();
                Ok(Prepared {
                    vector: values.iter().map(|&v| v as f32).collect(),
                    echo: Value::Object(echo),
                    fingerprint: None,
                    named: names.iter().map(|n| n.as_str()).zip(values).collect(),
                })
            }
        }
    }
}

fn number(field: &str, value: &Value) -> Result<f64, ApiError> {
    match value.as_f64() {
        Some(x) if x.is_finite() && x.abs() <= f64::from(f32::MAX) => Ok(x),
        Some(x) => Err(ApiError::invalid(
            field,
            format!(
                "{x:e} is beyond ±{:e}: the model computes in 32-bit floats",
                f32::MAX
            ),
        )),
        None => Err(ApiError::invalid(field, "must be a number")),
    }
}

/// `data.features` as an object of every named feature, or an array in their order.
fn tabular(names: &[String], features: Option<&Value>) -> Result<Vec<f64>, ApiError> {
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
