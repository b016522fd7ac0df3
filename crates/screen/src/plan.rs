//! What a run reads and sends, chosen from the inputs named and what the model takes: a
//! table of texts or features (one file), picture or sound files (files, folders, globs), or
//! a table's column of their URLs (`--url-column`).

use crate::PredictArgs;
use crate::files::{self, MediaKind};
use crate::input::{self, Choice, Format, Row};
use crate::target::{Input, Target};
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

pub struct Plan {
    pub input: Input,
    /// The rows in order, read as they are needed.
    pub rows: Box<dyn Iterator<Item = Result<Row>> + Send>,
    pub total: u64,
    /// The output's column showing each row's input (the SMILES or URL column); none for
    /// features, nor for files (the id is the path).
    pub input_column: Option<String>,
    /// A resumed run skips the rows whose ids (a file's path, a URL) the output has, rather
    /// than as many rows as it has: a folder may have gained or lost files in between.
    pub keyed: bool,
}

pub fn plan(args: &PredictArgs, target: &Target) -> Result<Plan> {
    if let Some(column) = &args.url_column {
        return urls(args, target, column);
    }
    if names_files(&args.inputs) {
        return media_files(args, target);
    }
    let [path] = args.inputs.as_slice() else {
        bail!("name one table (CSV, TSV, SMILES, SD or JSON lines) to score");
    };
    if let Some(kind) = target.media()
        && !target.takes("text")
        && !target.takes("tabular")
    {
        bail!(
            "{} takes {} input: give files, a folder or a glob ('scans/*.png') of them, or a \
             table with a column of their URLs named by --url-column",
            target.model,
            kind.input_type()
        );
    }
    table(args, target, path)
}

/// Whether the inputs are pictures or sounds rather than one table: several inputs, a
/// folder, a glob, or a file named like a picture or sound.
fn names_files(inputs: &[PathBuf]) -> bool {
    inputs.len() > 1
        || inputs
            .iter()
            .any(|p| p.is_dir() || files::is_pattern(p) || files::is_media(p))
}

/// The model's kind of file, or why it takes none.
fn media_kind(target: &Target, what: &str) -> Result<MediaKind> {
    match target.media() {
        Some(kind) => Ok(kind),
        None => bail!(
            "{} takes {} input, not {what} of pictures or sounds",
            target.model,
            target.input_types.join(" or ")
        ),
    }
}

fn media_files(args: &PredictArgs, target: &Target) -> Result<Plan> {
    let kind = media_kind(target, "files")?;
    let listed = files::list(&args.inputs, kind)?;
    Ok(Plan {
        input: Input::Media { kind, urls: false },
        total: listed.len() as u64,
        rows: Box::new(listed.into_iter().map(|p| Ok(files::row(&p)))),
        input_column: None,
        keyed: true,
    })
}

fn urls(args: &PredictArgs, target: &Target, column: &str) -> Result<Plan> {
    let kind = media_kind(target, "URLs")?;
    let [path] = args.inputs.as_slice() else {
        bail!("--url-column reads one table (CSV, TSV or JSON lines)");
    };
    let format = Format::of(path)?;
    if matches!(format, Format::Smiles | Format::Sdf) {
        bail!("--url-column reads a CSV, TSV or JSON lines file");
    }
    let choice = Choice {
        column: Some(column.to_owned()),
        id_column: args.id_column.clone(),
        features: None,
        urls: true,
    };
    Ok(Plan {
        input: Input::Media { kind, urls: true },
        total: input::count(path, format)?,
        rows: input::rows(path, format, &choice)?,
        input_column: Some(column.to_owned()),
        keyed: true,
    })
}

/// A library of SMILES (or other texts) or of feature rows, as before pictures and sounds.
fn table(args: &PredictArgs, target: &Target, path: &Path) -> Result<Plan> {
    let format = Format::of(path)?;
    let mut choice = Choice {
        column: args.column.clone(),
        id_column: args.id_column.clone(),
        features: None,
        urls: false,
    };
    let text = input::has_text_column(path, format, &choice)? && target.takes("text");
    if !text {
        if !target.takes("tabular") {
            let columns = input::header(path, format)?;
            let listed = if columns.is_empty() {
                String::new()
            } else {
                format!(" (its columns: {})", columns.join(", "))
            };
            bail!(
                "{} takes text (SMILES), but {} has no SMILES column{listed}: name it with --column",
                target.model,
                path.display()
            );
        }
        if matches!(format, Format::Smiles | Format::Sdf) {
            bail!(
                "{} takes tabular input (feature columns): give a CSV, TSV or JSON lines file",
                target.model
            );
        }
        choice.features = Some(target.features.clone());
    }
    Ok(Plan {
        input: if text { Input::Text } else { Input::Tabular },
        total: input::count(path, format)?,
        rows: input::rows(path, format, &choice)?,
        input_column: text.then(|| args.column.clone().unwrap_or_else(|| "smiles".to_owned())),
        keyed: false,
    })
}
