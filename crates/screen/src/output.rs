//! Writing the results: a CSV or JSON-lines file, a row per input row in input order, each
//! batch appended with one write of whole lines, so an interrupted run leaves a file that is
//! valid up to its last complete row, and `--resume` can continue it.

use crate::input::Row;
use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Csv,
    Jsonl,
}

impl OutputFormat {
    /// From the file's extension: `.jsonl`/`.ndjson` are JSON lines, anything else CSV.
    pub fn of(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl" | "ndjson") => Self::Jsonl,
            _ => Self::Csv,
        }
    }
}

/// What the model said about one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The prediction's `results` (an object) when it succeeded.
    pub results: Option<Map<String, Value>>,
    pub error: Option<String>,
}

impl Outcome {
    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            results: None,
            error: Some(error.into()),
        }
    }

    /// Whether the input is inside the model's applicability domain: the result's
    /// `in_domain`, else molprop's `in_reliable_range`; unknown when the model says neither.
    pub fn in_domain(&self) -> Option<bool> {
        let r = self.results.as_ref()?;
        r.get("in_domain")
            .or_else(|| r.get("in_reliable_range"))
            .and_then(Value::as_bool)
    }
}

/// Rows already in an output file, found when resuming.
#[derive(Debug, Default, PartialEq)]
pub struct Existing {
    pub rows: u64,
    pub last_id: Option<String>,
    /// The CSV header found (its result columns are kept for the rows to come).
    pub header: Option<Vec<String>>,
    /// What those rows say, so the summary accounts for the whole file: their failures
    /// (each error, with how many rows have it) and rows outside the domain.
    pub errors: std::collections::HashMap<String, u64>,
    pub outside_domain: u64,
    /// Every row's id, when asked for: a run of files resumes by them (see
    /// [`crate::plan::Plan::keyed`]).
    pub ids: std::collections::HashSet<String>,
    keep_ids: bool,
}

impl Existing {
    /// Counts one row already written: its error (if any) and whether it was in the domain.
    fn tally(&mut self, id: Option<&str>, error: Option<&str>, in_domain: Option<bool>) {
        self.rows += 1;
        self.last_id = id.map(str::to_owned);
        if let (Some(id), true) = (id, self.keep_ids) {
            self.ids.insert(id.to_owned());
        }
        if let Some(e) = error.filter(|e| !e.is_empty()) {
            *self.errors.entry(e.to_owned()).or_default() += 1;
        }
        if in_domain == Some(false) {
            self.outside_domain += 1;
        }
    }
}

/// Reads what an earlier run wrote to `file` (the output at `path`), cutting a last line
/// left incomplete by an interruption; the file is left positioned at its end. `keep_ids`:
/// every row's id is kept, not only the last.
pub fn existing(
    file: &mut File,
    path: &Path,
    format: OutputFormat,
    keep_ids: bool,
) -> Result<Existing> {
    // Keep whole lines only.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(file, &mut bytes)
        .with_context(|| format!("cannot read {} to resume it", path.display()))?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        file.set_len(complete as u64)?;
    }
    file.seek(SeekFrom::End(0))?;
    let text =
        std::str::from_utf8(&bytes[..complete]).context("the output file is not UTF-8 text")?;
    match format {
        OutputFormat::Jsonl => {
            let mut found = Existing {
                keep_ids,
                ..Existing::default()
            };
            for (n, line) in text.lines().enumerate() {
                let value: Value = serde_json::from_str(line).with_context(|| {
                    format!(
                        "line {} of {} is not JSON: not an output of this command",
                        n + 1,
                        path.display()
                    )
                })?;
                let error = value.get(ERROR).and_then(Value::as_str);
                let id = value.get("id").and_then(Value::as_str);
                found.tally(id, error, value.get(IN_DOMAIN).and_then(Value::as_bool));
            }
            Ok(found)
        }
        OutputFormat::Csv => {
            let mut reader = csv::ReaderBuilder::new()
                .flexible(true)
                .from_reader(text.as_bytes());
            let header: Vec<String> = reader.headers()?.iter().map(str::to_owned).collect();
            if header.first().map(String::as_str) != Some("id") {
                if text.is_empty() {
                    return Ok(Existing::default());
                }
                bail!(
                    "{} does not start with an `id` column: not an output of this command",
                    path.display()
                );
            }
            let at = |name: &str| header.iter().position(|h| h == name);
            let (error_at, domain_at) = (at(ERROR), at(IN_DOMAIN));
            let mut found = Existing {
                header: Some(header.clone()),
                keep_ids,
                ..Existing::default()
            };
            for record in reader.records() {
                let record = record?;
                let error = error_at.and_then(|i| record.get(i));
                let in_domain = domain_at.and_then(|i| record.get(i)?.parse::<bool>().ok());
                found.tally(record.get(0), error, in_domain);
            }
            Ok(found)
        }
    }
}

/// The output file being written.
pub struct Output {
    file: File,
    format: OutputFormat,
    /// The name of the input column (`smiles`, or the `--column`); `None` for features.
    input_column: Option<String>,
    /// CSV: the result columns, fixed by the first batch with a success (or a resumed file).
    columns: Option<Vec<String>>,
    /// Fields the model documents (its capabilities' output schema, and `warning`): columns
    /// even when the first batch's results lack them.
    known_fields: Vec<String>,
    /// A tabular model's features in its own order (model.toml's): the echoed input's
    /// columns (`input.<feature>`) follow it, not the sorted order its JSON comes in.
    feature_order: Vec<String>,
    /// Result fields seen later that the CSV header lacks (reported once each).
    pub dropped: Vec<String>,
}

/// Columns every CSV output has around the result fields.
const IN_DOMAIN: &str = "in_domain";
const ERROR: &str = "error";

impl Output {
    /// Writing to `file` (claimed: see [`crate::claim`]): a new file, or the file of an
    /// earlier run when `resume` holds what it has.
    pub fn open(
        file: File,
        format: OutputFormat,
        input_column: Option<String>,
        known_fields: Vec<String>,
        resume: Option<&Existing>,
    ) -> Result<Self> {
        let columns = resume.and_then(|e| e.header.clone()).map(|h| {
            let skip = 1 + usize::from(input_column.is_some());
            h.into_iter()
                .skip(skip)
                .filter(|c| c != IN_DOMAIN && c != ERROR)
                .collect()
        });
        Ok(Self {
            file,
            format,
            input_column,
            columns,
            known_fields,
            feature_order: Vec::new(),
            dropped: Vec::new(),
        })
    }

    /// The model's features in its own order, for the echoed input's columns.
    pub fn with_feature_order(mut self, features: Vec<String>) -> Self {
        self.feature_order = features;
        self
    }

    /// Appends one batch's rows in one write.
    pub fn write(&mut self, rows: &[(Row, Outcome)]) -> Result<()> {
        let mut text = Vec::new();
        match self.format {
            OutputFormat::Jsonl => {
                for (row, outcome) in rows {
                    let mut line = json!({"id": row.id});
                    if let Some(column) = &self.input_column {
                        line[column] = json!(row.shown());
                    }
                    line["success"] = json!(outcome.results.is_some());
                    line["results"] = outcome.results.clone().map_or(Value::Null, Value::Object);
                    line[IN_DOMAIN] = json!(outcome.in_domain());
                    line[ERROR] = json!(outcome.error);
                    serde_json::to_writer(&mut text, &line)?;
                    text.push(b'\n');
                }
            }
            OutputFormat::Csv => {
                let new_file = self.columns.is_none();
                if new_file {
                    self.columns = Some(self.first_columns(rows));
                }
                let columns = self.columns.clone().unwrap_or_default();
                let mut csv = csv::Writer::from_writer(&mut text);
                if new_file {
                    let mut header = vec!["id".to_owned()];
                    header.extend(self.input_column.clone());
                    header.extend(columns.iter().cloned());
                    header.extend([IN_DOMAIN.to_owned(), ERROR.to_owned()]);
                    csv.write_record(&header)?;
                }
                for (row, outcome) in rows {
                    let flat: Map<String, Value> = outcome
                        .results
                        .iter()
                        .flat_map(|r| flatten("", r))
                        .collect();
                    for key in flat.keys() {
                        if !columns.contains(key) && key != IN_DOMAIN && !self.dropped.contains(key)
                        {
                            self.dropped.push(key.clone());
                        }
                    }
                    let mut record = vec![row.id.clone()];
                    if self.input_column.is_some() {
                        record.push(row.shown().to_owned());
                    }
                    record.extend(
                        columns
                            .iter()
                            .map(|c| flat.get(c).map(cell).unwrap_or_default()),
                    );
                    record.push(
                        outcome
                            .in_domain()
                            .map(|b| b.to_string())
                            .unwrap_or_default(),
                    );
                    record.push(outcome.error.clone().unwrap_or_default());
                    csv.write_record(&record)?;
                }
                csv.flush()?;
            }
        }
        self.file.write_all(&text)?;
        Ok(())
    }

    /// The result columns of a new CSV file: the fields the first batch's results have (nested
    /// objects flattened as `a.b`), then the fields the model documents that they lack.
    fn first_columns(&self, rows: &[(Row, Outcome)]) -> Vec<String> {
        let mut columns: Vec<String> = Vec::new();
        for results in rows.iter().filter_map(|(_, o)| o.results.as_ref()) {
            for (key, _) in flatten("", results) {
                if !columns.contains(&key) && key != IN_DOMAIN {
                    columns.push(key);
                }
            }
        }
        // The prediction first: the column people look for.
        columns.sort_by_key(|c| !(c == "prediction" || c.starts_with("prediction.")));
        order_features(&mut columns, &self.feature_order);
        for field in &self.known_fields {
            let nested = format!("{field}.");
            if field != IN_DOMAIN && !columns.iter().any(|c| c == field || c.starts_with(&nested)) {
                columns.push(field.clone());
            }
        }
        columns
    }
}

/// Puts the echoed input's feature columns (`input.<feature>`) in `order`, in the places they
/// hold among the other columns.
fn order_features(columns: &mut [String], order: &[String]) {
    let rank = |c: &String| {
        let name = c.strip_prefix("input.")?;
        order.iter().position(|f| f == name)
    };
    let places: Vec<usize> = (0..columns.len())
        .filter(|&i| rank(&columns[i]).is_some())
        .collect();
    let mut features: Vec<String> = places.iter().map(|&i| columns[i].clone()).collect();
    features.sort_by_key(|c| rank(c));
    for (place, column) in places.into_iter().zip(features) {
        columns[place] = column;
    }
}

/// A result object as `(column, value)` pairs: nested objects become `outer.inner` columns.
fn flatten(prefix: &str, object: &Map<String, Value>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (key, value) in object {
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) if !inner.is_empty() => out.extend(flatten(&name, inner)),
            other => out.push((name, other.clone())),
        }
    }
    out
}

/// A value as a CSV cell: strings bare, other values as JSON.
fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_columns_follow_the_model_s_order() {
        let mut columns: Vec<String> = [
            "prediction",
            "input.petal_length",
            "input.sepal_length",
            "input.unlisted",
            "probabilities.a",
        ]
        .map(str::to_owned)
        .to_vec();
        let order = ["sepal_length", "petal_length"].map(str::to_owned);
        order_features(&mut columns, &order);
        assert_eq!(
            columns,
            [
                "prediction",
                "input.sepal_length",
                "input.petal_length",
                "input.unlisted",
                "probabilities.a"
            ]
        );
    }
}
