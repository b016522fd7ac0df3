//! The committed inputs the loads are made of: the reference molecules and sentences.

use anyhow::{Context, Result};

/// The reference sentences of the embeddings loads.
const SENTENCES: &str = "tests/data/minilm/sentences.txt";

/// SMILES of the first column of the reference file (tab-separated, one header row).
pub fn molecules(file: &std::path::Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(file).with_context(|| {
        format!(
            "reading the molecule mix {} (pass --molecules)",
            file.display()
        )
    })?;
    let smiles: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    anyhow::ensure!(!smiles.is_empty(), "no molecules in {}", file.display());
    Ok(smiles)
}

/// The committed reference sentences.
pub fn sentences() -> Result<Vec<String>> {
    Ok(std::fs::read_to_string(SENTENCES)
        .with_context(|| format!("reading {SENTENCES} (run the bench from the repository root)"))?
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}
