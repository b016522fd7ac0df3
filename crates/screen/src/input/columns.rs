//! Which cells of a row become the model's input: the text column or the feature columns
//! a [`Choice`] names (or the usual names find), for delimited rows and JSON objects alike.

use super::{Choice, Payload, Row};
use anyhow::{Context, Result};
use serde_json::{Map, Value};

/// The names a SMILES column and an id column go by, tried in order (case-insensitive).
pub(super) const TEXT_NAMES: &[&str] = &["smiles", "canonical_smiles", "isomeric_smiles", "text"];
pub(super) const ID_NAMES: &[&str] = &["id", "name", "compound_id", "molecule_id", "title"];

pub(super) fn find(
    header: &[String],
    wanted: &Option<String>,
    defaults: &[&str],
    what: &str,
) -> Result<Option<usize>> {
    if let Some(name) = wanted {
        return header
            .iter()
            .position(|h| h == name)
            .map(Some)
            .with_context(|| {
                format!(
                    "no {what} column `{name}`; the columns are {}",
                    header.join(", ")
                )
            });
    }
    Ok(defaults
        .iter()
        .find_map(|d| header.iter().position(|h| h.eq_ignore_ascii_case(d))))
}

/// Which cells of a delimited row become the input.
pub(super) struct Take {
    text: Option<usize>,
    /// The text column holds URLs.
    urls: bool,
    features: Vec<(usize, String)>,
}

impl Take {
    pub(super) fn new(header: &[String], id: Option<usize>, choice: &Choice) -> Result<Self> {
        let Some(wanted) = &choice.features else {
            let text = find(header, &choice.column, TEXT_NAMES, "text")?.with_context(|| {
                format!(
                    "no SMILES column: name it with --column (the columns are {})",
                    header.join(", ")
                )
            })?;
            return Ok(Self {
                text: Some(text),
                urls: choice.urls,
                features: Vec::new(),
            });
        };
        let features = if wanted.is_empty() {
            header
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != id)
                .map(|(i, h)| (i, h.clone()))
                .collect()
        } else {
            wanted
                .iter()
                .map(|w| {
                    find(header, &Some(w.clone()), &[], "feature")
                        .map(|i| (i.unwrap_or(0), w.clone()))
                })
                .collect::<Result<_>>()?
        };
        Ok(Self {
            text: None,
            urls: false,
            features,
        })
    }

    pub(super) fn row(
        &self,
        i: usize,
        id: Option<&str>,
        cell: impl Fn(usize) -> Option<Value>,
    ) -> Row {
        let id = id.filter(|s| !s.trim().is_empty()).map(str::to_owned);
        if let (Some(c), true) = (self.text, self.urls) {
            return url_row(i, id, cell(c));
        }
        let id = id.unwrap_or_else(|| (i + 1).to_string());
        if let Some(c) = self.text {
            let payload = match cell(c) {
                Some(Value::String(s)) if !s.trim().is_empty() => {
                    Payload::Text(s.trim().to_owned())
                }
                _ => Payload::Unreadable("the SMILES cell is empty".into()),
            };
            return Row { id, payload };
        }
        let mut features = Map::new();
        for (c, name) in &self.features {
            match cell(*c) {
                Some(Value::String(s)) if s.trim().is_empty() => {
                    return Row {
                        id,
                        payload: Payload::Unreadable(format!("feature `{name}` is empty")),
                    };
                }
                Some(v) => {
                    features.insert(name.clone(), number_if_numeric(v));
                }
                None => {
                    return Row {
                        id,
                        payload: Payload::Unreadable(format!("feature `{name}` is missing")),
                    };
                }
            }
        }
        Row {
            id,
            payload: Payload::Features(features),
        }
    }
}

/// A row of a URL column: the URL, named by its id cell or else by the URL itself (so a
/// resumed run knows it by its URL); anything but an `http(s)` URL fails alone.
fn url_row(i: usize, id: Option<String>, cell: Option<Value>) -> Row {
    let url = match cell {
        Some(Value::String(s)) => s.trim().to_owned(),
        _ => String::new(),
    };
    let name = id.unwrap_or_else(|| {
        if url.is_empty() {
            (i + 1).to_string()
        } else {
            url.clone()
        }
    });
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let payload = if url.is_empty() {
        Payload::Unreadable("the URL cell is empty".into())
    } else if matches!(scheme.as_deref(), Some("http" | "https")) {
        Payload::Url(url)
    } else {
        Payload::Unreadable(format!("`{url}` is not an http(s) URL"))
    };
    Row { id: name, payload }
}

/// Delimited cells are text: a cell that reads as a number is sent as one.
fn number_if_numeric(v: Value) -> Value {
    match &v {
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Value::from)
            .unwrap_or(v),
        _ => v,
    }
}

pub(super) fn json_row(i: usize, object: Map<String, Value>, choice: &Choice) -> Row {
    let id_key = choice.id_column.clone().or_else(|| {
        ID_NAMES
            .iter()
            .find(|n| object.contains_key(**n))
            .map(|n| (*n).to_owned())
    });
    let id = id_key
        .as_ref()
        .and_then(|k| object.get(k))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    let header: Vec<String> = object.keys().cloned().collect();
    let id_index = id_key
        .as_ref()
        .and_then(|k| header.iter().position(|h| h == k));
    match Take::new(&header, id_index, choice) {
        Ok(take) => take.row(i, id.as_deref(), |c| object.get(&header[c]).cloned()),
        Err(e) => Row {
            id: id.unwrap_or_else(|| (i + 1).to_string()),
            payload: Payload::Unreadable(e.to_string()),
        },
    }
}
