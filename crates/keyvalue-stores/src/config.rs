//! Which store serves each key-value label, from Spin's runtime-config file, so one file
//! configures `spin up --runtime-config-file F` and `runtime-host ... --runtime-config-file F`:
//!
//! ```toml
//! [key_value_store.default]
//! type = "redis"
//! url = "redis://127.0.0.1:6379"
//!
//! [key_value_store.archive]
//! type = "spin"          # SQLite
//! path = "archive.db"    # relative to this file's directory
//! ```
//!
//! Without a file, or for a label the file does not name, `default` is SQLite in the data
//! directory, as Spin's own default. Other sections of the file (variables providers,
//! SQLite databases, LLM compute) configure things this host does not provide and are
//! ignored with a warning.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where one label's data lives.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreSpec {
    /// SQLite at this file (Spin's `type = "spin"`).
    Sqlite(PathBuf),
    /// A Redis server (Spin's `type = "redis"`).
    Redis { url: String },
}

/// Every label the host serves, with its store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub labels: BTreeMap<String, StoreSpec>,
    /// The file the labels came from, for messages.
    pub source: Option<PathBuf>,
}

#[derive(Deserialize)]
struct RuntimeConfigFile {
    #[serde(default)]
    key_value_store: BTreeMap<String, StoreEntry>,
    #[serde(flatten)]
    others: BTreeMap<String, toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreEntry {
    #[serde(rename = "type")]
    kind: String,
    url: Option<String>,
    path: Option<PathBuf>,
}

impl StoreConfig {
    /// `default` in SQLite at `<data_dir>/sqlite_key_value.db`: the embedded default.
    pub fn embedded(data_dir: &Path) -> Self {
        let mut labels = BTreeMap::new();
        labels.insert(
            super::DEFAULT_LABEL.to_owned(),
            StoreSpec::Sqlite(data_dir.join(super::sqlite::DB_FILE)),
        );
        Self {
            labels,
            source: None,
        }
    }

    /// The embedded default, with the labels `file` (if any) configures on top.
    pub fn load(file: Option<&Path>, data_dir: &Path) -> Result<Self> {
        let mut config = Self::embedded(data_dir);
        let Some(file) = file else {
            return Ok(config);
        };
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading runtime config {}", file.display()))?;
        let base = file.parent().unwrap_or(Path::new("."));
        for (label, spec) in parse(&text, base, data_dir)
            .with_context(|| format!("runtime config {}", file.display()))?
        {
            config.labels.insert(label, spec);
        }
        config.source = Some(file.to_path_buf());
        Ok(config)
    }
}

fn parse(text: &str, base: &Path, data_dir: &Path) -> Result<BTreeMap<String, StoreSpec>> {
    let file: RuntimeConfigFile = toml::from_str(text)?;
    for section in file.others.keys() {
        tracing::warn!(
            section,
            "runtime config: this host uses only [key_value_store.*]; ignoring [{section}]"
        );
    }
    let mut labels = BTreeMap::new();
    for (label, entry) in file.key_value_store {
        let at = format!("[key_value_store.{label}]");
        let spec = match entry.kind.as_str() {
            "redis" => {
                if entry.path.is_some() {
                    bail!("{at}: `path` belongs to type \"spin\"; Redis takes `url`");
                }
                let url = entry.url.with_context(|| {
                    format!("{at}: type \"redis\" needs `url`, e.g. \"redis://127.0.0.1:6379\"")
                })?;
                if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
                    bail!(
                        "{at}: url `{}` must start with redis:// or rediss://",
                        super::redis::redact(&url)
                    );
                }
                StoreSpec::Redis { url }
            }
            "spin" => {
                if entry.url.is_some() {
                    bail!("{at}: `url` belongs to type \"redis\"; SQLite takes `path`");
                }
                StoreSpec::Sqlite(match entry.path {
                    Some(p) if p.is_absolute() => p,
                    Some(p) => base.join(p),
                    None => data_dir.join(super::sqlite::DB_FILE),
                })
            }
            other => bail!(
                "{at}: type \"{other}\" is not one this host provides; use \"redis\" (url) or \"spin\" (SQLite, path)"
            ),
        };
        labels.insert(label, spec);
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> BTreeMap<String, StoreSpec> {
        parse(text, Path::new("/etc/app"), Path::new("/data")).unwrap()
    }

    fn parse_err(text: &str) -> String {
        format!(
            "{:#}",
            parse(text, Path::new("/etc/app"), Path::new("/data")).unwrap_err()
        )
    }

    #[test]
    fn spins_own_examples_parse() {
        let labels = parse_ok(
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://localhost:6379\"\n\
             [key_value_store.other]\ntype = \"spin\"\npath = \"other.db\"\n\
             [key_value_store.abs]\ntype = \"spin\"\npath = \"/var/kv.db\"\n\
             [key_value_store.plain]\ntype = \"spin\"\n",
        );
        assert_eq!(
            labels["default"],
            StoreSpec::Redis {
                url: "redis://localhost:6379".into()
            }
        );
        assert_eq!(
            labels["other"],
            StoreSpec::Sqlite("/etc/app/other.db".into())
        );
        assert_eq!(labels["abs"], StoreSpec::Sqlite("/var/kv.db".into()));
        assert_eq!(
            labels["plain"],
            StoreSpec::Sqlite("/data/sqlite_key_value.db".into())
        );
    }

    #[test]
    fn other_sections_are_ignored() {
        let labels =
            parse_ok("[variables_provider]\ntype = \"env\"\n[llm_compute]\ntype = \"spin\"\n");
        assert!(labels.is_empty());
    }

    #[test]
    fn mistakes_name_the_section_and_the_fix() {
        let e = parse_err("[key_value_store.default]\ntype = \"redis\"\n");
        assert!(
            e.contains("[key_value_store.default]") && e.contains("needs `url`"),
            "{e}"
        );
        let e = parse_err("[key_value_store.default]\ntype = \"azure_cosmos\"\n");
        assert!(e.contains("azure_cosmos") && e.contains("\"redis\""), "{e}");
        let e = parse_err("[key_value_store.default]\ntype = \"redis\"\nurl = \"http://x\"\n");
        assert!(e.contains("redis://"), "{e}");
        let e = parse_err("[key_value_store.default]\ntype = \"spin\"\nurl = \"redis://x\"\n");
        assert!(e.contains("`url` belongs"), "{e}");
        let e = parse_err(
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://x\"\nport = 1\n",
        );
        assert!(e.contains("port"), "{e}");
    }
}
