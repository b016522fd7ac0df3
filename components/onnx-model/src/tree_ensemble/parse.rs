//! Reading a tree ensemble's attributes into a [`Forest`]: node and leaf arrays (ONNX-ML
//! spec, opsets 1-3), with thresholds, weights and base values given as floats
//! (`nodes_values`) or, in opset 3, as a tensor of doubles (`nodes_values_as_tensor`).

use super::{Aggregate, Cmp, Forest, Node};
use tract_onnx::pb::{NodeProto, TensorProto};
use tract_onnx::tract_hir::internal::*;

/// The real numbers of attribute `name` or of `{name}_as_tensor` (at most one of them),
/// as `f64`, and whether they were doubles; `None` when neither is given.
pub fn reals(node: &NodeProto, name: &str) -> TractResult<Option<(Vec<f64>, bool)>> {
    let tensor_name = format!("{name}_as_tensor");
    let floats = node.get_attr_opt_slice::<f32>(name)?;
    let tensor = node.get_attr_opt::<&TensorProto>(&tensor_name)?;
    node.expect_attr(&tensor_name, floats.is_none() || tensor.is_none(), || {
        format!("either {name} or {tensor_name}, not both")
    })?;
    if let Some(f) = floats {
        return Ok(Some((f.iter().map(|&x| f64::from(x)).collect(), false)));
    }
    let Some(t) = tensor else { return Ok(None) };
    let (double, values) = match t.data_type {
        DOUBLE if t.raw_data.is_empty() => (true, t.double_data.clone()),
        DOUBLE => (
            true,
            raw::<8>(&t.raw_data).map(f64::from_le_bytes).collect(),
        ),
        FLOAT if t.raw_data.is_empty() => (false, t.float_data.iter().map(|&x| x.into()).collect()),
        FLOAT => (
            false,
            raw::<4>(&t.raw_data)
                .map(|b| f32::from_le_bytes(b).into())
                .collect(),
        ),
        other => {
            node.expect_attr(&tensor_name, false, || {
                format!("a tensor of doubles or floats, got ONNX data type {other}")
            })?;
            unreachable!()
        }
    };
    Ok(Some((values, double)))
}

/// ONNX's `TensorProto.DataType` codes of the two real types.
const FLOAT: i32 = 1;
const DOUBLE: i32 = 11;

/// Little-endian `N`-byte values of a tensor's `raw_data`.
fn raw<const N: usize>(bytes: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    bytes.chunks_exact(N).map(|c| c.try_into().unwrap())
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
pub fn parse_forest(
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
    let (threshold_of, mut double) = reals(node, "nodes_values")?.unwrap_or_default();
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
    let (leaf_weight, double_weights) = reals(node, &leaf("weights"))?.unwrap_or_default();
    double |= double_weights;
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
    // Their count is the operator's to check: a binary classifier may give one or two.
    let base_values = match reals(node, "base_values")? {
        Some((b, d)) => {
            double |= d;
            b
        }
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
        double,
    })
}
