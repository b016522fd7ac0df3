//! The account of a run: rows, failures grouped by error, rows outside the applicability
//! domain, time and rate.

use crate::output::Outcome;
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

#[derive(Debug, Default)]
pub struct Summary {
    pub model: String,
    /// Rows written in this run.
    pub rows: u64,
    /// Rows an earlier run had written (resumed).
    pub resumed: u64,
    /// Rows in the input.
    pub total: u64,
    pub failed: u64,
    pub outside_domain: u64,
    /// Failures by error, with the row-specific parts (positions, numbers) folded.
    pub errors: HashMap<String, u64>,
    pub elapsed: Duration,
    /// Stopped by a signal before the end.
    pub interrupted: bool,
    /// Result fields the CSV header has no column for.
    pub dropped: Vec<String>,
    pub output: String,
}

impl Summary {
    /// Accounts for the rows an earlier run wrote (resumed): the summary is of the whole file.
    pub fn add_existing(&mut self, existing: &crate::output::Existing) {
        self.resumed = existing.rows;
        for (error, n) in &existing.errors {
            self.failed += n;
            *self.errors.entry(kind_of(error)).or_default() += n;
        }
        self.outside_domain += existing.outside_domain;
    }

    pub fn count(&mut self, outcome: &Outcome) {
        self.rows += 1;
        if let Some(error) = &outcome.error {
            self.failed += 1;
            *self.errors.entry(kind_of(error)).or_default() += 1;
        }
        if outcome.in_domain() == Some(false) {
            self.outside_domain += 1;
        }
    }

    pub fn rate(&self) -> f64 {
        self.rows as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// An error with its digits folded, so `unknown element at position 3` and `... position 7`
/// are one kind.
fn kind_of(error: &str) -> String {
    let mut out = String::with_capacity(error.len());
    let mut in_digits = false;
    for c in error.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let written = self.resumed + self.rows;
        writeln!(
            f,
            "{}: {} rows through {} in {:.1} s ({:.0} rows/s){}",
            if self.interrupted {
                "interrupted"
            } else {
                "done"
            },
            self.rows,
            self.model,
            self.elapsed.as_secs_f64(),
            self.rate(),
            if self.resumed > 0 {
                format!(", after {} rows of an earlier run", self.resumed)
            } else {
                String::new()
            }
        )?;
        writeln!(
            f,
            "  written:  {written} of {} rows to {}",
            self.total, self.output
        )?;
        // Failures and the domain count every row of the file, resumed ones included.
        writeln!(f, "  failed:   {}", self.failed)?;
        let mut kinds: Vec<_> = self.errors.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (kind, n) in kinds.iter().take(8) {
            writeln!(f, "    {n:>8}  {kind}")?;
        }
        if kinds.len() > 8 {
            writeln!(f, "    ... and {} other kinds of error", kinds.len() - 8)?;
        }
        writeln!(
            f,
            "  outside the applicability domain: {}",
            self.outside_domain
        )?;
        if !self.dropped.is_empty() {
            writeln!(
                f,
                "  note: result fields first seen after the CSV header was written are not in it: {} (--format jsonl keeps every field)",
                self.dropped.join(", ")
            )?;
        }
        if self.interrupted {
            writeln!(f, "  continue with the same command and --resume")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_group_without_their_positions() {
        assert_eq!(
            kind_of("unknown element `Xx` at position 12"),
            kind_of("unknown element `Xx` at position 3")
        );
        let mut s = Summary::default();
        s.count(&Outcome::failed("bad at position 1"));
        s.count(&Outcome::failed("bad at position 22"));
        s.count(&Outcome {
            results: Some(serde_json::from_str(r#"{"in_domain": false}"#).unwrap()),
            error: None,
        });
        assert_eq!((s.rows, s.failed, s.outside_domain), (3, 2, 1));
        assert_eq!(s.errors.len(), 1);
    }
}
