//! The host's data is its user's alone: the store holds registration ids (with one, anybody
//! could unregister a model and take its port) and chat text, and the data directory holds
//! the admin tokens. So a service command makes every file it creates private, whatever
//! umask it was started with, and tightens a data directory and store files that an earlier
//! run (or an older version) left readable by others.

use anyhow::{Context, Result};
use std::path::Path;

/// Makes every file and directory this process creates from now on private to its user
/// (umask 077): new files 0600 at most, new directories 0700. A service command calls it
/// first, before it creates anything.
pub fn keep_new_files_private() {
    #[cfg(unix)]
    // SAFETY: umask only swaps the process's file-creation mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}

/// Creates `dir` (and its parents) and makes it 0700, so nothing inside it can be reached by
/// another user whatever the files' own modes. An existing directory is tightened only when
/// it is a data directory (empty, or holding the store, a token or snapshots) and neither
/// the working directory nor the home directory: `--data-dir .` must not lock a project's
/// collaborators out. One that is shared (sticky, as `/tmp`), someone else's, or not plainly
/// a data directory is left as it is, with a warning saying what to do.
pub fn private_dir(dir: &Path) -> Result<()> {
    let existed = dir.exists();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the data directory {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = std::fs::metadata(dir)?;
        if meta.mode() & 0o077 == 0 {
            return Ok(());
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let owned = meta.uid() == unsafe { libc::geteuid() };
        let ours = !existed || (holds_host_data(dir) && !is_working_or_home(dir));
        if !owned || meta.mode() & 0o1000 != 0 || !ours {
            tracing::warn!(
                dir = %dir.display(),
                "the data directory can be read by other users, who could read the store \
                 (registration ids, chat text): give --data-dir a directory of its own, or \
                 run `chmod 700` on it"
            );
            return Ok(());
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("making the data directory {} private", dir.display()))?;
    }
    Ok(())
}

/// Whether `dir` is empty or holds what the host keeps in a data directory (the AI models'
/// files included: `cargo xtask install-models` puts them in `.data/ai-models` before the
/// first `up`, and an older version of it made `.data` 0755).
fn holds_host_data(dir: &Path) -> bool {
    let empty = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
    let marks = [
        "sqlite_key_value.db",
        "admin_token",
        "chat_admin_token",
        "snapshots",
        "ai-models",
    ];
    empty || marks.iter().any(|m| dir.join(m).exists())
}

/// Whether `dir` is the working directory or the home directory.
fn is_working_or_home(dir: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return false;
    };
    let cwd = std::env::current_dir().ok();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    [cwd, home]
        .into_iter()
        .flatten()
        .any(|p| std::fs::canonicalize(p).is_ok_and(|p| p == dir))
}

/// Makes the existing file `path` 0600 if others may read or write it (a file an earlier
/// run or an older version left open).
pub fn private_file(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .with_context(|| format!("making {} private", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_data_directory_left_open_is_made_private_and_a_new_one_is_made_private() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&open).unwrap();
        assert_eq!(mode(&open), 0o700);
        let fresh = tmp.path().join("a/b");
        private_dir(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
    }

    #[test]
    fn a_directory_that_is_not_plainly_a_data_directory_is_left_as_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir(&project).unwrap();
        std::fs::write(project.join("notes.txt"), "shared").unwrap();
        std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&project).unwrap();
        assert_eq!(mode(&project), 0o755);
        std::fs::write(project.join("sqlite_key_value.db"), "").unwrap();
        private_dir(&project).unwrap();
        assert_eq!(mode(&project), 0o700, "a data directory of an earlier run");
    }

    #[test]
    fn a_shared_directory_is_left_as_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        private_dir(&shared).unwrap();
        assert_eq!(mode(&shared), 0o1777);
    }
}
