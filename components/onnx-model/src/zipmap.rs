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

/// Operators that make probabilities of scores (a logistic, a softmax, a calibration's
/// exponential, a normalisation to sum 1).
const PROBABILITY_MAKERS: [&str; 5] = ["Exp", "Sigmoid", "Softmax", "LogSoftmax", "Normalizer"];

/// The classifier node whose decision scores make the graph's per-label output, described:
/// an `SVMClassifier` without probability estimates (`prob_a`: an SVC without
/// `probability=True`), or a `LinearClassifier` with no post-transform (LinearSVC,
/// RidgeClassifier), with nothing between it and an output that makes probabilities of them
/// (one-vs-rest arithmetic may be; CalibratedClassifierCV's exponential makes the calibrated
/// probabilities, and is not). An export computing scores with plain operators only (a
/// hinge-loss SGDClassifier) is not recognised here; its answers are checked instead
/// (`result.rs`).
pub fn decision_scores(graph: &GraphProto) -> Option<String> {
    graph.output.iter().find_map(|out| {
        let makers = ancestors(graph, &out.name);
        if makers
            .iter()
            .any(|n| PROBABILITY_MAKERS.contains(&n.op_type.as_str()))
        {
            return None;
        }
        makers
            .iter()
            .filter(|n| n.domain == "ai.onnx.ml")
            .find_map(|n| answers_scores(n))
    })
}

/// Every node `name` is computed from, directly or not (each once, so a hostile graph's
/// cycle ends).
fn ancestors<'g>(graph: &'g GraphProto, name: &str) -> Vec<&'g NodeProto> {
    let mut found: Vec<&NodeProto> = Vec::new();
    let mut wanted = vec![name.to_owned()];
    while let Some(name) = wanted.pop() {
        for node in graph.node.iter().filter(|n| n.output.contains(&name)) {
            if !found.iter().any(|f| std::ptr::eq(*f, node)) {
                found.push(node);
                wanted.extend(node.input.iter().cloned());
            }
        }
    }
    found
}

/// Whether a classifier node's scores are decision scores: no post-transform, and for an
/// SVM no probability estimates.
fn answers_scores(n: &NodeProto) -> Option<String> {
    let attribute = |name: &str| n.attribute.iter().find(|a| a.name == name);
    let post = attribute("post_transform").map(|a| String::from_utf8_lossy(&a.s).into_owned());
    if post.as_deref().is_some_and(|p| p != "NONE") {
        return None;
    }
    match n.op_type.as_str() {
        "SVMClassifier" if attribute("prob_a").is_none() => Some(format!(
            "classifier (`SVMClassifier` `{}`, without probability estimates)",
            n.name
        )),
        "LinearClassifier" => Some(format!(
            "classifier (`LinearClassifier` `{}`, without a post-transform)",
            n.name
        )),
        _ => None,
    }
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

    /// A classifier node with a label and a scores output, reached from `out` through `path`.
    fn scored(op: &str, attributes: Vec<AttributeProto>, path: &[&str]) -> GraphProto {
        let mut classifier = node(op, "X", "label");
        classifier.output.push("scores".into());
        classifier.attribute = attributes;
        let mut nodes = vec![classifier];
        let mut from = "scores".to_owned();
        for (i, op) in path.iter().enumerate() {
            let to = format!("v{i}");
            nodes.push(node(op, &from, &to));
            from = to;
        }
        GraphProto {
            node: nodes,
            output: vec![ValueInfoProto {
                name: from,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn post(transform: &str) -> AttributeProto {
        AttributeProto {
            name: "post_transform".into(),
            s: transform.as_bytes().to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn decision_scores_are_told_from_probabilities_by_what_makes_the_output() {
        // SVC() and LinearSVC/RidgeClassifier, as skl2onnx exports them: the scores, cast.
        let svc = scored("SVMClassifier", vec![post("NONE")], &["Cast"]);
        assert!(decision_scores(&svc).unwrap().contains("SVMClassifier"));
        let linear = scored("LinearClassifier", vec![], &["Identity", "ZipMap"]);
        assert!(
            decision_scores(&linear)
                .unwrap()
                .contains("LinearClassifier")
        );
        // Probabilities: an SVC with Platt scaling, a logistic regression, and a calibrated
        // LinearSVC (CalibratedClassifierCV computes probabilities from the scores).
        let prob_a = AttributeProto {
            name: "prob_a".into(),
            floats: vec![-1.0],
            ..Default::default()
        };
        let platt = scored("SVMClassifier", vec![post("NONE"), prob_a], &["Cast"]);
        assert_eq!(decision_scores(&platt), None);
        let logistic = scored("LinearClassifier", vec![post("LOGISTIC")], &["Cast"]);
        assert_eq!(decision_scores(&logistic), None);
        let calibrated = scored("LinearClassifier", vec![post("NONE")], &["Sigmoid", "Cast"]);
        assert_eq!(decision_scores(&calibrated), None);
        // A multi-class SVC's one-vs-rest arithmetic keeps them scores.
        let ovr = scored("SVMClassifier", vec![], &["Abs", "Div", "Add", "Cast"]);
        assert!(decision_scores(&ovr).is_some());
        // A cycle in a hostile graph ends the search.
        let mut cycle = scored("LinearClassifier", vec![], &["Identity"]);
        cycle.node[1].input = vec!["v0".into()];
        assert_eq!(decision_scores(&cycle), None);
    }
}
