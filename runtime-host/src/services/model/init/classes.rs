//! A classifier's labels where the graph names none (a k-NN or MLP export carries its
//! classes as a constant tensor, not in a classifier or ZipMap node): the training target's
//! values as scikit-learn's `classes_` holds them, and a row's true label spelled as they are.

use super::table::{Table, number};

/// The distinct values of column `t`, as scikit-learn's `classes_` (numpy's `unique`): when
/// every one is a number, sorted numerically (10 after 9) and one class per value (`10.0` is
/// `10`), integral ones written as integers, as skl2onnx writes integral classes (int64);
/// else sorted as text (by code point, as numpy sorts strings).
pub fn sorted_classes(training: &Table, t: usize) -> Vec<String> {
    let cells = || training.cells(t).flatten();
    if cells().all(|c| number(c).is_some()) {
        let mut numbers: Vec<f64> = cells().filter_map(number).collect();
        numbers.sort_by(f64::total_cmp);
        numbers.dedup();
        // Display writes an integral f64 without a fraction (`10`), others exactly (`0.5`);
        // `+ 0.0` makes -0 zero.
        return numbers.iter().map(|v| format!("{}", v + 0.0)).collect();
    }
    let mut values: Vec<String> = cells().map(str::to_owned).collect();
    values.sort();
    values.dedup();
    values
}

/// The true label as the graph spells it: `1.0` in a CSV is label `1` of integer labels.
pub fn label_of(cell: &str, labels: &[String]) -> String {
    if labels.iter().any(|l| l == cell) {
        return cell.to_owned();
    }
    match number(cell) {
        Some(v) if v.fract() == 0.0 && labels.contains(&format!("{v}")) => format!("{v}"),
        _ => cell.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(csv: &str) -> Vec<String> {
        sorted_classes(&Table::parse("d.csv", csv.as_bytes()).unwrap(), 0)
    }

    /// numpy: `np.unique([10.0, 2, 1, 2.0, 10, 9])` is `[1., 2., 9., 10.]`, and
    /// `np.unique(["b", "a", "B", "10", "9"])` is `['10', '9', 'B', 'a', 'b']`.
    #[test]
    fn numbers_sort_as_numbers_and_text_as_text() {
        assert_eq!(
            classes("y\n10.0\n2\n1\n2.0\n10\n9\n"),
            ["1", "2", "9", "10"]
        );
        assert_eq!(classes("y\n-0.5\n0.25\n-0\n0\n"), ["-0.5", "0", "0.25"]);
        assert_eq!(classes("y\nb\na\nB\n10\n9\n"), ["10", "9", "B", "a", "b"]);
        assert_eq!(label_of("10.0", &classes("y\n10\n9\n")), "10");
    }
}
