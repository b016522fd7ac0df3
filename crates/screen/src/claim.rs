//! The output file is one run's alone, and is the file it names, never what a link points
//! to. A run holds an advisory lock on its output for as long as it writes, so a second run
//! on the same output (a `--resume` started twice, a `--force` while the first still writes)
//! is refused instead of interleaving rows. A new output is written beside the path
//! (`.<name>.partial`, locked too) and renamed over it once the first answers are good
//! ([`Pending::publish`]): a run that fails at once (a wrong `--data`) leaves no file behind
//! and, with `--force`, the old one in place. So `-o link --force` replaces the link itself,
//! and a dangling link gets no target created.

use anyhow::{Context, Result, bail};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

/// The output file, locked for this run.
pub struct Claimed {
    pub file: File,
    /// It holds an earlier run's rows, to be continued.
    pub resuming: bool,
    /// A new output, not yet at its path: [`Pending::publish`] puts it there.
    pub pending: Option<Pending>,
}

/// A new output written beside its path, renamed over it when published; removed if the run
/// ends before that.
pub struct Pending {
    temp: std::path::PathBuf,
    path: std::path::PathBuf,
    /// The file being replaced (`--force`), locked until the new one takes its place.
    _old: Option<File>,
    published: bool,
}

impl Pending {
    /// Puts the new output at its path (replacing what was there).
    pub fn publish(mut self) -> Result<()> {
        std::fs::rename(&self.temp, &self.path)
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        self.published = true;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Claims `path` for writing: continues it (`resume`, if it exists), replaces it (`force`),
/// or makes it; refused while another run writes it.
pub fn claim(path: &Path, resume: bool, force: bool) -> Result<Claimed> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => replace(path, None),
        Err(e) => Err(e).with_context(|| format!("cannot look at {}", path.display())),
        Ok(m) if m.file_type().is_symlink() => {
            if resume || !force {
                claim_refusal(path, resume)?;
            }
            replace(path, None)
        }
        Ok(m) if m.is_file() => {
            let file = open_no_follow(path)?;
            lock(&file, path)?;
            if resume {
                return Ok(Claimed {
                    file,
                    resuming: true,
                    pending: None,
                });
            }
            if !force {
                claim_refusal(path, resume)?;
            }
            // The old file stays locked until the new one has taken its place.
            replace(path, Some(file))
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

/// A new, empty, locked file beside `path` (`.<name>.partial`), to be renamed over it once
/// published. The partial's name is the same for every run on `path`, so a second run is
/// refused by its lock while the first has not published yet; one a killed run left is
/// taken over.
fn replace(path: &Path, old: Option<File>) -> Result<Claimed> {
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(".partial");
    let temp = path.with_file_name(temp_name);
    let file = open_partial(&temp)?;
    lock(&file, path)?;
    owned_here(&file, &temp)?;
    file.set_len(0)
        .with_context(|| format!("cannot write {}", temp.display()))?;
    Ok(Claimed {
        file,
        resuming: false,
        pending: Some(Pending {
            temp,
            path: path.to_owned(),
            _old: old,
            published: false,
        }),
    })
}

/// Whether the partial file opened is one this run may take over: still the file at `temp`
/// (not one a finished run just removed), a plain file of this user with no other name (not
/// someone else's file, nor a hard link to a file elsewhere, which truncating would empty).
#[cfg(unix)]
fn owned_here(file: &File, temp: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata()?;
    let named = std::fs::symlink_metadata(temp);
    let same = named.is_ok_and(|n| n.dev() == open.dev() && n.ino() == open.ino());
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !same || !open.is_file() || open.nlink() != 1 || open.uid() != me {
        bail!(
            "{} is not a partial output this run can take over (another run's, another \
             user's, or a link): remove it, or write to another file",
            temp.display()
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn owned_here(_file: &File, _temp: &Path) -> Result<()> {
    Ok(())
}

/// Opens (or makes) the partial file itself, never what a link there points to.
fn open_partial(temp: &Path) -> Result<File> {
    open_no_follow_with(temp, true).with_context(|| format!("cannot write {}", temp.display()))
}

fn open_no_follow(path: &Path) -> Result<File> {
    open_no_follow_with(path, false).with_context(|| format!("cannot open {}", path.display()))
}

/// `path` opened for reading and writing (made if `create`), never through a link at it.
fn open_no_follow_with(path: &Path, create: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(create)
        .truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
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
        // Not yet published: another run is refused by the partial file's lock.
        let err = claim(&out, false, false).err().unwrap();
        assert!(format!("{err:#}").contains("another"), "{err:#}");
        assert!(
            !out.exists(),
            "nothing at the output's path before the first good answer"
        );
        first.pending.take().unwrap().publish().unwrap();
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
        let mut forced = claim(&link, false, true).unwrap();
        forced.pending.take().unwrap().publish().unwrap();
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");

        let dangling = dir.path().join("dangling.csv");
        let nowhere = dir.path().join("nowhere");
        std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
        let mut forced = claim(&dangling, false, true).unwrap();
        forced.pending.take().unwrap().publish().unwrap();
        assert!(!nowhere.exists());
    }

    #[test]
    fn a_partial_file_with_another_name_is_not_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        let precious = dir.path().join("precious");
        std::fs::write(&precious, "keep me").unwrap();
        std::fs::hard_link(&precious, dir.path().join(".out.csv.partial")).unwrap();
        let err = claim(&out, false, false).err().unwrap();
        assert!(format!("{err:#}").contains("take over"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    }

    #[test]
    fn an_unpublished_output_leaves_nothing_and_the_old_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        drop(claim(&out, false, false).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        std::fs::write(&out, "id\nkeep\n").unwrap();
        drop(claim(&out, false, true).unwrap());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "id\nkeep\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
