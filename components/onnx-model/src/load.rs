//! Reading a model directory: `model.toml` parsed, the input's reader built (a featurizer, the
//! tabular features, a picture's or sound's preparation) and the files the applicability
//! domain needs read. The graph itself is read later, by its first use.

use crate::domain::{self, Domain};
use crate::inputs::{self, Reader};
use crate::{OnnxModel, manifest};
use model_manifest::{Input, Manifest};
use std::path::Path;

/// A file of the model directory; the error names it.
pub(crate) fn read(dir: &Path, file: &str) -> Result<Vec<u8>, String> {
    let path = dir.join(file);
    std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
}

impl OnnxModel {
    /// Loads a model directory; errors start with the file at fault.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let toml_path = dir.join("model.toml");
        let text = String::from_utf8(read(dir, "model.toml")?)
            .map_err(|_| format!("{}: not UTF-8 text", toml_path.display()))?;
        let manifest =
            Manifest::parse(&text).map_err(|e| format!("{}: {e}", toml_path.display()))?;
        let in_toml = |e: String| format!("{}: {e}", toml_path.display());
        let d = &manifest.applicability_domain;
        let (reader, domain) = match &manifest.input {
            Input::Text {
                featurizer,
                max_tokens,
            } => {
                let morgan = (featurizer.morgan_bits > 0).then_some(chem::fingerprint::Morgan {
                    radius: featurizer.morgan_radius,
                    bits: featurizer.morgan_bits,
                });
                let f = chem::features::Featurizer::new(morgan, &featurizer.descriptors)
                    .map_err(|e| in_toml(format!("input.featurizer.descriptors: {e}")))?;
                let neighbours = match (&d.fingerprints, d.min_similarity) {
                    (Some(file), Some(min)) => {
                        let bytes = read(dir, file)?;
                        let fps = domain::read_fingerprints(featurizer.morgan_bits, &bytes)
                            .map_err(|e| format!("{}: {e}", dir.join(file).display()))?;
                        Some((fps, min))
                    }
                    _ => None,
                };
                let ranges = ordered_ranges(&featurizer.descriptors, &d.descriptor_ranges);
                let reader = Reader::Text {
                    featurizer: f,
                    max_tokens: *max_tokens,
                };
                (
                    reader,
                    Domain {
                        neighbours,
                        ranges,
                        examples: None,
                    },
                )
            }
            Input::Tabular {
                features,
                categories,
            } => {
                let ranges = ordered_ranges(features, &d.feature_ranges);
                let reader = Reader::Tabular {
                    names: features.clone(),
                    categories: categories.clone(),
                };
                let domain = Domain {
                    neighbours: None,
                    ranges,
                    examples: None,
                };
                (reader, domain)
            }
            Input::Image { image } => {
                media_reader(dir, d, inputs::media::Kind::Image(image.clone()))?
            }
            Input::Audio { audio } => media_reader(
                dir,
                d,
                inputs::media::Kind::Audio(media::audio::Featurizer::new(audio)),
            )?,
        };
        Ok(Self {
            manifest,
            reader,
            graph: std::sync::OnceLock::new(),
            domain,
            dir: dir.to_owned(),
            test_set: std::sync::OnceLock::new(),
            evidence: std::sync::OnceLock::new(),
        })
    }
}

/// The reader and domain of a picture or sound model (its training examples are read by the
/// first prediction).
fn media_reader(
    dir: &Path,
    d: &manifest::Domain,
    kind: inputs::media::Kind,
) -> Result<(Reader, Domain), String> {
    let reader = Reader::Media(kind);
    let examples = match (&d.training_features, d.max_distance) {
        (Some(file), Some(max)) => Some(domain::Examples::new(dir.join(file), reader.width(), max)),
        _ => None,
    };
    let domain = Domain {
        neighbours: None,
        ranges: Vec::new(),
        examples,
    };
    Ok((reader, domain))
}

/// The ranges named in `order`, in that order.
fn ordered_ranges(
    order: &[String],
    ranges: &std::collections::BTreeMap<String, manifest::Range>,
) -> Vec<(String, manifest::Range)> {
    order
        .iter()
        .filter_map(|n| ranges.get(n).map(|r| (n.clone(), *r)))
        .collect()
}
