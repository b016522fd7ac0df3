//! Reading a library, one row at a time (never the whole file): SMILES files, CSV and TSV with
//! a named column, SD files (structures turned into SMILES by `chem`), and JSON lines.

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

mod columns;
mod lines;
mod sd_records;
use columns::{ID_NAMES, TEXT_NAMES, Take, find, json_row};
use lines::{BoundedLines, Line};
pub use lines::{MAX_ROW_BYTES, too_long};
use sd_records::Records;

/// The kinds of input file, told by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.smi`/`.smiles`: a SMILES per line, optionally followed by whitespace and a name.
    Smiles,
    Csv,
    Tsv,
    /// `.sdf`/`.sd`: molfile records ending in `$$$$`.
    Sdf,
    /// `.jsonl`/`.ndjson`: a JSON object per line.
    JsonLines,
}

impl Format {
    pub fn of(path: &Path) -> Result<Self> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        Ok(match ext.as_str() {
            "smi" | "smiles" | "txt" => Self::Smiles,
            "csv" => Self::Csv,
            "tsv" | "tab" => Self::Tsv,
            "sdf" | "sd" => Self::Sdf,
            "jsonl" | "ndjson" => Self::JsonLines,
            _ => bail!(
                "cannot tell the format of {} from its extension: use .smi, .csv, .tsv, .sdf or .jsonl",
                path.display()
            ),
        })
    }
}

/// What a row gives the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A text input (a SMILES string, for the chemistry models).
    Text(String),
    /// A tabular input: named feature values.
    Features(Map<String, Value>),
    /// A picture or sound file, read and sent as base64 when its batch goes; `bytes` is its
    /// size when listed, for sizing batches.
    File {
        path: std::path::PathBuf,
        bytes: u64,
    },
    /// A picture's or sound's `http(s)` URL, fetched by the model.
    Url(String),
    /// The row could not become an input (a molfile that is not a structure, an empty cell):
    /// it is not sent, and this is its error.
    Unreadable(String),
}

/// One row of the library.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub payload: Payload,
}

impl Row {
    /// The input as the output shows it (the SMILES or the URL; empty for features).
    pub fn shown(&self) -> &str {
        match &self.payload {
            Payload::Text(t) | Payload::Url(t) => t,
            _ => "",
        }
    }

    /// About how many bytes the row adds to a request body: a file goes as base64 (4 bytes
    /// for every 3), with the JSON around each item.
    pub fn weight(&self) -> usize {
        let body = match &self.payload {
            Payload::File { bytes, .. } => (*bytes as usize).div_ceil(3) * 4,
            _ => self.shown().len(),
        };
        body + 64
    }
}

/// How rows are read: text from a column, or features from every chosen column.
#[derive(Debug, Clone, Default)]
pub struct Choice {
    /// `--column`: the text column (CSV/TSV/JSON lines); default: a column named like `smiles`.
    pub column: Option<String>,
    /// `--id-column`: the row's name; default: a column named `id` or `name`, else the row
    /// number (from 1).
    pub id_column: Option<String>,
    /// Read features (a tabular model) instead of text; the columns to take, or every column
    /// but the id when empty.
    pub features: Option<Vec<String>>,
    /// `column` holds URLs of pictures or sounds (`--url-column`), not text; a row without an
    /// id is named by its URL.
    pub urls: bool,
}

/// The header of a delimited file, for choosing columns before reading.
pub fn header(path: &Path, format: Format) -> Result<Vec<String>> {
    match format {
        Format::Csv | Format::Tsv => header_of(&mut delimited(path, format)?),
        _ => Ok(Vec::new()),
    }
}

/// Whether the file holds text inputs by default: SMILES and SD files do; a delimited file
/// or JSON lines when a text column is named or found.
pub fn has_text_column(path: &Path, format: Format, choice: &Choice) -> Result<bool> {
    Ok(match format {
        Format::Smiles | Format::Sdf => true,
        Format::Csv | Format::Tsv => {
            choice.column.is_some()
                || find(&header(path, format)?, &None, TEXT_NAMES, "text")?.is_some()
        }
        Format::JsonLines => {
            let first = lines_of(path)?
                .find(|l| l.as_ref().map_or(true, |l| !blank(l)))
                .transpose()?
                .and_then(|l| l.text().ok())
                .unwrap_or_default();
            let object: Map<String, Value> = serde_json::from_str(&first).unwrap_or_default();
            choice.column.is_some() || TEXT_NAMES.iter().any(|n| object.contains_key(*n))
        }
    })
}

/// A CSV or TSV file's records, one per line (a quoted field does not span lines, so no
/// record grows past [`MAX_ROW_BYTES`] however its quotes are placed): each a record, or
/// the length of a line too long to read.
type DelimitedRecords = Box<dyn Iterator<Item = Result<Result<csv::ByteRecord, u64>>> + Send>;

fn delimited(path: &Path, format: Format) -> Result<DelimitedRecords> {
    let delimiter = if format == Format::Tsv { b'\t' } else { b',' };
    let lines = lines_of(path)?.filter(|l| l.as_ref().map_or(true, |l| !blank(l)));
    Ok(Box::new(lines.map(move |line| {
        Ok(match line? {
            Line::Bytes(bytes) => Ok(record_of(&bytes, delimiter)),
            Line::TooLong(n) => Err(n),
        })
    })))
}

/// One line as a CSV or TSV record (an unclosed quote runs to the line's end).
fn record_of(line: &[u8], delimiter: u8) -> csv::ByteRecord {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(line);
    let mut record = csv::ByteRecord::new();
    // Reading bytes from a slice cannot fail.
    let _ = reader.read_byte_record(&mut record);
    record
}

/// The first record, as the column names.
fn header_of(records: &mut DelimitedRecords) -> Result<Vec<String>> {
    match records.next().transpose()? {
        None => Ok(Vec::new()),
        Some(Err(n)) => bail!("the header line is {n} bytes, over the limit of {MAX_ROW_BYTES}"),
        Some(Ok(record)) => record
            .iter()
            .map(|c| String::from_utf8(c.to_vec()).context("the header is not UTF-8 text"))
            .collect(),
    }
}

/// The lines of `path`, each at most [`MAX_ROW_BYTES`] held.
fn lines_of(path: &Path) -> Result<BoundedLines<BufReader<File>>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok(BoundedLines::new(BufReader::new(file), MAX_ROW_BYTES))
}

/// Rows in the file (a quick pass, for the progress bar's total).
pub fn count(path: &Path, format: Format) -> Result<u64> {
    let counted = |keep: fn(&Line) -> bool| -> Result<u64> {
        let mut n = 0;
        for line in lines_of(path)? {
            n += u64::from(keep(&line?));
        }
        Ok(n)
    };
    match format {
        Format::Csv | Format::Tsv => Ok(delimited(path, format)?.count().saturating_sub(1) as u64),
        Format::Sdf => counted(|l| matches!(l, Line::Bytes(b) if b.starts_with(b"$$$$"))),
        Format::Smiles => counted(smiles_line),
        Format::JsonLines => counted(|l| !blank(l)),
    }
}

/// Whether a line of a SMILES file is a row: not blank, not a `#` comment.
fn smiles_line(line: &Line) -> bool {
    match line {
        Line::Bytes(b) => {
            let t = b.trim_ascii();
            !t.is_empty() && !t.starts_with(b"#")
        }
        Line::TooLong(_) => true,
    }
}

fn blank(line: &Line) -> bool {
    matches!(line, Line::Bytes(b) if b.trim_ascii().is_empty())
}

/// A row that cannot be read: numbered, with why.
fn unreadable(i: usize, why: String) -> Row {
    Row {
        id: (i + 1).to_string(),
        payload: Payload::Unreadable(why),
    }
}

/// The rows of `path`, in order, read as they are needed.
pub fn rows(
    path: &Path,
    format: Format,
    choice: &Choice,
) -> Result<Box<dyn Iterator<Item = Result<Row>> + Send>> {
    let open = || File::open(path).with_context(|| format!("cannot open {}", path.display()));
    Ok(match format {
        Format::Smiles => Box::new(
            lines_of(path)?
                .filter(|l| l.as_ref().map_or(true, smiles_line))
                .enumerate()
                .map(|(i, line)| {
                    let line = match line.context("reading the SMILES file")?.text() {
                        Ok(text) => text,
                        Err(why) => return Ok(unreadable(i, why)),
                    };
                    let mut parts = line.trim().splitn(2, char::is_whitespace);
                    let smiles = parts.next().unwrap_or("").to_owned();
                    let id = parts.next().map(str::trim).filter(|s| !s.is_empty());
                    Ok(Row {
                        id: id.map_or_else(|| (i + 1).to_string(), str::to_owned),
                        payload: Payload::Text(smiles),
                    })
                }),
        ),
        Format::Csv | Format::Tsv => {
            let mut records = delimited(path, format)?;
            let header = header_of(&mut records)?;
            let id = find(&header, &choice.id_column, ID_NAMES, "id")?;
            let take = Take::new(&header, id, choice)?;
            Box::new(records.enumerate().map(move |(i, record)| {
                let record = match record.with_context(|| format!("reading row {}", i + 1))? {
                    Ok(r) => r,
                    Err(bytes) => return Ok(unreadable(i, too_long(bytes))),
                };
                let Ok(cells) = record
                    .iter()
                    .map(std::str::from_utf8)
                    .collect::<Result<Vec<_>, _>>()
                else {
                    // Named by its id cell where that much is text, else by its number.
                    let mut row = unreadable(i, "the row is not UTF-8 text".into());
                    let named = id.and_then(|c| record.get(c)).map(std::str::from_utf8);
                    if let Some(Ok(name)) = named.filter(|n| n.is_ok_and(|n| !n.trim().is_empty()))
                    {
                        row.id = name.to_owned();
                    }
                    return Ok(row);
                };
                Ok(take.row(i, id.and_then(|c| cells.get(c).copied()), |c| {
                    cells.get(c).map(|s| Value::String((*s).to_owned()))
                }))
            }))
        }
        Format::JsonLines => {
            let choice = choice.clone();
            Box::new(
                lines_of(path)?
                    .filter(|l| l.as_ref().map_or(true, |l| !blank(l)))
                    .enumerate()
                    .map(move |(i, line)| {
                        let line = match line.context("reading the JSON lines")?.text() {
                            Ok(text) => text,
                            Err(why) => return Ok(unreadable(i, why)),
                        };
                        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(&line) else {
                            return Ok(Row {
                                id: (i + 1).to_string(),
                                payload: Payload::Unreadable(
                                    "the line is not a JSON object".into(),
                                ),
                            });
                        };
                        Ok(json_row(i, object, &choice))
                    }),
            )
        }
        Format::Sdf => {
            let id_field = choice.id_column.clone();
            let lines = BoundedLines::new(BufReader::new(open()?), MAX_ROW_BYTES);
            Box::new(Records::new(lines).map(move |record| {
                let (i, text) = match record? {
                    (i, Ok(text)) => (i, text),
                    (i, Err(why)) => return Ok(unreadable(i, why)),
                };
                let named = id_field
                    .as_deref()
                    .and_then(|f| chem::molfile::data_item(&text, f));
                let title = chem::molfile::title(&text);
                let id = named
                    .or_else(|| (!title.is_empty()).then(|| title.to_owned()))
                    .unwrap_or_else(|| (i + 1).to_string());
                let payload = match chem::molfile::to_smiles(&text) {
                    Ok(smiles) => Payload::Text(smiles),
                    Err(e) => Payload::Unreadable(format!("SD record {}: {e}", i + 1)),
                };
                Ok(Row { id, payload })
            }))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unclosed_quote_ends_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.csv");
        std::fs::write(&path, "name,smiles\na,\"CCO\nb,CCN\n").unwrap();
        let choice = Choice::default();
        let rows: Vec<Row> = rows(&path, Format::Csv, &choice)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(rows[1].payload, Payload::Text("CCN".into()));
        assert_eq!(count(&path, Format::Csv).unwrap(), 2);
    }

    #[test]
    fn a_url_column_names_rows_by_their_urls_and_refuses_other_schemes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scans.csv");
        let text = "image_url,note\nhttps://x.org/a.png,ok\n,empty\nftp://x.org/b.png,\n";
        std::fs::write(&path, text).unwrap();
        let choice = Choice {
            column: Some("image_url".into()),
            urls: true,
            ..Choice::default()
        };
        let rows: Vec<Row> = rows(&path, Format::Csv, &choice)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows[0].id, "https://x.org/a.png");
        assert_eq!(rows[0].payload, Payload::Url("https://x.org/a.png".into()));
        assert_eq!(rows[1].id, "2");
        assert_eq!(
            rows[1].payload,
            Payload::Unreadable("the URL cell is empty".into())
        );
        assert!(
            matches!(&rows[2].payload, Payload::Unreadable(why) if why.contains("not an http(s) URL"))
        );
    }
}
