//! `model.toml`: everything the specification asks a model to say about itself, plus how its
//! ONNX graph is fed and read. Sections named after an endpoint hold that endpoint's record as
//! the specification spells it (`[info]`, `[citation]`, `[acceptable_ranges]`,
//! `[test_examples]`); the rest says how to build the input (`[input]`), what the output means
//! (`[output]`) and when a prediction is trusted (`[applicability_domain]`).
//!
//! Parsing is strict: a missing field or a field of the wrong type is an error naming the
//! field and its line, and so is an unknown field in the sections defined here (the endpoint
//! records keep their wire types, which allow further keys), so a model directory fails before
//! it serves.

use edge_api::model::{ChemicalScope, Citation, Example, ModelInfo, PropertyRange};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub info: ModelInfo,
    pub citation: Citation,
    pub capability: CapabilityText,
    pub input: Input,
    pub output: Output,
    #[serde(default)]
    pub onnx: OnnxFile,
    pub acceptable_ranges: RangesText,
    #[serde(default)]
    pub applicability_domain: Domain,
    pub test_examples: ExamplesText,
    #[serde(default)]
    pub evidence: Option<EvidenceSpec>,
    #[serde(default)]
    pub network: Network,
}

/// `[network]`: the hosts the model's component may send HTTP requests to, Spin's
/// `allowed_outbound_hosts` (`<scheme>://<host>[:<port>]`); none by default, as under Spin.
/// The host checks the entries (this crate is the component's too, which needs none).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    #[serde(default)]
    pub allowed_outbound_hosts: Vec<String>,
}

/// `[evidence]`: the held-out test set the model is judged on (`GET /evidence`, the
/// console's plots). A tab-separated file with a header: the input (a `smiles` column, or
/// one column per tabular feature), the measured value or true label, optionally a name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSpec {
    pub test_set: String,
    /// Says what the test set is (source, size, how it was held out).
    pub description: String,
    /// The column of measured values (regression) or true labels (classification).
    pub measured: String,
    /// The column naming each row; rows are numbered without one.
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityText {
    pub name: String,
    pub description: String,
}

/// What a request's `data` holds and how it becomes the graph's input vector.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Input {
    /// `data.text` (or `data.smiles`): a SMILES, featurized by `chem`.
    Text {
        featurizer: FeaturizerSpec,
        #[serde(default = "default_max_tokens")]
        max_tokens: usize,
    },
    /// `data.features`: an object of the named features, or an array in this order.
    Tabular {
        features: Vec<String>,
        /// The features whose values are text (categories), each with the values seen in
        /// training: a request sends one as a string; one never seen is answered, outside the
        /// applicability domain. Every other feature is a number (or `null`: missing, for a
        /// model with an imputer).
        #[serde(default)]
        categories: BTreeMap<String, Vec<String>>,
    },
    /// `data.image` (base64) or `data.image_url`: a picture, made the graph's tensor as
    /// `[input.image]` says.
    Image { image: ImageSpec },
    /// `data.audio` (base64) or `data.audio_url`: a sound, made the graph's tensor as
    /// `[input.audio]` says.
    Audio { audio: AudioSpec },
}

impl Input {
    /// The largest request body a picture or sound model reads ([`body_for`] its
    /// `max_bytes`); `None` for text and tables, which the default cap serves.
    pub fn max_body(&self) -> Option<usize> {
        match self {
            Input::Image { image } => Some(body_for(image.max_bytes)),
            Input::Audio { audio } => Some(body_for(audio.max_bytes)),
            _ => None,
        }
    }
}

fn default_max_tokens() -> usize {
    1024
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeaturizerSpec {
    #[serde(default = "default_radius")]
    pub morgan_radius: u32,
    /// 0 leaves the fingerprint out.
    #[serde(default)]
    pub morgan_bits: usize,
    #[serde(default)]
    pub descriptors: Vec<String>,
}

fn default_radius() -> u32 {
    2
}

/// What the graph's output means.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Output {
    /// The graph's first output holds one number per input row.
    Regression { property: String, unit: String },
    /// The graph's floating-point output of one column per label holds class probabilities
    /// (skl2onnx with `zipmap` off), in the order of `labels`.
    Classification {
        property: String,
        #[serde(default)]
        unit: String,
        labels: Vec<String>,
        /// What the graph's column per label holds: probabilities (answered as
        /// `probabilities`), or decision scores (`decision_scores`: an SVC without
        /// `probability=True`, a LinearSVC, a RidgeClassifier, a hinge-loss SGD classifier).
        #[serde(default)]
        values: ClassValues,
    },
}

/// What a classifier's graph answers per label.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassValues {
    #[default]
    Probabilities,
    DecisionScores,
}

impl ClassValues {
    /// The answer's field holding them.
    pub fn field(self) -> &'static str {
        match self {
            ClassValues::Probabilities => "probabilities",
            ClassValues::DecisionScores => "decision_scores",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnnxFile {
    #[serde(default = "default_onnx_file")]
    pub file: String,
}

impl Default for OnnxFile {
    fn default() -> Self {
        Self {
            file: default_onnx_file(),
        }
    }
}

fn default_onnx_file() -> String {
    "model.onnx".into()
}

/// `/acceptable_ranges` without the fields the component fills in (`model`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangesText {
    pub version: String,
    pub description: String,
    pub property_ranges: BTreeMap<String, PropertyRange>,
    pub chemical_scope: ChemicalScope,
    pub usage_recommendations: Vec<String>,
}

/// When a prediction is inside the model's applicability domain.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Domain {
    /// Packed training fingerprints (`morgan_bits / 8` bytes per molecule, bit `i` in byte
    /// `i / 8` at position `i % 8`), for the nearest-neighbour similarity.
    pub fingerprints: Option<String>,
    /// Nearest training molecule below this Tanimoto similarity: outside the domain.
    pub min_similarity: Option<f64>,
    /// Training ranges of descriptors (text input); a value outside: outside the domain.
    #[serde(default)]
    pub descriptor_ranges: BTreeMap<String, Range>,
    /// Training ranges of features (tabular input).
    #[serde(default)]
    pub feature_ranges: BTreeMap<String, Range>,
    /// The training set's inputs as the graph took them (image and audio input):
    /// little-endian `f32`, one row of the tensor's size per example, for the distance to the
    /// nearest training example.
    pub training_features: Option<String>,
    /// Nearest training example farther than this (Euclidean, in the graph's input space):
    /// outside the domain.
    pub max_distance: Option<f64>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    /// Documents the training data; the domain rule uses min and max only.
    #[serde(default)]
    #[allow(dead_code)]
    pub mean: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExamplesText {
    pub examples: Vec<Example>,
    #[serde(default)]
    pub notes: Vec<String>,
}

mod media;
mod parse;

pub use media::{AudioFeatures, AudioSpec, Color, Fit, ImageSpec, Layout, LogMel, body_for};

#[cfg(test)]
mod tests;
