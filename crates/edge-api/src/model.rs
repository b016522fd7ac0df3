//! Interface B: the model runtime records (spec 2.3-2.12).
//!
//! Field names are the spec's, letter for letter. Open-ended parts (prediction `data` and
//! `results`, `output_schema`, example inputs) are JSON values.

use crate::routes::Route;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The `x-error-code` of a `/predict` answer that ran but failed (200, `success: false`):
/// the specification's answer has no `error_code`, so the model SDK names it in the header
/// alone, where a host counts failed predictions without reading bodies.
pub const PREDICTION_FAILED: &str = "prediction_failed";

/// Service version string every v1.2 deployment reports (spec 9).
/// Interface B (spec 4.2). `/shutdown` is answered by the component (403) unless the native
/// host serves it itself.
pub const ROUTES: [Route; 11] = [
    Route {
        path: "/health",
        methods: &["GET"],
    },
    Route {
        path: "/capabilities",
        methods: &["GET"],
    },
    Route {
        path: "/acceptable_ranges",
        methods: &["GET"],
    },
    Route {
        path: "/predict",
        methods: &["POST"],
    },
    Route {
        path: "/info",
        methods: &["GET"],
    },
    Route {
        path: "/metrics",
        methods: &["GET"],
    },
    Route {
        path: "/citation",
        methods: &["GET"],
    },
    Route {
        path: "/test_examples",
        methods: &["GET"],
    },
    Route {
        path: "/shutdown",
        methods: &["POST"],
    },
    Route {
        path: "/openapi.json",
        methods: &["GET"],
    },
    // Not in the specification: a model's evidence of quality on its test set, for the
    // console's plots; 404 where a model has none.
    Route {
        path: "/evidence",
        methods: &["GET"],
    },
];

pub const SPEC_VERSION: &str = "1.2.0";

/// The key-value store label of state that lives as long as one deployment (a model's
/// counters): the hosts keep it in memory; on Spin, which grants no such label by default,
/// the model keeps that state in `default`.
pub const DEPLOYMENT_STORE: &str = "deployment";

/// Attribution the spec requires on startup of a model deployment (spec 9, rule 7).
pub const ATTRIBUTION: &str = "Lightweight AI Model API Runtime Specification 1.2, (c) 2025 Paramus Transform LLC, MIT License";

/// Registration notice (spec 1, 5).
pub const REGISTRATION_NOTICE: &str = "Every deployment of the model runtime interface (B) must be \
registered with Paramus Transform LLC (model name, deployment environment, intended use). Use \
without registration, and use for unlawful, harmful, unethical or malicious purposes, is prohibited.";

/// `GET /health` (2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub model: String,
    pub version: String,
    /// The deployed version of the model (not the specification's `version`), where the
    /// host names one (`runtime-host up`: a digest of the model's files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_version: Option<String>,
}

/// `GET /capabilities` (2.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    pub model: String,
    pub capabilities: Vec<Capability>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capability {
    pub name: String,
    pub input_types: Vec<InputType>,
    /// Output field name mapped to an output type name.
    pub output_schema: BTreeMap<String, OutputType>,
    pub description: String,
}

/// Input type names of 2.6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    Text,
    Image,
    Audio,
    Tabular,
}

/// Output type names of 2.7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputType {
    Array,
    Object,
    Float,
    String,
}

/// `GET /acceptable_ranges` (2.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceptableRanges {
    pub model: String,
    pub version: String,
    pub description: String,
    pub property_ranges: BTreeMap<String, PropertyRange>,
    pub chemical_scope: ChemicalScope,
    pub usage_recommendations: Vec<String>,
    /// Beyond the specification, for image and audio models: the input the model takes
    /// (size, colour, sample rate, length, limits) and what it was trained on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyRange {
    pub property_name: String,
    pub unit: String,
    pub training_range: TrainingRange,
    pub reliable_range: ReliableRange,
    pub training_samples: u64,
    pub validation_metrics: ValidationMetrics,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingRange {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliableRange {
    pub min: f64,
    pub max: f64,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationMetrics {
    #[serde(rename = "R2")]
    pub r2: String,
    pub typical_error: String,
    /// Further keys are allowed (2.5).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChemicalScope {
    pub supported_features: Vec<String>,
    pub limitations: Vec<String>,
}

/// `POST /predict` body (2.6). `input_type` is kept as a string so that an unknown type is
/// reported as `unsupported_input_type`, not as a parse failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionRequest {
    pub input_type: String,
    pub data: Map<String, Value>,
}

/// `POST /predict` answer (2.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionResponse {
    pub success: bool,
    pub model_name: String,
    pub results: Value,
    pub computation_time_ms: f64,
    pub error_message: Option<String>,
}

/// `GET /info` (2.8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    pub description: String,
    pub license: String,
    pub citation: String,
    pub maintainer: String,
    /// The deployed version of the model, where the host names one (see [`Health`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_version: Option<String>,
}

/// `GET /metrics` (2.9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub uptime_s: f64,
    pub requests_served: u64,
    pub avg_latency_ms: f64,
    pub last_error: Option<String>,
}

/// `GET /citation` (2.10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub paper_citation: String,
    pub software_bibtex: String,
}

/// `GET /test_examples` (2.11).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestExamples {
    pub examples: Vec<Example>,
    pub usage_instructions: UsageInstructions,
    pub expected_output: Value,
    pub notes: Vec<String>,
}

/// An example: `name`, `description`, `category`, plus one model-specific input field
/// (`smiles`, `text`, `image_url`, ...), kept in `input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    pub name: String,
    pub description: String,
    pub category: String,
    #[serde(flatten)]
    pub input: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageInstructions {
    pub endpoint: String,
    pub method: String,
    pub body_format: Value,
}

/// `POST /shutdown` (2.12).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownResponse {
    pub success: bool,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_keeps_model_specific_field() {
        let e: Example = serde_json::from_str(
            r#"{"name": "aspirin", "smiles": "CC(=O)Oc1ccccc1C(=O)O", "description": "d", "category": "drug"}"#,
        )
        .unwrap();
        assert_eq!(e.input["smiles"], "CC(=O)Oc1ccccc1C(=O)O");
        let back = serde_json::to_value(&e).unwrap();
        assert_eq!(back["smiles"], "CC(=O)Oc1ccccc1C(=O)O");
    }

    #[test]
    fn validation_metrics_use_spec_key_r2() {
        let m = ValidationMetrics {
            r2: "0.9-0.95".into(),
            typical_error: "0.1".into(),
            extra: Map::new(),
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["R2"], "0.9-0.95");
    }
}

/// `GET /evidence` (this implementation's, not the specification's): how the served model
/// does on its held-out test set, computed by the model itself, for the console's plots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What the test set is (source, size, how it was held out).
    pub test_set: String,
    pub property: String,
    pub unit: String,
    /// Regression: predicted against measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<Parity>,
    /// Regression on molecules: residuals against similarity to the training set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residuals: Option<Residuals>,
    /// Classification: true labels (rows) against predicted ones (columns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusion: Option<Confusion>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parity {
    pub points: Vec<ParityPoint>,
    pub rmse: f64,
    pub mae: f64,
    pub r2: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParityPoint {
    pub name: String,
    pub measured: f64,
    pub predicted: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Residuals {
    /// (Tanimoto similarity of the nearest training molecule, predicted - measured).
    pub points: Vec<ResidualPoint>,
    /// The applicability domain's similarity threshold.
    pub threshold: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResidualPoint {
    pub name: String,
    pub similarity: f64,
    pub residual: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confusion {
    pub labels: Vec<String>,
    /// `counts[true][predicted]`.
    pub counts: Vec<Vec<u32>>,
    pub accuracy: f64,
}
