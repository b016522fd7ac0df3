//! An SD file's records, read one at a time: the lines up to each `$$$$`, with a cap on a
//! record's size so a file that is not SD is never read into memory whole.

use anyhow::{Context, Result};
use std::io::BufRead;

/// SD records, each with its index: the lines up to `$$$$`.
pub(super) struct Records<R> {
    lines: std::io::Lines<R>,
    index: usize,
}

/// Longest record read (a molfile of 2,000 atoms is about 200 KB): a file that never says
/// `$$$$` is not read into memory whole.
const MAX_RECORD_BYTES: usize = 4 << 20;

impl<R: BufRead> Records<R> {
    pub(super) fn new(reader: R) -> Self {
        Self {
            lines: reader.lines(),
            index: 0,
        }
    }
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = Result<(usize, String)>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut text = String::new();
        for line in self.lines.by_ref() {
            let line = match line {
                Ok(l) => l,
                Err(e) => return Some(Err(e).context("reading the SD file")),
            };
            if line.starts_with("$$$$") {
                self.index += 1;
                return Some(Ok((self.index - 1, text)));
            }
            if text.len() + line.len() > MAX_RECORD_BYTES {
                return Some(Err(anyhow::anyhow!(
                    "SD record {} is over {} MiB without its `$$$$` line: is this an SD file?",
                    self.index + 1,
                    MAX_RECORD_BYTES >> 20
                )));
            }
            text.push_str(&line);
            text.push('\n');
        }
        // A last record without its `$$$$` still counts when it holds a structure.
        if text.contains("M  END") {
            self.index += 1;
            return Some(Ok((self.index - 1, text)));
        }
        None
    }
}
