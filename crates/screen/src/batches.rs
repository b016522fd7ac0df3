//! The rows left to score, in batches: an earlier run's rows skipped (`--resume`), the
//! rest grouped by count and by the bytes their request carries.

use crate::input::Row;
use crate::output;
use anyhow::{Context, Result, bail};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The input's rows an earlier run did not write: those after its last row for a table (whose
/// rows keep their places), those whose ids it lacks for files and URLs (`keyed`).
pub fn remaining(
    mut rows: Box<dyn Iterator<Item = Result<Row>> + Send>,
    existing: &output::Existing,
    keyed: bool,
) -> Result<Box<dyn Iterator<Item = Result<Row>> + Send>> {
    if keyed {
        let written = existing.ids.clone();
        return Ok(Box::new(
            rows.filter(move |r| !matches!(r, Ok(r) if written.contains(&r.id))),
        ));
    }
    skip_written(&mut rows, existing)?;
    Ok(rows)
}

/// Skips the input rows an earlier run wrote, checking that the last of them is the same row.
fn skip_written(
    rows: &mut dyn Iterator<Item = Result<Row>>,
    existing: &output::Existing,
) -> Result<()> {
    let mut last = None;
    for n in 0..existing.rows {
        last = Some(rows.next().with_context(|| {
            format!(
                "the output has {} rows but the input only {n}: not the output of this input",
                existing.rows
            )
        })??);
    }
    if let (Some(row), Some(id)) = (last, &existing.last_id)
        && &row.id != id
    {
        bail!(
            "the output's row {} is `{id}` but the input's is `{}`: is it the output of another input? (use --force to start again)",
            existing.rows,
            row.id
        );
    }
    Ok(())
}

/// The input in batches, until it ends, a read fails (kept in `error`) or a stop.
pub struct Batches<'a> {
    pub rows: &'a mut Box<dyn Iterator<Item = Result<Row>> + Send>,
    pub size: usize,
    /// Bytes of input per request at most (one row over it goes alone).
    pub budget: &'a AtomicUsize,
    /// A row read that would have taken its batch over the budget: the next batch's first.
    pub held: Option<Row>,
    pub stopping: &'a AtomicBool,
    pub error: &'a mut Option<anyhow::Error>,
}

/// Bytes of input text per request at most, well inside the host's default 1 MiB body cap.
pub const MAX_BATCH_BYTES: usize = 256 << 10;

/// Bytes of base64 per request of files at first: well inside the body cap of a model with
/// the default `max_bytes` (10 MiB, so about 13 MiB of base64), and batches of small files
/// still fill up to the model's item limit. A smaller cap's 413 lowers it for the rest.
pub const MAX_MEDIA_BATCH_BYTES: usize = 4 << 20;

impl Iterator for Batches<'_> {
    type Item = Vec<Row>;

    fn next(&mut self) -> Option<Vec<Row>> {
        if self.stopping.load(Ordering::SeqCst) || self.error.is_some() {
            return None;
        }
        let mut batch: Vec<Row> = Vec::with_capacity(self.size);
        let mut bytes = 0;
        let budget = self.budget.load(Ordering::SeqCst);
        while batch.len() < self.size {
            match self.held.take().map(Ok).or_else(|| self.rows.next()) {
                Some(Ok(row)) => {
                    let weight = row.weight();
                    if !batch.is_empty() && bytes + weight > budget {
                        self.held = Some(row);
                        break;
                    }
                    bytes += weight;
                    batch.push(row);
                }
                Some(Err(e)) => {
                    *self.error = Some(e);
                    break;
                }
                None => break,
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Payload;

    fn file(id: &str, bytes: u64) -> Result<Row> {
        Ok(Row {
            id: id.to_owned(),
            payload: Payload::File {
                path: id.into(),
                bytes,
            },
        })
    }

    #[test]
    fn files_are_grouped_by_their_base64_size_and_a_large_one_goes_alone() {
        // 3 KiB of file is 4 KiB of base64 (and 64 bytes of JSON around it).
        let k = 3 << 10;
        let mut rows: Box<dyn Iterator<Item = Result<Row>> + Send> = Box::new(
            [
                file("a", k),
                file("b", k),
                file("c", k),
                file("huge", 10 * k),
                file("d", k),
            ]
            .into_iter(),
        );
        let budget = AtomicUsize::new(9 << 10);
        let (stopping, mut error) = (AtomicBool::new(false), None);
        let batches = Batches {
            rows: &mut rows,
            size: 10,
            budget: &budget,
            held: None,
            stopping: &stopping,
            error: &mut error,
        };
        let ids: Vec<Vec<String>> = batches
            .map(|b| b.into_iter().map(|r| r.id).collect())
            .collect();
        assert_eq!(ids, [vec!["a", "b"], vec!["c"], vec!["huge"], vec!["d"]]);
    }
}
