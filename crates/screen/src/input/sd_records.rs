//! An SD file's records, read one at a time: the lines up to each `$$$$`, with a cap on a
//! record's size: a record over it (or with a line that is not UTF-8) is skipped to its
//! `$$$$` without being held, and fails alone, so a file that is not SD is never read into
//! memory whole and one giant record does not end the run.

use super::lines::{BoundedLines, Line};
use anyhow::{Context, Result};
use std::io::BufRead;

/// SD records, each with its index: the lines up to `$$$$`, or why the record was skipped.
pub(super) struct Records<R> {
    lines: BoundedLines<R>,
    index: usize,
}

/// Longest record read (a molfile of 2,000 atoms is about 200 KB).
const MAX_RECORD_BYTES: usize = 4 << 20;

impl<R: BufRead> Records<R> {
    pub(super) fn new(lines: BoundedLines<R>) -> Self {
        Self { lines, index: 0 }
    }
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = Result<(usize, Result<String, String>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut text = String::new();
        let mut skipped: Option<String> = None;
        let mut bytes: u64 = 0;
        let mut any = false;
        for line in self.lines.by_ref() {
            any = true;
            let line = match line.context("reading the SD file") {
                Ok(l) => l,
                Err(e) => return Some(Err(e)),
            };
            if matches!(&line, Line::Bytes(b) if b.starts_with(b"$$$$")) {
                self.index += 1;
                let record = match skipped {
                    Some(why) => Err(format!("SD record {}: {why}", self.index)),
                    None => Ok(text),
                };
                return Some(Ok((self.index - 1, record)));
            }
            bytes += match &line {
                Line::Bytes(b) => b.len() as u64 + 1,
                Line::TooLong(n) => *n + 1,
            };
            if skipped.is_some() {
                continue;
            }
            match line.text() {
                Ok(_) if bytes > MAX_RECORD_BYTES as u64 => {
                    skipped = Some(format!(
                        "over {} MiB; it was skipped",
                        MAX_RECORD_BYTES >> 20
                    ));
                    text = String::new();
                }
                Ok(l) => {
                    text.push_str(&l);
                    text.push('\n');
                }
                Err(why) => {
                    skipped = Some(why);
                    text = String::new();
                }
            }
        }
        // A last record without its `$$$$` still counts when it holds a structure (or was
        // skipped, so it is reported).
        if any && (skipped.is_some() || text.contains("M  END")) {
            self.index += 1;
            let record = match skipped {
                Some(why) => Err(format!("SD record {}: {why}", self.index)),
                None => Ok(text),
            };
            return Some(Ok((self.index - 1, record)));
        }
        None
    }
}
