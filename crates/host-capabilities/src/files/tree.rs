//! The files of a directory that is mounted into a guest (a model directory), read as
//! untrusted input: whoever can drop files into `up --models` is not trusted with the host's
//! privileges. So the tree keeps regular files only (a FIFO, a socket or a device is
//! skipped, never opened: opening a FIFO blocks until somebody writes to it), refuses a
//! symbolic link that leads out of the directory (it would copy `/etc/shadow` into a guest's
//! mount), refuses a tree over [`MAX_TREE_BYTES`] from the sizes alone (a 12 KB sparse file
//! may claim 2 GB), and streams every file: memory stays flat whatever the sizes.
//!
//! The directory may change while it is read (its writer is the one not trusted), so nothing
//! is reached by a path the kernel resolves from the top: every directory is opened from its
//! parent's descriptor and every file from its directory's, each step refusing a link
//! (`O_NOFOLLOW`), and a file must still be the one listed (device and inode) when it is
//! read. A directory swapped for a link to `~/.ssh` between listing and copying is refused.
//!
//! Every call here blocks on the file system: async callers run it on a blocking thread.

use anyhow::{Context, Result, bail};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use sha2::{Digest, Sha256};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The most a mounted directory may hold, all its files together: 1 GiB. A guest reads its
/// model into its own memory, which is capped below that (see `--max-memory`), so nothing
/// larger could load anyway.
pub const MAX_TREE_BYTES: u64 = 1 << 30;

/// A link to a directory is not followed (a link to `.` would make the tree endless);
/// deeper than this, a tree is refused.
const MAX_DEPTH: usize = 32;

/// One regular file of a tree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TreeFile {
    /// Its path inside the tree, as the guest sees it (empty when the tree is one file).
    pub relative: PathBuf,
    /// Where it is read from, beneath the tree's top and free of links: the file itself, or
    /// the target of a link inside the tree.
    beneath: PathBuf,
    pub len: u64,
    pub modified: Option<SystemTime>,
    /// Device and inode when listed: the file read must be this one.
    id: (u64, u64),
}

/// A directory's regular files (or one file), in path order.
#[derive(Debug)]
pub struct Tree {
    /// The directory at the top (for a one-file tree, the directory holding the file).
    top: OwnedFd,
    pub files: Vec<TreeFile>,
    /// What was left out (not a regular file, or a link to a directory), for the log.
    pub skipped: Vec<PathBuf>,
}

impl Tree {
    /// Lists `root` (a directory, or a single file). Fails for a link leading out of `root`
    /// (naming it), a tree over [`MAX_TREE_BYTES`], or one that cannot be read.
    pub fn list(root: &Path) -> Result<Self> {
        let real_root = std::fs::canonicalize(root)
            .with_context(|| format!("cannot read {}", root.display()))?;
        let meta = std::fs::metadata(&real_root)?;
        let (top_path, one_file) = if meta.is_file() {
            let parent = real_root.parent().unwrap_or(Path::new("/")).to_owned();
            (parent, real_root.file_name().map(PathBuf::from))
        } else {
            (real_root.clone(), None)
        };
        let top = open_dir(rustix::fs::CWD, &top_path)?;
        let mut tree = Tree {
            top,
            files: Vec::new(),
            skipped: Vec::new(),
        };
        match one_file {
            Some(name) => {
                let stat = rustix::fs::statat(&tree.top, &name, AtFlags::SYMLINK_NOFOLLOW)?;
                tree.push(PathBuf::new(), name, &stat);
            }
            None => {
                let top = tree.top.try_clone()?;
                tree.walk(&top, &real_root, Path::new(""), 0)?;
            }
        }
        tree.files.sort();
        let total = tree.total();
        if total > MAX_TREE_BYTES {
            bail!(
                "{} holds {total} bytes of files, over the limit of {MAX_TREE_BYTES} bytes \
                 (1 GiB); nothing was read",
                root.display()
            );
        }
        Ok(tree)
    }

    /// Lists the directory open at `dir` (`relative` inside the tree whose top is at
    /// `real_root`).
    fn walk(
        &mut self,
        dir: &OwnedFd,
        real_root: &Path,
        relative: &Path,
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            bail!("{relative:?} is nested deeper than {MAX_DEPTH} directories");
        }
        let listing =
            rustix::fs::Dir::read_from(dir).with_context(|| format!("cannot list {relative:?}"))?;
        for entry in listing {
            let entry = entry.with_context(|| format!("cannot list {relative:?}"))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes()).to_owned();
            if name == "." || name == ".." {
                continue;
            }
            let inside = relative.join(&name);
            let stat = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW)
                .with_context(|| format!("cannot read {inside:?}"))?;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => {
                    let sub = open_dir(dir, &name)?;
                    self.walk(&sub, real_root, &inside, depth + 1)?;
                }
                FileType::RegularFile => self.push(inside.clone(), inside, &stat),
                FileType::Symlink => self.link(real_root, inside)?,
                _ => self.skipped.push(inside),
            }
        }
        Ok(())
    }

    /// A link inside the tree: followed to a regular file inside the tree, refused when it
    /// leads out (or nowhere), skipped when it leads to a directory.
    fn link(&mut self, real_root: &Path, relative: PathBuf) -> Result<()> {
        let target = std::fs::canonicalize(real_root.join(&relative)).ok();
        let Some(beneath) = target
            .as_deref()
            .and_then(|t| t.strip_prefix(real_root).ok())
            .map(Path::to_owned)
        else {
            bail!(
                "{relative:?} is a symbolic link leading out of the directory (or to nothing): \
                 copy the file in instead of linking it"
            );
        };
        let stat = rustix::fs::statat(&self.top, &beneath, AtFlags::empty())?;
        if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile {
            self.push(relative, beneath, &stat);
        } else {
            self.skipped.push(relative);
        }
        Ok(())
    }

    fn push(&mut self, relative: PathBuf, beneath: PathBuf, stat: &Stat) {
        let modified = u64::try_from(stat.st_mtime)
            .ok()
            .map(|s| SystemTime::UNIX_EPOCH + Duration::new(s, stat.st_mtime_nsec as u32));
        self.files.push(TreeFile {
            relative,
            beneath,
            len: stat.st_size.max(0) as u64,
            modified,
            id: id_of(stat),
        });
    }

    /// Opens `file` for reading: each directory on its way from its own parent, refusing
    /// links and not blocking, and only if it is still the regular file that was listed.
    fn open(&self, file: &TreeFile) -> Result<File> {
        let shown = || format!("{:?}", file.relative);
        let mut dir: Option<OwnedFd> = None;
        let mut parts = file.beneath.components().peekable();
        while let Some(part) = parts.next() {
            let Component::Normal(name) = part else {
                bail!("{} is not a plain path inside the directory", shown());
            };
            let at = dir.as_ref().unwrap_or(&self.top);
            if parts.peek().is_some() {
                dir = Some(open_dir(at, name).with_context(|| format!("opening {}", shown()))?);
            } else {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                let fd = rustix::fs::openat(at, name, flags, Mode::empty()).with_context(|| {
                    format!("opening {} (changed since it was listed?)", shown())
                })?;
                let stat = rustix::fs::fstat(&fd)?;
                let same = id_of(&stat) == file.id;
                if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || !same {
                    bail!("{} changed while the directory was read", shown());
                }
                return Ok(File::from(fd));
            }
        }
        bail!("{} names no file", shown())
    }

    /// The sizes of all files together.
    pub fn total(&self) -> u64 {
        self.files.iter().map(|f| f.len).sum()
    }

    /// Feeds every file (relative path, a 0 byte, contents; in path order) to `hash`,
    /// streaming: the same files hash the same on every machine.
    pub fn hash(&self, hash: &mut Sha256) -> Result<()> {
        for file in &self.files {
            hash_name(hash, &file.relative);
            self.copy(file, &mut HashWriter(hash))?;
        }
        Ok(())
    }

    /// Copies the tree into the new directory `to` (files private to this user) and feeds
    /// `hash` as [`Tree::hash`] does, in one pass over the files.
    pub fn copy_to(&self, to: &Path, hash: &mut Sha256) -> Result<()> {
        std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
        for file in &self.files {
            hash_name(hash, &file.relative);
            let target = to.join(&file.relative);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let out = create_private(&target)?;
            let mut both = Tee(HashWriter(hash), std::io::BufWriter::new(out));
            self.copy(file, &mut both)?;
            both.1
                .into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .with_context(|| format!("writing {}", target.display()))?;
        }
        Ok(())
    }
}

impl Tree {
    /// Streams one file into `out`, never more than was listed (and checked against the
    /// limit), even if it grew since.
    fn copy(&self, file: &TreeFile, out: &mut impl Write) -> Result<()> {
        let opened = self.open(file)?;
        let copied = std::io::copy(&mut opened.take(file.len), out)
            .with_context(|| format!("reading {:?}", file.relative))?;
        if copied != file.len {
            bail!("{:?} changed while it was read", file.relative);
        }
        Ok(())
    }
}

fn hash_name(hash: &mut Sha256, relative: &Path) {
    hash.update(relative.to_string_lossy().as_bytes());
    hash.update([0]);
}

/// A file's device and inode.
#[allow(clippy::unnecessary_cast)] // the fields' types differ between platforms
fn id_of(stat: &Stat) -> (u64, u64) {
    (stat.st_dev as u64, stat.st_ino as u64)
}

/// Opens directory `name` beneath `at` without following a link.
fn open_dir(at: impl std::os::fd::AsFd, name: impl rustix::path::Arg) -> Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::openat(at, name, flags, Mode::empty())?)
}

/// Creates `path` new, readable by this user alone.
fn create_private(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes everything to both.
struct Tee<A, B>(A, B);

impl<A: Write, B: Write> Write for Tee<A, B> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.write_all(buf)?;
        self.0.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()?;
        self.1.flush()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn digest(tree: &Tree) -> Vec<u8> {
        let mut h = Sha256::new();
        tree.hash(&mut h).unwrap();
        h.finalize().to_vec()
    }

    #[test]
    fn only_regular_files_inside_the_tree_are_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("model");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("model.toml"), "a = 1").unwrap();
        std::fs::write(dir.join("sub/data.tsv"), "x\t1\n").unwrap();
        std::os::unix::fs::symlink("model.toml", dir.join("alias.toml")).unwrap();
        std::os::unix::fs::symlink("sub", dir.join("loop")).unwrap();
        let fifo = std::ffi::CString::new(dir.join("pipe").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

        let tree = Tree::list(&dir).unwrap();
        let names: Vec<_> = tree.files.iter().map(|f| f.relative.clone()).collect();
        let expected = ["alias.toml", "model.toml", "sub/data.tsv"];
        assert_eq!(names, expected.map(PathBuf::from));
        assert_eq!(tree.skipped.len(), 2, "{:?}", tree.skipped);

        let copy = tmp.path().join("copy");
        let mut h = Sha256::new();
        tree.copy_to(&copy, &mut h).unwrap();
        assert_eq!(h.finalize().to_vec(), digest(&tree));
        assert_eq!(std::fs::read(copy.join("alias.toml")).unwrap(), b"a = 1");
        assert!(!copy.join("pipe").exists());
    }

    #[test]
    fn a_link_leading_out_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("model");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(tmp.path().join("secret"), "s3cr3t").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret"), dir.join("test_set.tsv")).unwrap();
        let err = format!("{:#}", Tree::list(&dir).unwrap_err());
        assert!(err.contains("test_set.tsv"), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_listing_is_not_read_through() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("model");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/data.tsv"), "public").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("data.tsv"), "s3cr3t").unwrap();
        let tree = Tree::list(&dir).unwrap();
        std::fs::rename(dir.join("sub"), dir.join("old")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("sub")).unwrap();
        let copy = tmp.path().join("copy");
        let err = tree.copy_to(&copy, &mut Sha256::new()).unwrap_err();
        assert!(format!("{err:#}").contains("data.tsv"), "{err:#}");
        let copied = std::fs::read(copy.join("sub/data.tsv")).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&copied).contains("s3cr3t"));
    }

    #[test]
    fn a_sparse_giant_is_refused_without_being_read() {
        let tmp = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(tmp.path().join("model.onnx")).unwrap();
        f.set_len(2 << 30).unwrap();
        let err = format!("{:#}", Tree::list(tmp.path()).unwrap_err());
        assert!(err.contains("over the limit"), "{err}");
    }
}
