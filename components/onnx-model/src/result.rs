//! One row's result as `/predict` answers it: the prediction (a label and its probabilities,
//! or a value), the property, the input echoed, the applicability domain's verdict and, for a
//! regression whose property has a reliable range, whether the value is inside it.

use crate::graph::Answer;
use crate::{OnnxModel, domain};
use model_manifest::{ClassValues, Output};
use model_sdk::PredictError;
use serde_json::{Map, Value, json};

impl OnnxModel {
    /// The result of one row: the graph's answer, the input echoed, the domain's verdict.
    /// A regression whose property has a reliable range says whether the value is inside it.
    pub(crate) fn answer(
        &self,
        output: Answer,
        echo: Value,
        assessment: domain::Assessment,
    ) -> Result<Value, PredictError> {
        if let Some(bad) = output.values.iter().find(|v| !v.is_finite()) {
            return Err(PredictError::Failed(format!(
                "the model answered {bad} for this input (a missing value it cannot handle, \
                 or a value far outside what it was trained on)"
            )));
        }
        let mut result = match &self.manifest.output {
            Output::Regression { property, unit } => {
                let value = output.values[0];
                let mut r = json!({
                    "prediction": value,
                    "property_type": property,
                    "unit": unit,
                });
                let ranges = &self.manifest.acceptable_ranges.property_ranges;
                if let Some(reliable) = ranges.get(property).map(|p| &p.reliable_range) {
                    r["in_reliable_range"] = json!(reliable.min <= value && value <= reliable.max);
                }
                r
            }
            Output::Classification {
                property,
                unit,
                labels,
                values,
            } => {
                if *values == ClassValues::Probabilities {
                    not_probabilities(&output.values)?;
                }
                // The graph's own label (an SVM's vote can differ from its most probable
                // class); the most probable when it has none, or answers one that is no
                // label.
                let most_probable = || {
                    (0..labels.len())
                        .max_by(|&a, &b| output.values[a].total_cmp(&output.values[b]))
                        .unwrap_or(0)
                };
                // A class number names the manifest's label at that position when the graph
                // numbers its classes (checked when the graph loaded).
                let best = output
                    .label
                    .as_ref()
                    .and_then(|label| {
                        labels
                            .iter()
                            .position(|l| l == label)
                            .or_else(|| label.parse::<usize>().ok().filter(|&k| k < labels.len()))
                    })
                    .unwrap_or_else(most_probable);
                let per_label: Map<String, Value> = labels
                    .iter()
                    .zip(&output.values)
                    .map(|(l, p)| (l.clone(), json!(p)))
                    .collect();
                let mut r = json!({
                    "prediction": labels[best],
                    "property_type": property,
                    "unit": unit,
                });
                r[values.field()] = Value::Object(per_label);
                r
            }
        };
        result["input"] = echo;
        result["in_domain"] = json!(assessment.in_domain);
        result["applicability_domain"] = assessment.report;
        if let Some(w) = assessment.warning {
            result["warning"] = json!(w);
        }
        Ok(result)
    }
}

/// A manifest that says probabilities for a graph answering something else (decision scores,
/// which can be negative and do not sum to 1) would publish them as probabilities: refused,
/// with what to write. The self-test finds it before the model serves.
fn not_probabilities(values: &[f64]) -> Result<(), PredictError> {
    let sum: f64 = values.iter().sum();
    let outside = values.iter().find(|p| !(-1e-6..=1.0 + 1e-6).contains(*p));
    if outside.is_none() && (sum - 1.0).abs() <= 1e-3 {
        return Ok(());
    }
    Err(PredictError::Fault(format!(
        "the graph answers {values:?} per label, which are not probabilities (each within \
         0..1, summing to 1): it answers decision scores (an SVC without probability=True, a \
         LinearSVC, a RidgeClassifier, a hinge-loss SGDClassifier); write \
         values = \"decision_scores\" in model.toml's [output], or retrain for probabilities \
         (SVC(probability=True), CalibratedClassifierCV)"
    )))
}
