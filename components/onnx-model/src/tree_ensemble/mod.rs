//! The ONNX-ML tree-ensemble operators, `TreeEnsembleRegressor` and `TreeEnsembleClassifier`,
//! for tract: what scikit-learn's random forests and gradient boosting export to (skl2onnx), so
//! a forest trained the usual way deploys unchanged.
//!
//! tract ships a classifier only, and its kernel reaches a leaf's weights by skipping through
//! every earlier leaf: 15 ms per row on a 100-tree regressor forest, 40-80 ms on a 100-tree
//! classifier, measured in this component. Both operators here read the attributes (ONNX-ML
//! operator spec, `ai.onnx.ml` opsets 1-3) into one flat [`Forest`] whose leaves hold the range
//! of their weights: microseconds for the same forests.
//!
//! Thresholds and weights are kept as `f64`: an export for double inputs gives them as
//! doubles (`nodes_values_as_tensor`, `target_weights_as_tensor`, ...). As onnxruntime, a
//! forest of doubles, or a double input, is compared and summed in `f64`; otherwise in `f32`
//! (a float threshold compared with a float input in `f64` is the same comparison).

mod classifier;
mod parse;
mod regressor;

use tract_onnx::model::OnnxOpRegister;
use tract_onnx::tract_hir::internal::*;

pub fn register(ops: &mut OnnxOpRegister) {
    ops.insert("TreeEnsembleRegressor", regressor::parse);
    ops.insert("TreeEnsembleClassifier", classifier::parse);
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    Leq,
    Lt,
    Geq,
    Gt,
    Eq,
    Neq,
}

#[derive(Debug, Clone, Copy)]
enum Node {
    Branch {
        feature: u32,
        threshold: f64,
        cmp: Cmp,
        nan_goes_true: bool,
        /// Rows in [`Forest::nodes`].
        if_true: u32,
        if_false: u32,
    },
    /// The leaf's (target, weight) pairs: `weights[start..end]`.
    Leaf { start: u32, end: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Aggregate {
    Sum,
    Average,
    Min,
    Max,
}

/// A tree ensemble, flattened: every tree's nodes in one array.
#[derive(Debug)]
struct Forest {
    roots: Vec<u32>,
    nodes: Vec<Node>,
    weights: Vec<(u32, f64)>,
    /// Outputs per row: targets of a regressor, classes of a classifier.
    n_outputs: usize,
    n_features: usize,
    aggregate: Aggregate,
    base_values: Vec<f64>,
    /// The attributes held doubles: sums are in `f64` whatever the input.
    double: bool,
}

/// The number type scores are summed in: `f32`, or `f64` for doubles.
trait Real: Copy + PartialOrd + std::ops::Add<Output = Self> {
    fn of(x: f64) -> Self;
    fn get(self) -> f64;
}

impl Real for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn get(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn get(self) -> f64 {
        self
    }
}

/// One row's outputs, before base values and post-transform: each output's aggregated score
/// (in the precision summed in) and whether any leaf reached gave it a weight.
struct Scores {
    values: Vec<f64>,
    hit: Vec<bool>,
}

impl Forest {
    /// The leaf `tree` reaches for `row`.
    fn leaf(&self, tree: usize, row: &[f64]) -> (u32, u32) {
        let mut at = self.roots[tree] as usize;
        loop {
            match self.nodes[at] {
                Node::Leaf { start, end } => return (start, end),
                Node::Branch {
                    feature,
                    threshold,
                    cmp,
                    nan_goes_true,
                    if_true,
                    if_false,
                } => {
                    let x = row[feature as usize];
                    let go_true = if x.is_nan() {
                        nan_goes_true
                    } else {
                        match cmp {
                            Cmp::Leq => x <= threshold,
                            Cmp::Lt => x < threshold,
                            Cmp::Geq => x >= threshold,
                            Cmp::Gt => x > threshold,
                            Cmp::Eq => x == threshold,
                            Cmp::Neq => x != threshold,
                        }
                    };
                    at = if go_true { if_true } else { if_false } as usize;
                }
            }
        }
    }

    /// One row's scores, aggregated over the trees in `R`; an output no leaf reached is 0.
    fn eval_row<R: Real>(&self, row: &[f64], out: &mut [R], hit: &mut [bool]) {
        out.fill(R::of(0.0));
        hit.fill(false);
        for tree in 0..self.roots.len() {
            let (from, to) = self.leaf(tree, row);
            for &(target, w) in &self.weights[from as usize..to as usize] {
                let t = target as usize;
                let w = R::of(w);
                out[t] = match self.aggregate {
                    _ if !hit[t] => w,
                    Aggregate::Sum | Aggregate::Average => out[t] + w,
                    Aggregate::Min if w < out[t] => w,
                    Aggregate::Max if w > out[t] => w,
                    _ => out[t],
                };
                hit[t] = true;
            }
        }
        if self.aggregate == Aggregate::Average {
            let n = self.roots.len() as f64;
            out.iter_mut().for_each(|o| *o = R::of(o.get() / n));
        }
    }

    /// Whether sums are in `f64` for this input.
    fn in_double(&self, input: &TValue) -> bool {
        self.double || input.datum_type() == DatumType::F64
    }

    /// `a + b` in the precision of the sums.
    fn add(double: bool, a: f64, b: f64) -> f64 {
        if double {
            a + b
        } else {
            f64::from(a as f32 + b as f32)
        }
    }

    /// The input of an operator as rows of `f64`, checked to hold every feature the trees
    /// read; (rows, the values). A double input is kept as is; any other numeric input is
    /// read as `f32`, as onnxruntime's ONNX-ML kernels do.
    fn rows(&self, input: &TValue, op: &str) -> TractResult<(usize, Vec<f64>)> {
        let shape = input.shape().to_vec();
        if shape.len() != 2 || shape[1] < self.n_features {
            bail!(
                "{op}: input of shape {shape:?}; the trees read {} features",
                self.n_features
            );
        }
        let values = match input.datum_type() {
            DatumType::F64 => input
                .to_plain_array_view::<f64>()?
                .iter()
                .copied()
                .collect(),
            DatumType::F32 | DatumType::I64 | DatumType::I32 => {
                let as_f32 = input.cast_to::<f32>()?;
                let view = as_f32.to_plain_array_view::<f32>()?;
                view.iter().map(|&x| f64::from(x)).collect()
            }
            other => bail!("{op}: input of type {other:?}; expected float, double, int64 or int32"),
        };
        Ok((shape[0], values))
    }

    /// Every row's scores, `n_outputs` per row.
    fn eval(&self, rows: usize, values: &[f64], double: bool) -> Vec<Scores> {
        let width = values.len().checked_div(rows).unwrap_or(0).max(1);
        let mut hit = vec![false; self.n_outputs];
        values
            .chunks(width)
            .take(rows)
            .map(|row| {
                let values = if double {
                    let mut out = vec![0f64; self.n_outputs];
                    self.eval_row(row, &mut out, &mut hit);
                    out
                } else {
                    let mut out = vec![0f32; self.n_outputs];
                    self.eval_row(row, &mut out, &mut hit);
                    out.into_iter().map(f64::from).collect()
                };
                Scores {
                    values,
                    hit: hit.clone(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
#[rustfmt::skip]
#[allow(clippy::excessive_precision, clippy::type_complexity)]
mod expected;
#[cfg(test)]
mod tests;
