//! The applicability domain: whether a prediction comes from familiar ground. An input is
//! inside when its nearest training molecule is similar enough (Tanimoto on the fingerprint)
//! and every descriptor or feature lies within its training range; a picture or a sound when
//! its nearest training example is close enough in the graph's input space. Otherwise the
//! result says `in_domain: false` and a `warning` names why.

use crate::inputs::Cell;
use crate::nearest::Nearest;
use chem::fingerprint::Fingerprint;
use model_manifest::Range;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;

pub struct Domain {
    /// Training fingerprints and the similarity threshold, when the model has them.
    pub neighbours: Option<(Vec<Fingerprint>, f64)>,
    /// Training range of each checked value, by name, in input order.
    pub ranges: Vec<(String, Range)>,
    /// The training examples as the graph took them (pictures, sounds).
    pub examples: Option<Examples>,
}

/// Training inputs, one row of `width` values each, and the farthest distance from the
/// nearest of them that is still inside the domain. Read by the first prediction, not when
/// the model is: Spin starts an instance per request, and reading and ordering
/// spoken-digits' 3.8 MB of rows made its `/health` miss the specification's 100 ms (137 ms).
/// A host that pre-initializes reads them before its snapshot (the self-test predicts).
pub struct Examples {
    file: PathBuf,
    width: usize,
    max_distance: f64,
    rows: OnceLock<Result<Nearest, String>>,
}

impl Examples {
    /// The rows of `file`, little-endian `f32`, `width` values a row, once they are needed.
    pub fn new(file: PathBuf, width: usize, max_distance: f64) -> Self {
        Self {
            file,
            width,
            max_distance,
            rows: OnceLock::new(),
        }
    }

    fn rows(&self) -> Result<&Nearest, String> {
        let read = self.rows.get_or_init(|| {
            let bytes =
                std::fs::read(&self.file).map_err(|e| format!("{}: {e}", self.file.display()))?;
            let row = self.width * 4;
            if row == 0 || bytes.is_empty() || !bytes.len().is_multiple_of(row) {
                return Err(format!(
                    "{}: {} bytes is not a whole number of rows of {} little-endian f32 \
                     values ({row} bytes each, as media-features writes them)",
                    self.file.display(),
                    bytes.len(),
                    self.width
                ));
            }
            let rows = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Ok(Nearest::new(rows, self.width))
        });
        read.as_ref().map_err(Clone::clone)
    }

    /// The Euclidean distance from `input` to its nearest training example.
    fn nearest(&self, input: &[Cell]) -> Result<f64, String> {
        let x: Vec<f64> = input
            .iter()
            .map(|c| match c {
                Cell::Number(v) => *v,
                _ => f64::NAN,
            })
            .collect();
        Ok(self.rows()?.distance(&x))
    }
}

/// Reads `bytes` as packed training fingerprints of `bits` bits each.
pub fn read_fingerprints(bits: usize, bytes: &[u8]) -> Result<Vec<Fingerprint>, String> {
    let row = bits / 8;
    if row == 0 || bytes.is_empty() || !bytes.len().is_multiple_of(row) {
        return Err(format!(
            "{} bytes is not a whole number of {bits}-bit fingerprints ({row} bytes each)",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks(row)
        .filter_map(|c| Fingerprint::from_packed(bits, c))
        .collect())
}

impl Domain {
    /// The rule in words, for `/acceptable_ranges`.
    pub fn rule(&self, what: &str) -> Option<String> {
        let mut parts = Vec::new();
        if let Some((train, min)) = &self.neighbours {
            parts.push(format!(
                "its most similar training molecule (of {}) has Tanimoto similarity >= {min} \
                 on the model's Morgan fingerprint",
                train.len()
            ));
        }
        if !self.ranges.is_empty() {
            parts.push(format!("every {what} lies within its training range"));
        }
        if let Some(e) = &self.examples {
            let of = e
                .rows()
                .map_or(String::new(), |r| format!(" (of {})", r.len()));
            parts.push(format!(
                "its nearest training example{of} lies within Euclidean distance {} of it, in \
                 the space of the values the graph takes",
                e.max_distance
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "Applicability domain: a prediction is in_domain when {}; otherwise the result \
                 has in_domain false and a warning saying why.",
                parts.join(" and ")
            )
        })
    }

    /// Judges one input: its fingerprint (if any), the values checked against ranges, in
    /// the order of `self.ranges`' names (`value_of` looks each up), and its categories never
    /// seen in training (`unseen`: feature, value). Values and bounds are reported as given,
    /// at full precision: a value just outside its range must not print as inside it.
    pub fn assess(
        &self,
        fingerprint: Option<&Fingerprint>,
        value_of: impl Fn(&str) -> Option<f64>,
        unseen: &[(&str, String)],
        what: &str,
    ) -> Assessment {
        let mut reasons = Vec::new();
        let mut report = serde_json::Map::new();
        if let (Some((train, min)), Some(fp)) = (&self.neighbours, fingerprint) {
            let nearest = train.iter().map(|t| fp.tanimoto(t)).fold(0.0, f64::max);
            report.insert("nearest_training_similarity".into(), json!(nearest));
            report.insert("min_similarity".into(), json!(min));
            if nearest < *min {
                reasons.push(format!(
                    "the most similar training molecule has Tanimoto similarity {nearest}, \
                     below {min}"
                ));
            }
        }
        if !self.ranges.is_empty() {
            let outside: Vec<Value> = self
                .ranges
                .iter()
                .filter_map(|(name, r)| {
                    let v = value_of(name)?;
                    (v < r.min || v > r.max).then(|| {
                        json!({"name": name, "value": v, "training_min": r.min, "training_max": r.max})
                    })
                })
                .collect();
            if !outside.is_empty() {
                let names: Vec<&str> = outside.iter().filter_map(|o| o["name"].as_str()).collect();
                reasons.push(format!(
                    "outside the training range: {} {}",
                    what,
                    names.join(", ")
                ));
            }
            report.insert(
                format!("{what}s_outside_training_range"),
                Value::Array(outside),
            );
        }
        if !unseen.is_empty() {
            let named: Vec<String> = unseen.iter().map(|(n, v)| format!("{n} = {v:?}")).collect();
            reasons.push(format!(
                "a category not seen in training: {}",
                named.join(", ")
            ));
            let listed: Vec<Value> = unseen
                .iter()
                .map(|(n, v)| json!({"name": n, "value": v}))
                .collect();
            report.insert(
                "categories_not_seen_in_training".into(),
                Value::Array(listed),
            );
        }
        Assessment {
            in_domain: reasons.is_empty(),
            warning: (!reasons.is_empty()).then(|| reasons.join("; ")),
            report: Value::Object(report),
        }
    }
}

impl Domain {
    /// Judges a picture or a sound by its distance to the nearest training example; `Err`
    /// when the training examples cannot be read (the deployment is not ready).
    pub fn assess_example(&self, input: &[Cell]) -> Result<Assessment, String> {
        let Some(e) = &self.examples else {
            return Ok(Assessment {
                in_domain: true,
                warning: None,
                report: json!({}),
            });
        };
        let nearest = e.nearest(input)?;
        let inside = nearest <= e.max_distance;
        Ok(Assessment {
            in_domain: inside,
            warning: (!inside).then(|| {
                format!(
                    "unlike the training examples: the nearest is at distance {nearest}, \
                     beyond {}",
                    e.max_distance
                )
            }),
            report: json!({"nearest_training_distance": nearest, "max_distance": e.max_distance}),
        })
    }
}

pub struct Assessment {
    pub in_domain: bool,
    pub warning: Option<String>,
    /// The evidence: nearest similarity, threshold, values outside their range.
    pub report: Value,
}
