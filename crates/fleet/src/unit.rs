//! `deploy/fleet/runtime-host.service` read the way systemd reads it, so the fleet test
//! starts and stops each host exactly as the unit in docs/deploy.md says: its `ExecStart`
//! with `${VAR}` taken from its `EnvironmentFile`, its `KillSignal`, its `Type`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The unit's file, and the deployment files beside it.
pub fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/fleet")
}

#[derive(Debug)]
pub struct Unit {
    /// `ExecStart`, split into words, variables not yet expanded.
    pub exec_start: Vec<String>,
    pub environment_file: String,
    pub kill_signal: String,
    pub service_type: String,
    /// `User=`: whom systemd runs `ExecStart` as.
    pub user: String,
}

impl Unit {
    /// `deploy/fleet/runtime-host.service`, the unit the package installs.
    pub fn load() -> Self {
        Self::from_file(&deploy_dir().join("runtime-host.service"))
    }

    /// The unit at `path` (the installed `/lib/systemd/system/runtime-host.service`).
    pub fn from_file(path: &Path) -> Self {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let value = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .unwrap_or_else(|| panic!("{} has no {key}=", path.display()))
                .trim()
                .to_owned()
        };
        Self {
            exec_start: value("ExecStart")
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
            environment_file: value("EnvironmentFile"),
            kill_signal: value("KillSignal"),
            service_type: value("Type"),
            user: value("User"),
        }
    }

    /// `ExecStart` with each `${VAR}` from `env`, and each of the unit's paths (the first of
    /// a pair) moved to where this run keeps it (the second), longest first.
    pub fn command_line(
        &self,
        env: &BTreeMap<String, String>,
        paths: &[(&str, &Path)],
    ) -> Vec<String> {
        let mut paths = paths.to_vec();
        paths.sort_by_key(|(unit, _)| std::cmp::Reverse(unit.len()));
        self.exec_start
            .iter()
            .map(|word| {
                let mut word = word.clone();
                for (name, value) in env {
                    word = word.replace(&format!("${{{name}}}"), value);
                }
                assert!(
                    !word.contains("${"),
                    "no value for {word} in the environment file"
                );
                match paths.iter().find(|(unit, _)| word.starts_with(unit)) {
                    Some((unit, here)) => format!("{}{}", here.display(), &word[unit.len()..]),
                    None => word,
                }
            })
            .collect()
    }
}

/// Where a run without the package keeps each of the paths the unit names (the package's
/// installed layout), for [`Unit::command_line`].
pub struct Layout<'a> {
    /// `/usr/bin/runtime-host`: a cargo build finds its components beside it, as the
    /// installed one does in `/usr/lib/runtime-host`.
    pub binary: &'a Path,
    /// `/etc/runtime-host`.
    pub etc: &'a Path,
    /// `/var/lib/runtime-host` (its `data/` below it).
    pub state: &'a Path,
    /// `/var/lib/runtime-host/models`, the watched models directory.
    pub models: &'a Path,
    /// `/usr/share/runtime-host/ai-models`.
    pub ai_models: &'a Path,
    /// `/var/lib/runtime-host/cache`.
    pub cache: &'a Path,
}

impl<'a> Layout<'a> {
    /// (the unit's path, where this run keeps it).
    pub fn pairs(&self) -> Vec<(&'static str, &'a Path)> {
        vec![
            ("/usr/bin/runtime-host", self.binary),
            ("/etc/runtime-host", self.etc),
            ("/var/lib/runtime-host", self.state),
            ("/var/lib/runtime-host/models", self.models),
            ("/usr/share/runtime-host/ai-models", self.ai_models),
            ("/var/lib/runtime-host/cache", self.cache),
        ]
    }
}

/// An environment file's `NAME=value` lines (comments and blank lines skipped).
pub fn parse_env(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// `deploy/fleet/<name>` with each `(old, new)` replaced; each `old` must be there, so a
/// change to the file that drops a value the test relies on fails here, loudly.
pub fn deploy_file_with(name: &str, replacements: &[(&str, &str)]) -> String {
    let path = deploy_dir().join(name);
    let mut text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for (old, new) in replacements {
        assert!(
            text.contains(old),
            "{} no longer has `{old}`",
            path.display()
        );
        text = text.replace(old, new);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 56, item 11: the unit's system user has HOME=/nonexistent, so the unit names the
    /// compilation cache itself, inside the state directory systemd makes for that user.
    #[test]
    fn the_unit_keeps_its_compilation_cache_in_its_state_directory() {
        let unit = Unit::load();
        let at = unit
            .exec_start
            .iter()
            .position(|w| w == "--cache-dir")
            .expect("ExecStart names --cache-dir");
        let dir = &unit.exec_start[at + 1];
        assert!(dir.starts_with("/var/lib/runtime-host/"), "{dir}");
        let text = std::fs::read_to_string(deploy_dir().join("runtime-host.service")).unwrap();
        assert!(text.lines().any(|l| l == "StateDirectory=runtime-host"));
        assert!(text.lines().any(|l| l == "StateDirectoryMode=0700"));
    }
}
