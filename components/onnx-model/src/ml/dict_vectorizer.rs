//! `DictVectorizer`: its input is a map (one Python dict per row), and this component feeds a
//! model tensors only (a CSV row's columns, or one column per input), so a graph starting with
//! it can never be served. The parse error says so and what to export instead.

use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

pub fn parse(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    node.bail(
        "DictVectorizer reads a map (a dict per row), and this component feeds tensors only; \
         export the pipeline from a DataFrame instead, with a ColumnTransformer (one input per \
         column) in place of the DictVectorizer",
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{node, parsed, strings};
    use super::*;

    #[test]
    fn a_map_input_is_refused_with_what_to_export() {
        let n = node(
            "DictVectorizer",
            vec![strings("string_vocabulary", &["a", "b"])],
        );
        let e = format!("{:#}", parsed(parse, &n).unwrap_err());
        assert!(e.contains("(DictVectorizer)"), "{e}");
        assert!(e.contains("ColumnTransformer"), "{e}");
    }
}
