//! A model's files as versions: a cheap fingerprint to notice a change, a digest to name
//! a version, and a snapshot so a version's files stay as they were while it serves.

use crate::services::model::spec::ModelSpec;
use anyhow::{Context, Result};
use host_core::capabilities::files::{hash_tree, walk};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a model's files look like now (path, size, modification time of each file): cheap
/// to take every scan; a difference means a new version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<(PathBuf, u64, Option<SystemTime>)>);

impl Fingerprint {
    pub fn of(source: &Path) -> Self {
        let mut files = Vec::new();
        walk(source, &mut |p, meta| {
            files.push((p.to_owned(), meta.len(), meta.modified().ok()))
        });
        files.sort();
        Self(files)
    }
}

/// A version's name: `sha256:` and the first 12 hex digits of the SHA-256 of its files
/// (relative paths and contents, in order), so the same files are the same version on
/// every machine.
pub fn version_of(source: &Path) -> Result<String> {
    let mut hash = Sha256::new();
    hash_tree(source, &mut hash)?;
    let digest = hash.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

/// A model directory's files copied to `snapshots/<name>/<version>/` of the data directory
/// and mounted from there, so a version's files stay as they were while it serves; a
/// component is read once, when compiled, and needs none.
pub fn snapshot(mut spec: ModelSpec, data_dir: &Path, version: &str) -> Result<ModelSpec> {
    if !spec.source.is_dir() {
        return Ok(spec);
    }
    let dir = data_dir
        .join("snapshots")
        .join(&spec.name)
        .join(version.replace(':', "-"));
    if !dir.is_dir() {
        let partial = dir.with_extension("partial");
        let _ = std::fs::remove_dir_all(&partial);
        copy_dir(&spec.source, &partial)?;
        std::fs::rename(&partial, &dir)?;
    }
    let dir = std::fs::canonicalize(&dir)?;
    spec.mounts = vec![format!("{}:/model", dir.display())];
    Ok(spec)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)
                .with_context(|| format!("copying {}", e.path().display()))?;
        }
    }
    Ok(())
}
