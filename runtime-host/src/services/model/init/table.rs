//! The training (or held-out) data of `model init`: a CSV file with a header line, read as
//! text cells. Whether a column holds numbers is decided later, against the graph; an empty
//! cell, or NaN, is a missing value. The file is streamed, at most [`MAX_CSV_BYTES`] of it,
//! each row kept as one buffer (a `StringRecord`, not a `String` per cell).

use super::capped::LimitReader;
use anyhow::{Context, Result, bail};
use std::path::Path;

/// The most of a CSV file `model init` reads: 1 GiB, tens of millions of rows, more than a
/// manifest's ranges and examples need; a bound so that a wrong file (a disk image, a device
/// that never ends) is refused with a clear error instead of exhausting memory.
pub const MAX_CSV_BYTES: u64 = 1 << 30;

/// A CSV file's columns and rows, every cell as written (trimmed).
#[derive(Debug)]
pub struct Table {
    pub file: String,
    pub header: Vec<String>,
    pub rows: Vec<csv::StringRecord>,
}

impl Table {
    /// Reads `path`: a header, then rows of as many fields (quoted fields as CSV quotes them).
    pub fn read(path: &Path) -> Result<Self> {
        Self::read_at_most(path, MAX_CSV_BYTES)
    }

    /// [`Table::read`] of at most `limit` bytes: refused from the file's size when it says
    /// so, and while streaming when it does not (a pipe, a device).
    pub fn read_at_most(path: &Path, limit: u64) -> Result<Self> {
        let file = LimitReader::open(path, limit, "a CSV file")?;
        Self::from_reader(&path.display().to_string(), file)
    }

    #[cfg(test)]
    pub fn parse(file: &str, bytes: &[u8]) -> Result<Self> {
        Self::from_reader(file, bytes)
    }

    fn from_reader(file: &str, from: impl std::io::Read) -> Result<Self> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(from);
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
            rows.push(record);
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

    /// The cells of column `i`, `None` where [`missing`].
    pub fn cells(&self, i: usize) -> impl Iterator<Item = Option<&str>> {
        self.rows
            .iter()
            .map(move |r| Some(&r[i]).filter(|c| !missing(c)))
    }

    /// How many rows have column `i` present.
    pub fn present(&self, i: usize) -> usize {
        self.cells(i).flatten().count()
    }

    /// The first cell of column `i` that is not a number, with its line in the file (the
    /// header is line 1), if there is one.
    pub fn first_text(&self, i: usize) -> Option<(usize, &str)> {
        self.first(i, |c| c.parse::<f64>().is_err())
    }

    /// The first cell of column `i` that reads as an infinite number (`inf`, `-Infinity`,
    /// `1e400`), with its line: no finite value, which scikit-learn refuses to train on and
    /// JSON cannot carry into a range or a test example.
    pub fn first_infinite(&self, i: usize) -> Option<(usize, &str)> {
        self.first(i, |c| c.parse::<f64>().is_ok_and(f64::is_infinite))
    }

    fn first(&self, i: usize, is: impl Fn(&str) -> bool) -> Option<(usize, &str)> {
        self.cells(i)
            .enumerate()
            .find_map(|(row, c)| c.filter(|c| is(c)).map(|c| (row + 2, c)))
    }
}

/// Whether a cell is a missing value: empty, or NaN (pandas writes NaN as an empty cell,
/// numpy as `nan`; `pd.read_csv` reads both as NaN).
pub fn missing(cell: &str) -> bool {
    cell.is_empty() || cell.parse::<f64>().is_ok_and(f64::is_nan)
}

/// A cell as a number: what Rust parses as a finite f64 (NaN is [`missing`]; an infinite one
/// is refused where it is found, [`Table::first_infinite`]).
pub fn number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_and_empty_cells() {
        let t = Table::parse("d.csv", b"a,\"b, c\",y\n1.5,\"red, dark\",3\n,blue,4\n").unwrap();
        assert_eq!(t.header, ["a", "b, c", "y"]);
        assert_eq!(&t.rows[0][1], "red, dark");
        assert_eq!(t.cells(0).collect::<Vec<_>>(), [Some("1.5"), None]);
        assert_eq!(t.first_text(1), Some((2, "red, dark")));
        assert_eq!(t.first_text(2), None);
    }

    /// `nan` is missing, as `pd.read_csv` reads it; `inf` and `1e400` (infinite once read)
    /// are numbers but not finite ones, found by line; neither is text.
    #[test]
    fn nan_is_missing_and_infinities_are_found() {
        let t = Table::parse("d.csv", b"a,b\nnan,1\n2,-inf\nNaN,1e400\n").unwrap();
        assert_eq!(t.cells(0).collect::<Vec<_>>(), [None, Some("2"), None]);
        assert_eq!(t.present(0), 1);
        assert_eq!((t.first_text(0), t.first_text(1)), (None, None));
        assert_eq!(t.first_infinite(1), Some((3, "-inf")));
        assert_eq!(number("1e400"), None);
        assert_eq!(number("-0.5"), Some(-0.5));
    }

    /// A file over the limit is refused from its size (a sparse file: nothing is read), and
    /// a stream with no size (a device) once the limit is passed.
    #[test]
    fn a_file_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.csv");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_CSV_BYTES + 1).unwrap();
        let e = format!("{:#}", Table::read(&big).unwrap_err());
        assert!(e.contains("over the 1073741824 bytes"), "{e}");
        let small = dir.path().join("small.csv");
        std::fs::write(&small, "a,b\n1,2\n3,4\n").unwrap();
        assert_eq!(Table::read_at_most(&small, 12).unwrap().rows.len(), 2);
        let e = format!("{:#}", Table::read_at_most(&small, 11).unwrap_err());
        assert!(e.contains("over the 11 bytes"), "{e}");
        let e = format!(
            "{:#}",
            Table::read_at_most(Path::new("/dev/zero"), 1000).unwrap_err()
        );
        assert!(
            e.contains("/dev/zero") && e.contains("over the 1000 bytes"),
            "{e}"
        );
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
