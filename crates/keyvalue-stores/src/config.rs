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
//! The file is refused when another user could change it (writable by group or others: they
//! would choose where this host's data goes), or read its secret (a Redis URL with a password,
//! readable by others); the error says what to `chmod` (issue 56, item 11).
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
        let labels = parse(&text, base, data_dir)
            .with_context(|| format!("runtime config {}", file.display()))?;
        check_access(file, holds_secret(&labels))?;
        refuse_placeholder_password(file, &labels)?;
        for (label, spec) in labels {
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

/// Whether a label's store is reached with a password (`redis://[user]:password@host`).
fn holds_secret(labels: &BTreeMap<String, StoreSpec>) -> bool {
    labels.values().any(|spec| match spec {
        StoreSpec::Redis { url } => user_info(url).is_some(),
        StoreSpec::Sqlite(_) => false,
    })
}

/// The `user:password` part of a Redis URL's authority, if it has one (an `@` in its path
/// or query is not one).
fn user_info(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.rsplit_once('@').map(|(user_info, _)| user_info)
}

/// Refuses a Redis password that is the example files' placeholder (`change-me-...`, as
/// `deploy/fleet/runtime-config.toml` ships it): everybody who read the documents knows it.
fn refuse_placeholder_password(file: &Path, labels: &BTreeMap<String, StoreSpec>) -> Result<()> {
    for (label, spec) in labels {
        let StoreSpec::Redis { url } = spec else {
            continue;
        };
        let password = user_info(url)
            .and_then(|user_info| user_info.split_once(':'))
            .map(|(_, password)| password);
        if password.is_some_and(|p| p.to_ascii_lowercase().starts_with("change-me")) {
            bail!(
                "runtime config {}: [key_value_store.{label}]'s Redis password is the \
                 placeholder from the example files: set the password of your Redis \
                 (`requirepass`) in both files",
                file.display()
            );
        }
    }
    Ok(())
}

/// Refuses a runtime config another user could write, or read when it holds a password;
/// warns when only the file's group can read the password.
#[cfg(unix)]
fn check_access(file: &Path, secret: bool) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(file)
        .with_context(|| format!("reading runtime config {}", file.display()))?;
    let mode = meta.permissions().mode() & 0o7777;
    let shown = file.display();
    // Its owner may rewrite it whatever its mode: this user's or root's only.
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != 0 && meta.uid() != me {
        bail!(
            "runtime config {shown} belongs to another user (uid {}), who could point this \
             host's stores anywhere: make this user or root its owner",
            meta.uid()
        );
    }
    if mode & 0o022 != 0 {
        bail!(
            "runtime config {shown} can be written by other users (mode {mode:04o}), who could \
             point this host's stores anywhere: run `chmod go-w {shown}` (`chmod 600 {shown}` \
             when it holds a password)"
        );
    }
    if secret && mode & 0o004 != 0 {
        bail!(
            "runtime config {shown} holds a Redis password and every user can read it (mode \
             {mode:04o}): run `chmod 600 {shown}` (or `chmod 640` with a group of its own)"
        );
    }
    if secret && mode & 0o040 != 0 {
        tracing::warn!(
            file = %shown,
            "the runtime config holds a Redis password its group can read (mode {mode:04o}); \
             `chmod 600` keeps it to this host's user"
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_access(_file: &Path, _secret: bool) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 56, item 11: a config with Redis's password readable by others, or any config
    /// writable by others, is refused with the `chmod` to run; private ones load.
    #[cfg(unix)]
    #[test]
    fn configs_others_can_read_or_write_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("kv-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let with_password = dir.join("secret.toml");
        std::fs::write(
            &with_password,
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://:pw@10.0.0.10:6379\"\n",
        )
        .unwrap();
        let plain = dir.join("plain.toml");
        std::fs::write(&plain, "[key_value_store.other]\ntype = \"spin\"\n").unwrap();
        let chmod = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        let load = |p: &Path| StoreConfig::load(Some(p), &dir).map(|_| ());
        chmod(&with_password, 0o644);
        let e = format!("{:#}", load(&with_password).unwrap_err());
        assert!(e.contains("password") && e.contains("chmod 600"), "{e}");
        assert!(!e.contains("pw@"), "the password is never shown: {e}");
        chmod(&with_password, 0o640);
        load(&with_password).unwrap();
        chmod(&with_password, 0o600);
        load(&with_password).unwrap();
        let placeholder = dir.join("placeholder.toml");
        std::fs::write(
            &placeholder,
            "[key_value_store.default]\ntype = \"redis\"\n\
             url = \"redis://:change-me-redis-password@10.0.0.10:6379\"\n",
        )
        .unwrap();
        chmod(&placeholder, 0o600);
        let e = format!("{:#}", load(&placeholder).unwrap_err());
        assert!(
            e.contains("placeholder") && e.contains("requirepass"),
            "{e}"
        );
        chmod(&plain, 0o644);
        load(&plain).unwrap();
        for writable in [0o664, 0o646, 0o666] {
            chmod(&plain, writable);
            let e = format!("{:#}", load(&plain).unwrap_err());
            assert!(
                e.contains("written by other users") && e.contains("chmod go-w"),
                "{e}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Another user's config, mode 0600 or not, is theirs to rewrite (as root only: chown).
    #[cfg(unix)]
    #[test]
    fn another_users_runtime_config_is_refused() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIPPED: another_users_runtime_config_is_refused needs root (chown)");
            return;
        }
        let dir = std::env::temp_dir().join(format!("kv-config-owner-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("runtime-config.toml");
        std::fs::write(&file, "").unwrap();
        assert!(check_access(&file, false).is_ok());
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
        let error = format!("{:#}", check_access(&file, false).unwrap_err());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(error.contains("belongs to another user"), "{error}");
    }

    #[test]
    fn a_password_in_a_url_is_a_secret() {
        let redis = |url: &str| {
            BTreeMap::from([("default".to_owned(), StoreSpec::Redis { url: url.into() })])
        };
        assert!(holds_secret(&redis("redis://:pw@h:6379")));
        assert!(holds_secret(&redis("rediss://user:pw@h:6379/0")));
        assert!(!holds_secret(&redis("redis://h:6379/0")));
        assert!(!holds_secret(&redis("redis://h:6379/0?x=a@b")));
    }

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
