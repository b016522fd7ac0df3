//! The graph's answer for each row, read from its outputs: a regression's value, or a
//! classifier's label (the graph's own label output, which onnxruntime answers; an SVM's vote
//! can differ from its most probable class) and probabilities. Numbers keep the precision the
//! graph computed: a float32 becomes the shortest decimal that reads back as the same float32
//! (`0.00020612`, not `0.0002` nor `0.000206120003`), a double stays a double.

use tract_onnx::prelude::*;

/// What the component reads from the graph's outputs.
#[derive(Debug, Clone)]
pub enum Reading {
    /// One number: output 0, first value.
    Value,
    /// A classifier with these labels: its label output (when it has one) and the floating-
    /// point output with a column per label (probabilities).
    Classes(Vec<String>),
    /// The same, the columns holding decision scores (`values = "decision_scores"`).
    Scores(Vec<String>),
}

/// One row's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The label the graph chose (a classifier with a label output).
    pub label: Option<String>,
    /// The value (regression), or a probability per label.
    pub values: Vec<f64>,
}

/// Where the answer is in the graph's outputs.
#[derive(Debug, Clone)]
pub struct Outputs {
    values: usize,
    label: Option<usize>,
    /// A binary classifier's one decision score (scikit-learn's `decision_function`: above 0
    /// for the second label), answered as `[-s, s]`, as an SVC's two are.
    one_score: bool,
}

/// `x` as the shortest decimal that reads back as `x`, as a double.
pub fn exact(x: f32) -> f64 {
    format!("{x}").parse().unwrap_or(f64::from(x))
}

impl Outputs {
    /// Finds the outputs in a plan for one row.
    pub fn find(model: &TypedModel, reading: &Reading) -> Result<Self, String> {
        let facts: Vec<TypedFact> = (0..model.outputs.len())
            .map(|i| model.output_fact(i).cloned().map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let columns = |f: &TypedFact| f.shape.as_concrete().map(|s| s.iter().product::<usize>());
        let is_float = |f: &TypedFact| matches!(f.datum_type, DatumType::F32 | DatumType::F64);
        match reading {
            Reading::Value => match facts.first() {
                Some(f) if is_float(f) && columns(f) == Some(1) => Ok(Self {
                    values: 0,
                    label: None,
                    one_score: false,
                }),
                Some(f) => Err(format!(
                    "a regression reads one number per row from the graph's first output, \
                     which is {f:?}"
                )),
                None => Err("the graph has no outputs".into()),
            },
            Reading::Classes(labels) | Reading::Scores(labels) => {
                let n = labels.len();
                let scores = matches!(reading, Reading::Scores(_));
                let of_columns = |k| {
                    facts
                        .iter()
                        .position(|f| is_float(f) && columns(f) == Some(k))
                };
                let one_score =
                    scores && n == 2 && of_columns(2).is_none() && of_columns(1).is_some();
                let values = of_columns(if one_score { 1 } else { n }).ok_or_else(|| {
                    format!(
                        "a classifier with {n} labels needs a float output of {n} columns \
                             (probabilities, or a ZipMap of them); the graph's outputs are \
                             {facts:?}"
                    )
                })?;
                // Integer labels are int64 in the graph; tract may carry a cast to int64 as
                // its dimension type (TDim), which reads back as the same integers.
                let label = facts.iter().position(|f| {
                    matches!(
                        f.datum_type,
                        DatumType::I64 | DatumType::I32 | DatumType::TDim | DatumType::String
                    ) && columns(f) == Some(1)
                });
                Ok(Self {
                    values,
                    label,
                    one_score,
                })
            }
        }
    }

    /// Each of `rows` rows' answer from the graph's `outputs`.
    pub fn read(&self, outputs: &[TValue], rows: usize) -> Result<Vec<Answer>, String> {
        let values = floats(&outputs[self.values])?;
        let per_row = values.len() / rows.max(1);
        if per_row == 0 || per_row * rows != values.len() {
            return Err(format!(
                "the graph answered {} values for {rows} rows",
                values.len()
            ));
        }
        let labels = match self.label {
            Some(i) => {
                let labels = texts(&outputs[i])?;
                if labels.len() != rows {
                    return Err(format!(
                        "the graph answered {} labels for {rows} rows",
                        labels.len()
                    ));
                }
                Some(labels)
            }
            None => None,
        };
        Ok(values
            .chunks(per_row)
            .enumerate()
            .map(|(i, v)| Answer {
                label: labels.as_ref().map(|l| l[i].clone()),
                values: match (self.one_score, v) {
                    (true, [s]) => vec![-s, *s],
                    _ => v.to_vec(),
                },
            })
            .collect())
    }
}

fn floats(t: &TValue) -> Result<Vec<f64>, String> {
    let err = |e: TractError| e.to_string();
    match t.datum_type() {
        DatumType::F64 => Ok(t
            .to_plain_array_view::<f64>()
            .map_err(err)?
            .iter()
            .copied()
            .collect()),
        _ => {
            let t = t.cast_to::<f32>().map_err(err)?;
            let view = t.to_plain_array_view::<f32>().map_err(err)?;
            Ok(view.iter().map(|&x| exact(x)).collect())
        }
    }
}

fn texts(t: &TValue) -> Result<Vec<String>, String> {
    let err = |e: TractError| e.to_string();
    match t.datum_type() {
        DatumType::String => Ok(t
            .to_plain_array_view::<String>()
            .map_err(err)?
            .iter()
            .cloned()
            .collect()),
        _ => {
            let t = t.cast_to::<i64>().map_err(err)?;
            Ok(t.to_plain_array_view::<i64>()
                .map_err(err)?
                .iter()
                .map(i64::to_string)
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::exact;

    #[test]
    fn a_float32_keeps_every_digit_it_has_and_no_more() {
        assert_eq!(exact(0.000_206_12_f32), 0.000_206_12);
        assert_eq!(exact(0.000_84_f32), 0.000_84);
        assert_eq!(exact(1.0e-7_f32), 1.0e-7);
        assert_eq!(exact(151.786_58_f32), 151.786_58);
        for x in [
            0.1_f32,
            1.0 / 3.0,
            123_456.79,
            -2.5e-12,
            f32::MAX,
            f32::MIN_POSITIVE,
        ] {
            assert_eq!(exact(x) as f32, x, "{x} reads back");
            let text = serde_json::to_string(&exact(x)).unwrap();
            assert_eq!(text.parse::<f32>().unwrap(), x, "{text} is {x}");
            assert!(text.len() <= format!("{x:e}").len() + 4, "{text} is short");
        }
    }
}
