//! The training (or held-out) data of `model init`: a CSV file with a header line, read as
//! text cells. Whether a column holds numbers is decided later, against the graph; an empty
//! cell is a missing value.

use anyhow::{Context, Result, bail};
use std::path::Path;

/// A CSV file's columns and rows, every cell as written (trimmed).
#[derive(Debug)]
pub struct Table {
    pub file: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads `path`: a header, then rows of as many fields (quoted fields as CSV quotes them).
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&path.display().to_string(), &text)
    }

    pub fn parse(file: &str, bytes: &[u8]) -> Result<Self> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(bytes);
        let header: Vec<String> = reader
            .headers()
            .with_context(|| format!("{file}: its header line"))?
            .iter()
            .map(str::to_owned)
            .collect();
        if header.iter().all(String::is_empty) {
            bail!("{file}: no header line (the first line names the columns)");
        }
        if let Some(i) = header.iter().position(String::is_empty) {
            bail!("{file}: column {} has no name in the header", i + 1);
        }
        for (i, name) in header.iter().enumerate() {
            if header[..i].contains(name) {
                bail!("{file}: column `{name}` is named twice in the header");
            }
        }
        let mut rows = Vec::new();
        for record in reader.records() {
            // The csv crate's error names the line and the field counts.
            let record = record.with_context(|| file.to_owned())?;
            rows.push(record.iter().map(str::to_owned).collect());
        }
        if rows.is_empty() {
            bail!("{file}: no rows after the header");
        }
        Ok(Self {
            file: file.to_owned(),
            header,
            rows,
        })
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The cells of column `i`, `None` where missing.
    pub fn cells(&self, i: usize) -> impl Iterator<Item = Option<&str>> {
        self.rows
            .iter()
            .map(move |r| Some(r[i].as_str()).filter(|c| !c.is_empty()))
    }

    /// The first cell of column `i` that is not a number, with its line in the file (the
    /// header is line 1), if there is one.
    pub fn first_text(&self, i: usize) -> Option<(usize, &str)> {
        self.cells(i)
            .enumerate()
            .find_map(|(row, c)| c.filter(|c| number(c).is_none()).map(|c| (row + 2, c)))
    }
}

/// A cell as a number: what Rust parses as an f64, `NaN` counted as missing (pandas writes
/// NaN as an empty cell, numpy as `nan`).
pub fn number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| !v.is_nan())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_and_empty_cells() {
        let t = Table::parse("d.csv", b"a,\"b, c\",y\n1.5,\"red, dark\",3\n,blue,4\n").unwrap();
        assert_eq!(t.header, ["a", "b, c", "y"]);
        assert_eq!(t.rows[0][1], "red, dark");
        assert_eq!(t.cells(0).collect::<Vec<_>>(), [Some("1.5"), None]);
        assert_eq!(t.first_text(1), Some((2, "red, dark")));
        assert_eq!(t.first_text(2), None);
    }

    #[test]
    fn a_ragged_row_or_a_twice_named_column_is_refused() {
        let e = Table::parse("d.csv", b"a,b\n1,2\n3\n").unwrap_err();
        assert!(format!("{e:#}").starts_with("d.csv"), "{e:#}");
        let e = Table::parse("d.csv", b"a,a\n1,2\n").unwrap_err();
        assert!(format!("{e:#}").contains("`a` is named twice"), "{e:#}");
        let e = Table::parse("d.csv", b"a,b\n").unwrap_err();
        assert!(format!("{e:#}").contains("no rows"), "{e:#}");
    }
}
