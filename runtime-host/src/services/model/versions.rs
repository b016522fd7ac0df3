//! A model's files as versions: a cheap fingerprint to notice a change, a digest to name
//! a version, and a snapshot so a version's files stay as they were while it serves. The
//! files are read as untrusted input ([`Tree`]): regular files only, no link leading out,
//! at most 1 GiB, streamed; these functions block, so async callers run them on a blocking
//! thread ([`snapshot`] and [`version_of`] are given as such).
//!
//! Snapshots are pruned as versions come and go: a model keeps the version serving and the
//! one before it (whose requests may still be finishing); failed versions, `.partial` copies
//! and the snapshots of models `up` no longer deploys are removed ([`prune`]).

use crate::services::model::spec::ModelSpec;
use anyhow::Result;
use host_core::capabilities::files::Tree;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a model's files look like now (path, size, modification time of each file): cheap
/// to take every scan; a difference means a new version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<(PathBuf, u64, Option<SystemTime>)>);

impl Fingerprint {
    /// Only metadata is read. A tree that cannot be deployed (a link leading out, too
    /// large) has a fingerprint too, so it is tried again once it changes.
    pub fn of(source: &Path) -> Self {
        match Tree::list(source) {
            Ok(tree) => Self(
                tree.files
                    .into_iter()
                    .map(|f| (f.relative, f.len, f.modified))
                    .collect(),
            ),
            Err(e) => Self(vec![(PathBuf::from(format!("{e:#}")), 0, None)]),
        }
    }
}

/// A version's name: `sha256:` and the first 12 hex digits of the SHA-256 of its files
/// (relative paths and contents, in order), so the same files are the same version on
/// every machine.
pub fn version_of(source: &Path) -> Result<String> {
    let tree = Tree::list(source)?;
    let mut hash = Sha256::new();
    tree.hash(&mut hash)?;
    Ok(name(hash))
}

fn name(hash: Sha256) -> String {
    let digest = hash.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A model's version, and, for a model directory, its files copied to
/// `snapshots/<name>/<version>/` of the data directory and mounted from there, so a
/// version's files stay as they were while it serves; a component is read once, when
/// compiled, and needs none. The files are hashed first: a version already copied (every
/// unchanged model when `up` starts again) is read once and not written again.
pub fn snapshot(mut spec: ModelSpec, data_dir: &Path) -> Result<(ModelSpec, String)> {
    if !spec.source.is_dir() {
        let version = version_of(&spec.source)?;
        return Ok((spec, version));
    }
    let tree = Tree::list(&spec.source)?;
    for skipped in &tree.skipped {
        tracing::warn!(model = %spec.name, file = ?skipped, "not a regular file (or a link to a directory): left out of the model's files");
    }
    let dir = snapshots(data_dir).join(&spec.name);
    let mut hash = Sha256::new();
    tree.hash(&mut hash)?;
    let mut version = name(hash);
    let mut done = dir.join(version.replace(':', "-"));
    if !done.is_dir() {
        let partial = dir.join(format!(".partial-{}", uuid::Uuid::new_v4().simple()));
        let mut hash = Sha256::new();
        let copied = tree.copy_to(&partial, &mut hash);
        // The copy's own digest names it: the files may have changed since they were hashed.
        version = name(hash);
        done = dir.join(version.replace(':', "-"));
        let kept = copied.and_then(|()| {
            if done.is_dir() {
                std::fs::remove_dir_all(&partial)?;
            } else {
                std::fs::rename(&partial, &done)?;
            }
            Ok(())
        });
        if let Err(e) = kept {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(e.context(format!(
                "copying {} to {}",
                spec.source.display(),
                dir.display()
            )));
        }
    }
    let done = std::fs::canonicalize(&done)?;
    spec.mounts = vec![format!("{}:/model", done.display())];
    Ok((spec, version))
}

/// [`snapshot`] on a blocking thread.
pub async fn snapshot_blocking(spec: ModelSpec, data_dir: &Path) -> Result<(ModelSpec, String)> {
    let data_dir = data_dir.to_owned();
    tokio::task::spawn_blocking(move || snapshot(spec, &data_dir)).await?
}

/// [`version_of`] on a blocking thread.
pub async fn version_blocking(source: &Path) -> Result<String> {
    let source = source.to_owned();
    tokio::task::spawn_blocking(move || version_of(&source)).await?
}

/// [`Fingerprint::of`] on a blocking thread.
pub async fn fingerprint_blocking(source: &Path) -> Fingerprint {
    let source = source.to_owned();
    tokio::task::spawn_blocking(move || Fingerprint::of(&source))
        .await
        .unwrap_or_default()
}

fn snapshots(data_dir: &Path) -> PathBuf {
    data_dir.join("snapshots")
}

/// Removes the snapshot of `version` of `model` (a version that failed to deploy and that
/// nothing serves). Failures are logged, never fatal.
pub fn remove_version(data_dir: &Path, model: &str, version: &str) {
    let dir = snapshots(data_dir)
        .join(model)
        .join(version.replace(':', "-"));
    if dir.exists()
        && let Err(e) = std::fs::remove_dir_all(&dir)
    {
        tracing::warn!(path = ?dir, error = %e, "cannot remove a failed version's snapshot");
    }
    remove_if_empty(&snapshots(data_dir).join(model));
}

/// Removes a model's snapshot directory once it holds no version: a removed model leaves
/// nothing behind. Only an empty directory goes (`remove_dir`), so a copy under way, which
/// holds a `.partial-*`, keeps it; a copy about to begin makes it again.
fn remove_if_empty(dir: &Path) {
    let _ = std::fs::remove_dir(dir);
}

/// Removes `model`'s snapshots but the versions in `keep` (failed and old versions); with
/// `model` `None`, the snapshots of every model not in `keep` (names), for the models `up`
/// no longer deploys. `.partial-*` copies go only with `partials` (at start, when no copy
/// can be under way). Failures are logged, never fatal.
pub fn prune(data_dir: &Path, model: Option<&str>, keep: &[&str], partials: bool) {
    let dir = match model {
        Some(m) => snapshots(data_dir).join(m),
        None => snapshots(data_dir),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let copying = name.as_encoded_bytes().starts_with(b".partial-");
        let kept = (copying && !partials)
            || keep
                .iter()
                .any(|k| name.to_str() == Some(&k.replace(':', "-")));
        if !kept && let Err(e) = std::fs::remove_dir_all(entry.path()) {
            tracing::warn!(path = ?entry.path(), error = %e, "cannot remove an old snapshot");
        }
    }
    if model.is_some() {
        remove_if_empty(&dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 56, item 11: a removed model's snapshots go with their directory; a model
    /// still deployed keeps its own, and a copy under way keeps the directory.
    #[test]
    fn a_removed_model_leaves_no_empty_directory() {
        let data = tempfile::tempdir().unwrap();
        let model = snapshots(data.path()).join("iris");
        for v in ["sha256-aaaa", "sha256-bbbb"] {
            std::fs::create_dir_all(model.join(v)).unwrap();
            std::fs::write(model.join(v).join("model.onnx"), b"x").unwrap();
        }
        prune(data.path(), Some("iris"), &["sha256:bbbb"], false);
        assert!(model.join("sha256-bbbb").is_dir() && !model.join("sha256-aaaa").exists());
        prune(data.path(), Some("iris"), &[], false);
        assert!(!model.exists(), "the removed model's directory is left");

        std::fs::create_dir_all(model.join("sha256-cccc")).unwrap();
        remove_version(data.path(), "iris", "sha256:cccc");
        assert!(
            !model.exists(),
            "a failed only version leaves its directory"
        );

        std::fs::create_dir_all(model.join(".partial-1")).unwrap();
        prune(data.path(), Some("iris"), &[], false);
        assert!(
            model.join(".partial-1").is_dir(),
            "a copy under way is kept"
        );
    }
}
