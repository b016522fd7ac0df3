//! A request's `data` turned into the graph's input row: a SMILES featurized by `chem`,
//! named tabular features put in the manifest's order ([`tabular`]), or a picture or sound
//! made into the graph's tensor ([`media`]). Malformed data is a 400 naming the field; a
//! SMILES that is not a molecule is a failed prediction (200, `success: false`).

pub mod media;
mod tabular;

use chem::features::Featurizer;
use chem::fingerprint::Fingerprint;
use model_sdk::{ApiError, ErrorCode, PredictError, input};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How this model reads its input.
pub enum Reader {
    Text {
        featurizer: Featurizer,
        max_tokens: usize,
    },
    Tabular {
        names: Vec<String>,
        /// The text features and the values seen in training (see `model_manifest::Input`).
        categories: BTreeMap<String, Vec<String>>,
    },
    /// A picture or a sound, one value of its tensor per cell.
    Media(media::Kind),
}

/// One value of an input row, as the graph is fed it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Number(f64),
    /// A feature sent as `null`: not measured (a graph with an imputer fills it in; it is
    /// fed as NaN).
    Missing,
    /// A category (a text feature).
    Text(String),
}

/// One input, ready for the graph.
pub struct InputRow<'a> {
    /// The row, a cell per feature (or per featurizer column), in the graph's order.
    pub cells: Vec<Cell>,
    /// What the result echoes as `input`.
    pub echo: Value,
    /// The molecule's fingerprint (text input), for the applicability domain.
    pub fingerprint: Option<Fingerprint>,
    /// Named values the applicability domain checks: descriptors, or numeric features.
    pub named: Vec<(&'a str, f64)>,
    /// Text features whose value was never seen in training: (feature, value).
    pub unseen: Vec<(&'a str, String)>,
}

impl InputRow<'_> {
    pub fn value(&self, name: &str) -> Option<f64> {
        self.named.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

impl Reader {
    pub fn width(&self) -> usize {
        match self {
            Reader::Text { featurizer, .. } => featurizer.len(),
            Reader::Tabular { names, .. } => names.len(),
            Reader::Media(kind) => kind.shape().iter().product(),
        }
    }

    /// The shape of one input's tensor, for a graph taking more than a row of numbers (an
    /// image's channels, height and width); `None` for a row.
    pub fn shape(&self) -> Option<Vec<usize>> {
        match self {
            Reader::Media(kind) => Some(kind.shape()),
            _ => None,
        }
    }

    /// The features' names, which a graph with an input per feature is matched by (none for
    /// a featurized SMILES: its graph takes one matrix).
    pub fn names(&self) -> Option<&[String]> {
        match self {
            Reader::Text { .. } | Reader::Media(_) => None,
            Reader::Tabular { names, .. } => Some(names),
        }
    }

    /// Whether feature `name` is a category (text).
    pub fn is_text(&self, name: &str) -> bool {
        matches!(self, Reader::Tabular { categories, .. } if categories.contains_key(name))
    }

    /// JSON Schema of the `data` [`Reader::read`] accepts, for the model's `/openapi.json`.
    pub fn schema(&self) -> Value {
        match self {
            Reader::Text { max_tokens, .. } => input::smiles_data_schema(*max_tokens, Map::new()),
            Reader::Tabular { names, categories } => tabular::schema(names, categories),
            Reader::Media(kind) => kind.schema(),
        }
    }

    pub fn read<'a>(&'a self, data: &Map<String, Value>) -> Result<InputRow<'a>, PredictError> {
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
                Ok(InputRow {
                    cells: features
                        .vector()
                        .into_iter()
                        .map(|v| Cell::Number(f64::from(v)))
                        .collect(),
                    echo: Value::String(smiles),
                    fingerprint: features.fingerprint,
                    named,
                    unseen: Vec::new(),
                })
            }
            Reader::Tabular { names, categories } => {
                input::only_fields(data, &["features"], "send data.features")?;
                let cells = tabular::read(names, categories, data.get("features"))?;
                Ok(tabular::input_row(names, categories, cells))
            }
            Reader::Media(kind) => kind.read(data),
        }
    }
}
