//! The admin API's deployments, kept in the data directory (`api_deployments.json`) so they
//! come back when `up` starts again on the same data directory: each one's name, the path it
//! was deployed from and the version that served. The file is written whole after every
//! change (a new file renamed into place, private like everything `up` creates), so a crash
//! leaves the old list or the new one, never half of one. A removed deployment leaves the
//! list; a reload records its new version.
//!
//! At start each is deployed again from its path, after the models of the installation and
//! of the models directory: a name one of those took is not restored (the log says so; the
//! entry stays in the file, [`crate::services::deployments::live`] writes it back), nor is
//! one whose name or path the admin API would refuse ([`untrusted`]), and
//! files changed since are deployed as they are now, as a new version (the recorded version
//! is what served before, for whoever reads the file).

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The file in the data directory.
pub const FILE: &str = "api_deployments.json";

/// One deployment the admin API made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeptDeployment {
    pub name: String,
    /// The component or model directory it was deployed from (absolute).
    pub path: PathBuf,
    /// The version that served when it was last recorded (empty for one that did not start).
    pub version: String,
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KeptFile {
    deployments: Vec<KeptDeployment>,
}

/// Why `kept` is not to be trusted, if it is not: a name the admin API would refuse (it
/// becomes a path under the data directory, and `../x` must never) or a path that is not
/// absolute (the admin API records only absolute ones). The file is the operator's to edit.
pub fn untrusted(kept: &KeptDeployment) -> Option<String> {
    if let Err(why) = crate::services::model::spec::valid_name(&kept.name) {
        return Some(why);
    }
    if !kept.path.is_absolute() {
        return Some(format!("{} is not an absolute path", kept.path.display()));
    }
    None
}

/// The deployments kept in `data_dir` (none when the file is not there).
pub fn load(data_dir: &Path) -> Result<Vec<KeptDeployment>> {
    let path = data_dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let kept: KeptFile = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not the admin API's list of deployments; fix it, or remove it to start \
             without the models deployed through the admin API",
            path.display()
        )
    })?;
    Ok(kept.deployments)
}

/// Writes `deployments` as the list kept in `data_dir`: a new file renamed into place.
pub fn save(data_dir: &Path, deployments: Vec<KeptDeployment>) -> Result<()> {
    let path = data_dir.join(FILE);
    let partial = data_dir.join(format!(".{FILE}.partial"));
    let text = serde_json::to_string_pretty(&KeptFile { deployments })?;
    // On the disk before it takes the old list's place, so a power cut cannot leave an
    // empty file where a list was.
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut file = std::fs::File::create(&partial)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&partial, &path)?;
        // The rename itself on the disk too: it is an entry of the directory.
        std::fs::File::open(data_dir)?.sync_all()
    };
    write().with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_comes_back_as_it_was_saved() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            load(dir.path()).unwrap().is_empty(),
            "no file: nothing kept"
        );
        let kept = vec![KeptDeployment {
            name: "iris-2".into(),
            path: "/srv/models/iris".into(),
            version: "sha256:0123456789ab".into(),
        }];
        save(dir.path(), kept.clone()).unwrap();
        assert_eq!(load(dir.path()).unwrap(), kept);
        save(dir.path(), Vec::new()).unwrap();
        assert!(load(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn names_and_paths_the_admin_api_would_refuse_are_not_trusted() {
        let kept = |name: &str, path: &str| KeptDeployment {
            name: name.into(),
            path: path.into(),
            version: String::new(),
        };
        assert_eq!(untrusted(&kept("iris-2", "/srv/models/iris")), None);
        for (name, path) in [
            ("../../x", "/srv/models/iris"),
            ("a/b", "/srv/models/iris"),
            (".hidden", "/srv/models/iris"),
            ("", "/srv/models/iris"),
            ("iris", "models/iris"),
        ] {
            assert!(untrusted(&kept(name, path)).is_some(), "{name} {path}");
        }
    }

    #[test]
    fn a_damaged_list_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "{\"deployments\": [").unwrap();
        let err = format!("{:#}", load(dir.path()).unwrap_err());
        assert!(err.contains("remove it to start"), "{err}");
    }
}
