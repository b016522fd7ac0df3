//! Read-only directory mounts, given to components the way Spin's `files = [{ source,
//! destination }]` does: `--dir HOST_PATH:GUEST_PATH`. A model component reads its weights and
//! manifest from the guest path; it can neither write there nor see anything outside it.

mod tree;

pub use tree::{MAX_TREE_BYTES, Tree, TreeFile};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::Arc;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

/// One mount: a host directory seen by the guest at an absolute path.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub host: PathBuf,
    pub guest: String,
}

/// The mounts every instance of a component gets.
#[derive(Debug, Clone, Default)]
pub struct Mounts(Arc<[Mount]>);

impl Mount {
    /// Parses `HOST_PATH:GUEST_PATH`. The host directory must exist (checked here, so a typo
    /// stops the start-up instead of failing every request); the guest path must be absolute.
    pub fn parse(spec: &str) -> Result<Self> {
        let Some((host, guest)) = spec.rsplit_once(':') else {
            bail!("`--dir {spec}` must be HOST_PATH:GUEST_PATH, e.g. models/solubility:/model");
        };
        if !guest.starts_with('/') {
            bail!("`--dir {spec}`: the guest path `{guest}` must be absolute, e.g. /model");
        }
        let host = PathBuf::from(host);
        let meta = std::fs::metadata(&host)
            .with_context(|| format!("`--dir {spec}`: cannot read {}", host.display()))?;
        if !meta.is_dir() {
            bail!("`--dir {spec}`: {} is not a directory", host.display());
        }
        let guest = match guest.trim_end_matches('/') {
            "" => "/",
            trimmed => trimmed,
        };
        Ok(Self {
            host,
            guest: guest.to_owned(),
        })
    }
}

impl Mounts {
    pub fn parse(specs: &[String]) -> Result<Self> {
        let mounts = specs
            .iter()
            .map(|s| Mount::parse(s))
            .collect::<Result<Vec<_>>>()?;
        for (i, m) in mounts.iter().enumerate() {
            if mounts[..i].iter().any(|o| o.guest == m.guest) {
                bail!("two --dir mounts at the same guest path {}", m.guest);
            }
        }
        Ok(Self(mounts.into()))
    }

    /// The mounts as `--dir` takes them (`HOST_PATH:GUEST_PATH`), for a child process. A
    /// guest path never holds a `:` (it would not have parsed), so the last one splits.
    pub fn dir_args(&self) -> Vec<std::ffi::OsString> {
        self.0
            .iter()
            .map(|m| {
                let mut arg = m.host.as_os_str().to_owned();
                arg.push(":");
                arg.push(&m.guest);
                arg
            })
            .collect()
    }

    /// Guest paths, for the start-up log.
    pub fn guest_paths(&self) -> Vec<&str> {
        self.0.iter().map(|m| m.guest.as_str()).collect()
    }

    /// Feeds what the guest would see to `hash`: each mount's guest path and its files.
    pub fn hash_contents(&self, hash: &mut Sha256) -> Result<()> {
        for m in self.0.iter() {
            hash.update(m.guest.as_bytes());
            hash.update([0]);
            Tree::list(&m.host)?.hash(hash)?;
        }
        Ok(())
    }

    /// Adds every mount, read-only, to an instance's WASI context.
    pub fn grant(&self, wasi: &mut WasiCtxBuilder) -> Result<()> {
        for m in self.0.iter() {
            wasi.preopened_dir(&m.host, &m.guest, FsPerms::ReadOnly)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("mounting {} at {}", m.host.display(), m.guest))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_are_checked_when_parsed() {
        let dir = std::env::temp_dir();
        let ok = Mount::parse(&format!("{}:/model/", dir.display())).unwrap();
        assert_eq!(ok.guest, "/model");
        assert!(Mount::parse("no-colon").is_err());
        assert!(Mount::parse(&format!("{}:relative", dir.display())).is_err());
        let err = Mount::parse("/does/not/exist:/model").unwrap_err();
        assert!(format!("{err:#}").contains("/does/not/exist"), "{err:#}");
        let twice = [
            format!("{}:/m", dir.display()),
            format!("{}:/m", dir.display()),
        ];
        assert!(Mounts::parse(&twice).is_err());
    }
}
