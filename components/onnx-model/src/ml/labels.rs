//! The class labels of an ONNX-ML classifier (`classlabels_ints`/`classlabels_int64s` or
//! `classlabels_strings`) and its label output: `int64` or string, one per row.

use tract_onnx::pb::NodeProto;
use tract_onnx::tract_hir::internal::*;

#[derive(Debug, Clone, PartialEq)]
pub enum Labels {
    Ints(Vec<i64>),
    Strings(Vec<String>),
}

impl Labels {
    /// The labels of `node`: exactly one of `ints` (the integer attribute's name, which the
    /// operators spell differently) and `classlabels_strings`, non-empty.
    pub fn parse(node: &NodeProto, ints: &str) -> TractResult<Labels> {
        let int_labels = node
            .get_attr_opt_slice::<i64>(ints)?
            .filter(|l| !l.is_empty());
        let strings = node
            .get_attr_opt_vec::<String>("classlabels_strings")?
            .filter(|l| !l.is_empty());
        Ok(match (int_labels, strings) {
            (Some(i), None) => Labels::Ints(i.to_vec()),
            (None, Some(s)) => Labels::Strings(s),
            _ => {
                node.expect_attr(ints, false, || {
                    format!("exactly one of {ints} and classlabels_strings")
                })?;
                unreachable!()
            }
        })
    }

    pub fn len(&self) -> usize {
        match self {
            Labels::Ints(l) => l.len(),
            Labels::Strings(l) => l.len(),
        }
    }

    pub fn datum_type(&self) -> DatumType {
        match self {
            Labels::Ints(_) => i64::datum_type(),
            Labels::Strings(_) => String::datum_type(),
        }
    }

    /// The labels at `picks`, one per row, as the operator's label output.
    pub fn pick(&self, picks: &[usize]) -> Tensor {
        match self {
            Labels::Ints(l) => tensor1(&picks.iter().map(|&i| l[i]).collect::<Vec<_>>()),
            Labels::Strings(l) => tensor1(&picks.iter().map(|&i| l[i].clone()).collect::<Vec<_>>()),
        }
    }

    /// The types of a classifier's outputs: labels, and float scores.
    pub fn output_types(&self) -> TVec<Option<DatumType>> {
        tvec![Some(self.datum_type()), Some(DatumType::F32)]
    }

    /// The facts of a classifier's outputs for an input of `input`'s rows: labels `[N]` and
    /// `columns` scores per row.
    pub fn output_facts(&self, input: &TypedFact, columns: usize) -> TVec<TypedFact> {
        let rows = match input.rank() {
            0 | 1 => 1.to_dim(),
            _ => input.shape[0].clone(),
        };
        tvec![
            self.datum_type().fact(std::slice::from_ref(&rows)),
            f32::fact(&[rows, columns.to_dim()])
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ints, node, strings};
    use super::*;

    #[test]
    fn one_kind_of_labels() {
        let n = node("C", vec![ints("classlabels_ints", &[3, 7])]);
        assert_eq!(
            Labels::parse(&n, "classlabels_ints").unwrap(),
            Labels::Ints(vec![3, 7])
        );
        let n = node("C", vec![strings("classlabels_strings", &["a", "b"])]);
        let labels = Labels::parse(&n, "classlabels_ints").unwrap();
        assert_eq!(
            labels.pick(&[1, 0]),
            tensor1(&["b".to_string(), "a".to_string()])
        );
        for attrs in [
            vec![],
            vec![
                ints("classlabels_ints", &[1]),
                strings("classlabels_strings", &["a"]),
            ],
        ] {
            let e = format!(
                "{:#}",
                Labels::parse(&node("C", attrs), "classlabels_ints").unwrap_err()
            );
            assert!(e.contains("(C), attribute 'classlabels_ints'"), "{e}");
        }
    }
}
