//! The ONNX-ML tree-ensemble operators, `TreeEnsembleRegressor` and `TreeEnsembleClassifier`,
//! for tract: what scikit-learn's random forests and gradient boosting export to (skl2onnx), so
//! a forest trained the usual way deploys unchanged.
//!
//! tract ships a classifier only, and its kernel reaches a leaf's weights by skipping through
//! every earlier leaf: 15 ms per row on a 100-tree regressor forest, 40-80 ms on a 100-tree
//! classifier, measured in this component. Both operators here read the attributes (ONNX-ML
//! operator spec, `ai.onnx.ml` opsets 1-3) into one flat [`Forest`] whose leaves hold the range
//! of their weights: microseconds for the same forests.

mod classifier;
mod op;
mod regressor;

use op::{Ensemble, expanded};

use tract_onnx::model::OnnxOpRegister;
use tract_onnx::pb::NodeProto;
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
        threshold: f32,
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
    weights: Vec<(u32, f32)>,
    /// Outputs per row: targets of a regressor, classes of a classifier.
    n_outputs: usize,
    n_features: usize,
    aggregate: Aggregate,
    base_values: Vec<f32>,
}

impl Forest {
    /// The leaf `tree` reaches for `row`.
    fn leaf(&self, tree: usize, row: &[f32]) -> (u32, u32) {
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

    /// One row's outputs, aggregated over the trees, plus the base values.
    fn eval_row(&self, row: &[f32], out: &mut [f32]) {
        let start = match self.aggregate {
            Aggregate::Min => f32::INFINITY,
            Aggregate::Max => f32::NEG_INFINITY,
            _ => 0.0,
        };
        out.fill(start);
        for tree in 0..self.roots.len() {
            let (from, to) = self.leaf(tree, row);
            for &(target, w) in &self.weights[from as usize..to as usize] {
                let o = &mut out[target as usize];
                *o = match self.aggregate {
                    Aggregate::Sum | Aggregate::Average => *o + w,
                    Aggregate::Min => o.min(w),
                    Aggregate::Max => o.max(w),
                };
            }
        }
        for (t, o) in out.iter_mut().enumerate() {
            if self.aggregate == Aggregate::Average {
                *o /= self.roots.len() as f32;
            }
            *o += self.base_values.get(t).copied().unwrap_or(0.0);
        }
    }
}

impl Forest {
    /// The input of an operator as rows of `f32`, checked to hold every feature the trees
    /// read; (rows, the values).
    fn rows(&self, input: TValue, op: &str) -> TractResult<(usize, Vec<f32>)> {
        let input = input.cast_to::<f32>()?.into_owned();
        let shape = input.shape().to_vec();
        if shape.len() != 2 || shape[1] < self.n_features {
            bail!(
                "{op}: input of shape {shape:?}; the trees read {} features",
                self.n_features
            );
        }
        let view = input.to_plain_array_view::<f32>()?;
        let values = view.as_slice().context("input is not contiguous")?.to_vec();
        Ok((shape[0], values))
    }

    /// Every row's outputs, `n_outputs` per row.
    fn eval(&self, rows: usize, values: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; rows * self.n_outputs];
        if let Some(width) = values.len().checked_div(rows).filter(|&w| w > 0) {
            for (row, o) in values.chunks(width).zip(out.chunks_mut(self.n_outputs)) {
                self.eval_row(row, o);
            }
        }
        out
    }
}

fn comparison(mode: &str) -> TractResult<Option<Cmp>> {
    Ok(Some(match mode {
        "LEAF" => return Ok(None),
        "BRANCH_LEQ" => Cmp::Leq,
        "BRANCH_LT" => Cmp::Lt,
        "BRANCH_GTE" => Cmp::Geq,
        "BRANCH_GT" => Cmp::Gt,
        "BRANCH_EQ" => Cmp::Eq,
        "BRANCH_NEQ" => Cmp::Neq,
        other => bail!("tree ensemble: unknown node mode {other}"),
    }))
}

/// An integer attribute of ids or indices, borrowed from the node (a forest's attributes run
/// to megabytes; copies of them would stay in the instance's memory for good).
#[derive(Clone, Copy)]
struct Indices<'a>(&'a [i64]);

impl Indices<'_> {
    fn at(&self, i: usize) -> usize {
        self.0[i] as usize
    }
}

/// The attribute `name`, checked to hold `len` values from 0 to `u32::MAX`.
fn indices<'a>(node: &'a NodeProto, name: &str, len: usize) -> TractResult<Indices<'a>> {
    let values = node.get_attr_slice::<i64>(name)?;
    if values.len() != len {
        bail!(
            "tree ensemble: {name} has {} values, expected {len}",
            values.len()
        );
    }
    if let Some(v) = values
        .iter()
        .find(|&&v| !(0..=i64::from(u32::MAX)).contains(&v))
    {
        bail!("tree ensemble: {name} holds {v}, not an id");
    }
    Ok(Indices(values))
}

/// Positions 0..len in the order of `key`, or `None` when they already are.
fn ordered(len: usize, key: impl Fn(usize) -> (usize, usize)) -> Option<Vec<usize>> {
    if (1..len).all(|i| key(i - 1) <= key(i)) {
        return None;
    }
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by_key(|&i| key(i));
    Some(order)
}

/// Reads the nodes and the leaf weights (attributes `{prefix}_ids`, `_treeids`, `_nodeids`,
/// `_weights`: `target` for a regressor, `class` for a classifier) into a [`Forest`]. `op`
/// names the operator in errors.
fn parse_forest(
    node: &NodeProto,
    op: &str,
    prefix: &str,
    n_outputs: usize,
    aggregate: Aggregate,
) -> TractResult<Forest> {
    let leaf = |name: &str| format!("{prefix}_{name}");
    let features = node.get_attr_slice::<i64>("nodes_featureids")?;
    let n = features.len();
    let tree_of = indices(node, "nodes_treeids", n)?;
    let id_of = indices(node, "nodes_nodeids", n)?;
    let feature_of = indices(node, "nodes_featureids", n)?;
    let true_of = indices(node, "nodes_truenodeids", n)?;
    let false_of = indices(node, "nodes_falsenodeids", n)?;
    let threshold_of = node.get_attr_slice::<f32>("nodes_values")?;
    let modes = node.get_attr_vec::<&str>("nodes_modes")?;
    if threshold_of.len() != n || modes.len() != n {
        bail!("{op}: node attributes differ in length");
    }
    let nan_true = node
        .get_attr_opt_slice::<i64>("nodes_missing_value_tracks_true")?
        .map(|s| s.iter().map(|&v| v != 0).collect::<Vec<_>>())
        .unwrap_or_else(|| vec![false; n]);
    let leaf_ids = node.get_attr_slice::<i64>(&leaf("ids"))?.len();
    let leaf_tree = indices(node, &leaf("treeids"), leaf_ids)?;
    let leaf_node = indices(node, &leaf("nodeids"), leaf_ids)?;
    let leaf_target = indices(node, &leaf("ids"), leaf_ids)?;
    let leaf_weight = node.get_attr_slice::<f32>(&leaf("weights"))?;
    if leaf_weight.len() != leaf_ids || (0..leaf_ids).any(|l| leaf_target.at(l) >= n_outputs) {
        bail!("{op}: {prefix}_* attributes are inconsistent");
    }

    // Nodes in (tree, id) order; a tree's node ids must run 0, 1, 2, ... so that a child id
    // plus the tree's first row is the child's row.
    let order = ordered(n, |i| (tree_of.at(i), id_of.at(i)));
    let by_leaf = ordered(leaf_ids, |l| (leaf_tree.at(l), leaf_node.at(l)));
    let leaf_at = |k: usize| by_leaf.as_ref().map_or(k, |o| o[k]);
    let (mut roots, mut nodes, mut weights) = (Vec::<u32>::new(), Vec::new(), Vec::new());
    let mut next = 0;
    for i in (0..n).map(|k| order.as_ref().map_or(k, |o| o[k])) {
        if roots.len() != tree_of.at(i) + 1 {
            if tree_of.at(i) != roots.len() {
                bail!("{op}: tree ids must run 0, 1, 2, ...");
            }
            roots.push(nodes.len() as u32);
        }
        let root = *roots.last().unwrap() as usize;
        if id_of.at(i) != nodes.len() - root {
            bail!(
                "{op}: node ids of tree {} must run 0, 1, 2, ...",
                tree_of.at(i)
            );
        }
        nodes.push(match comparison(modes[i])? {
            Some(cmp) => Node::Branch {
                feature: feature_of.at(i) as u32,
                threshold: threshold_of[i],
                cmp,
                nan_goes_true: nan_true[i],
                if_true: (true_of.at(i) + root) as u32,
                if_false: (false_of.at(i) + root) as u32,
            },
            None => {
                let start = weights.len() as u32;
                while next < leaf_ids
                    && (leaf_tree.at(leaf_at(next)), leaf_node.at(leaf_at(next)))
                        == (tree_of.at(i), id_of.at(i))
                {
                    let l = leaf_at(next);
                    weights.push((leaf_target.at(l) as u32, leaf_weight[l]));
                    next += 1;
                }
                Node::Leaf {
                    start,
                    end: weights.len() as u32,
                }
            }
        });
    }
    if next != leaf_ids {
        bail!("{op}: some target weights belong to no leaf node");
    }
    if let Some(bad) = nodes.iter().find_map(|node| match *node {
        Node::Branch {
            if_true, if_false, ..
        } if if_true as usize >= nodes.len() || if_false as usize >= nodes.len() => {
            Some(if_true.max(if_false))
        }
        _ => None,
    }) {
        bail!("{op}: a branch points at node row {bad}, past the last node");
    }
    let base_values = match node.get_attr_opt_slice::<f32>("base_values")? {
        Some(b) if b.len() != n_outputs => {
            bail!("{op}: base_values needs one value per output")
        }
        Some(b) => b.to_vec(),
        None => vec![],
    };
    Ok(Forest {
        roots,
        nodes,
        weights,
        n_outputs,
        n_features: (0..n).map(|i| feature_of.at(i) + 1).max().unwrap_or(0),
        aggregate,
        base_values,
    })
}
