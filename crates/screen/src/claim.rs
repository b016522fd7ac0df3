//! The output file is one run's alone, and is the file it names, never what a link points
//! to. A run holds an advisory lock on its output for as long as it writes, so a second run
//! on the same output (a `--resume` started twice, a `--force` while the first still writes)
//! is refused instead of interleaving rows. A new output is written beside the path and
//! renamed over it, so `-o link --force` replaces the link itself, and a dangling link gets
//! no target created.

use anyhow::{Context, Result, bail};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

/// The output file, locked for this run.
pub struct Claimed {
    pub file: File,
    /// It holds an earlier run's rows, to be continued.
    pub resuming: bool,
}

/// Claims `path` for writing: continues it (`resume`, if it exists), replaces it (`force`),
/// or makes it; refused while another run writes it.
pub fn claim(path: &Path, resume: bool, force: bool) -> Result<Claimed> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => replace(path),
        Err(e) => Err(e).with_context(|| format!("cannot look at {}", path.display())),
        Ok(m) if m.file_type().is_symlink() => {
            if resume || !force {
                claim_refusal(path, resume)?;
            }
            replace(path)
        }
        Ok(m) if m.is_file() => {
            let file = open_no_follow(path)?;
            lock(&file, path)?;
            if resume {
                return Ok(Claimed {
                    file,
                    resuming: true,
                });
            }
            if !force {
                claim_refusal(path, resume)?;
            }
            // The old file stays locked until the new one has taken its place.
            let claimed = replace(path);
            drop(file);
            claimed
        }
        Ok(_) => bail!("{} is not a regular file", path.display()),
    }
}

/// What [`claim`] would refuse, found without changing anything: run first, so a run that
/// cannot write its output says so before it loads a model or reads its input.
pub fn check(path: &Path, resume: bool, force: bool) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() && (resume || !force) => claim_refusal(path, resume),
        Ok(m) if m.is_file() => {
            lock(&open_no_follow(path)?, path)?;
            if !resume && !force {
                return claim_refusal(path, resume);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The refusal [`claim`] gives for an existing `path` (a link when resuming, else a file
/// without --resume or --force).
fn claim_refusal(path: &Path, resume: bool) -> Result<()> {
    if resume {
        bail!(
            "{} is a symbolic link: --resume continues a file, not a link; give the file's own \
             path",
            path.display()
        );
    }
    bail!(
        "{} exists: pass --resume to continue it, or --force to replace it",
        path.display()
    )
}

/// A new, empty, locked file at `path`: made beside it and renamed over it.
fn replace(path: &Path) -> Result<Claimed> {
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.partial", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let _ = std::fs::remove_file(&temp);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&temp)
        .with_context(|| format!("cannot write {}", temp.display()))?;
    lock(&file, path)?;
    if let Err(e) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(Claimed {
        file,
        resuming: false,
    })
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

fn lock(file: &File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => bail!(
            "another `runtime-host predict` is writing {}: wait for it to end (or stop it), \
             or write to another file",
            path.display()
        ),
        Err(TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_second_writer_is_refused_while_the_first_holds_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        let mut first = claim(&out, false, false).unwrap();
        first.file.write_all(b"id\n").unwrap();
        for (resume, force) in [(true, false), (false, true), (false, false)] {
            let err = claim(&out, resume, force).err().unwrap();
            assert!(format!("{err:#}").contains("another"), "{err:#}");
        }
        drop(first);
        assert!(claim(&out, true, false).unwrap().resuming);
    }

    #[test]
    fn a_link_is_replaced_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep me").unwrap();
        let link = dir.path().join("out.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(claim(&link, true, false).is_err());
        assert!(claim(&link, false, false).is_err());
        claim(&link, false, true).unwrap();
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");

        let dangling = dir.path().join("dangling.csv");
        let nowhere = dir.path().join("nowhere");
        std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
        claim(&dangling, false, true).unwrap();
        assert!(!nowhere.exists());
    }
}
