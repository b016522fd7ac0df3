//! ONNX-ML's `ZipMap`, which skl2onnx puts at the end of every classifier it exports by
//! default: it turns the probabilities tensor `[rows, classes]` into one map per row, class
//! label to probability. That map is exactly what this component answers with (the manifest's
//! `labels`, each with its probability), so the graph is run up to `ZipMap`'s input and the
//! labels are paired here: the node is taken out of the graph before tract reads it, and its
//! labels checked against the manifest's, in order.

use tract_onnx::pb::{GraphProto, NodeProto};

/// Takes every `ZipMap` whose map is one of the graph's outputs out of `graph`, the output
/// becoming the probabilities it was made from. Gives back each one's labels, as text. A
/// `ZipMap` inside the graph (its maps read by another node) is left, and refused later as an
/// operator this component does not run.
pub fn unzip(graph: &mut GraphProto) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut kept = Vec::with_capacity(graph.node.len());
    for node in std::mem::take(&mut graph.node) {
        let (Some(input), Some(output)) = (node.input.first(), node.output.first()) else {
            kept.push(node);
            continue;
        };
        let is_zipmap = node.op_type == "ZipMap" && node.domain == "ai.onnx.ml";
        let at_output = graph.output.iter().position(|o| &o.name == output);
        match (is_zipmap, at_output) {
            (true, Some(i)) => {
                // The output is now the tensor, whose type tract infers.
                graph.output[i].name = input.clone();
                graph.output[i].r#type = None;
                found.push(labels(&node));
            }
            _ => kept.push(node),
        }
    }
    graph.node = kept;
    found
}

/// The labels of the graph's ONNX-ML classifiers (`LinearClassifier`, `SVMClassifier`,
/// `TreeEnsembleClassifier`), each with the operator's name: what a graph exported without
/// a `ZipMap` orders its probability columns by.
pub fn classifier_labels(graph: &GraphProto) -> Vec<(String, Vec<String>)> {
    const CLASSIFIERS: [&str; 3] = [
        "LinearClassifier",
        "SVMClassifier",
        "TreeEnsembleClassifier",
    ];
    graph
        .node
        .iter()
        .filter(|n| n.domain == "ai.onnx.ml" && CLASSIFIERS.contains(&n.op_type.as_str()))
        .map(|n| (n.op_type.clone(), labels(n)))
        .filter(|(_, labels)| !labels.is_empty())
        .collect()
}

/// The classifier node of the graph whose columns are decision scores, described: an
/// `SVMClassifier` without probability estimates (`prob_a`: an SVC without
/// `probability=True`), or a `LinearClassifier` with no post-transform (LinearSVC,
/// RidgeClassifier). An export computing scores with plain operators (a hinge-loss
/// SGDClassifier) is not recognised here; its answers are checked instead (`result.rs`).
pub fn decision_scores(graph: &GraphProto) -> Option<String> {
    graph.node.iter().find_map(|n| {
        let attribute = |name: &str| n.attribute.iter().find(|a| a.name == name);
        let post = attribute("post_transform").map(|a| String::from_utf8_lossy(&a.s).into_owned());
        let none = post.as_deref().is_none_or(|p| p == "NONE");
        match n.op_type.as_str() {
            "SVMClassifier" if attribute("prob_a").is_none() && none => Some(format!(
                "classifier (`SVMClassifier` `{}`, without probability estimates)",
                n.name
            )),
            "LinearClassifier" if none => Some(format!(
                "classifier (`LinearClassifier` `{}`, without a post-transform)",
                n.name
            )),
            _ => None,
        }
    })
}

/// Whether `labels` are the class numbers 0, 1, 2, ... in order (a classifier trained on
/// encoded classes), which a manifest may name.
pub fn numbered(labels: &[String]) -> bool {
    labels.iter().enumerate().all(|(i, l)| *l == i.to_string())
}

/// A node's class labels: `classlabels_strings`, or `classlabels_int64s` (ZipMap, tree
/// ensembles) or `classlabels_ints` (linear models, SVMs) written as numbers.
fn labels(node: &NodeProto) -> Vec<String> {
    let attribute = |name: &str| node.attribute.iter().find(|a| a.name == name);
    if let Some(strings) = attribute("classlabels_strings") {
        return strings
            .strings
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
    }
    attribute("classlabels_int64s")
        .or_else(|| attribute("classlabels_ints"))
        .map(|ints| ints.ints.iter().map(i64::to_string).collect())
        .unwrap_or_default()
}

/// Whether the labels `who` (the graph's ZipMap, or its classifier) pairs the probabilities
/// with are the manifest's, in its order; if not, what to change.
pub fn check_labels(who: &str, graph: &[String], manifest: &[String]) -> Result<(), String> {
    if graph == manifest {
        return Ok(());
    }
    Err(format!(
        "the graph's {who} pairs its probabilities with the labels {graph:?}, but model.toml \
         lists {manifest:?}: list the labels in model.toml as the model was trained with them \
         (scikit-learn's `classes_`, in that order)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb::{AttributeProto, ValueInfoProto};

    fn node(op: &str, input: &str, output: &str) -> NodeProto {
        NodeProto {
            op_type: op.into(),
            domain: "ai.onnx.ml".into(),
            input: vec![input.into()],
            output: vec![output.into()],
            ..Default::default()
        }
    }

    #[test]
    fn a_final_zipmap_is_taken_out_and_its_labels_kept() {
        let mut zip = node("ZipMap", "probabilities", "output_probability");
        zip.attribute.push(AttributeProto {
            name: "classlabels_int64s".into(),
            ints: vec![0, 1, 2],
            ..Default::default()
        });
        let mut graph = GraphProto {
            node: vec![node("TreeEnsembleClassifier", "X", "probabilities"), zip],
            output: vec![ValueInfoProto {
                name: "output_probability".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(unzip(&mut graph), vec![vec!["0", "1", "2"]]);
        assert_eq!(graph.node.len(), 1);
        assert_eq!(graph.output[0].name, "probabilities");
    }

    #[test]
    fn a_zipmap_read_by_another_node_stays() {
        let mut graph = GraphProto {
            node: vec![node("ZipMap", "p", "maps"), node("Identity", "maps", "out")],
            output: vec![ValueInfoProto {
                name: "out".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(unzip(&mut graph).is_empty());
        assert_eq!(graph.node.len(), 2);
    }

    #[test]
    fn labels_must_match_in_order() {
        let ab = ["a".to_owned(), "b".to_owned()];
        let ba = ["b".to_owned(), "a".to_owned()];
        assert!(check_labels("ZipMap", &ab, &ab).is_ok());
        assert!(
            check_labels("ZipMap", &ab, &ba)
                .unwrap_err()
                .contains("classes_")
        );
    }
}
