//! The files of a directory that is mounted into a guest (a model directory), read as
//! untrusted input: whoever can drop files into `up --models` is not trusted with the host's
//! privileges. So the tree keeps regular files only (a FIFO, a socket or a device is
//! skipped, never opened: opening a FIFO blocks until somebody writes to it), refuses a
//! symbolic link that leads out of the directory (it would copy `/etc/shadow` into a guest's
//! mount), opens each file without following a link swapped in since it was listed, refuses a
//! tree over [`MAX_TREE_BYTES`] from the sizes alone (a 12 KB sparse file may claim 2 GB),
//! and streams every file: memory stays flat whatever the sizes.
//!
//! Every call here blocks on the file system: async callers run it on a blocking thread.

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

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
    /// Where it is read from: the file itself, or the target of a link inside the tree.
    path: PathBuf,
    pub len: u64,
    pub modified: Option<SystemTime>,
}

/// A directory's regular files (or one file), in path order.
#[derive(Debug)]
pub struct Tree {
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
        let mut tree = Tree {
            files: Vec::new(),
            skipped: Vec::new(),
        };
        if real_root.is_file() {
            let meta = std::fs::metadata(&real_root)?;
            tree.files.push(TreeFile {
                relative: PathBuf::new(),
                path: real_root,
                len: meta.len(),
                modified: meta.modified().ok(),
            });
        } else {
            tree.walk(&real_root, Path::new(""), 0)?;
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

    fn walk(&mut self, root: &Path, relative: &Path, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            bail!("{relative:?} is nested deeper than {MAX_DEPTH} directories");
        }
        let dir = root.join(relative);
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries {
            let entry = entry?;
            let relative = relative.join(entry.file_name());
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                self.walk(root, &relative, depth + 1)?;
            } else if kind.is_file() {
                let meta = entry.metadata()?;
                self.push(relative, path, &meta);
            } else if kind.is_symlink() {
                self.link(root, relative, &path)?;
            } else {
                self.skipped.push(relative);
            }
        }
        Ok(())
    }

    /// A link inside the tree: followed to a regular file inside the tree, refused when it
    /// leads out (or nowhere), skipped when it leads to a directory.
    fn link(&mut self, root: &Path, relative: PathBuf, path: &Path) -> Result<()> {
        let target = std::fs::canonicalize(path).ok();
        let Some(target) = target.filter(|t| t.starts_with(root)) else {
            bail!(
                "{relative:?} is a symbolic link leading out of the directory (or to nothing): \
                 copy the file in instead of linking it"
            );
        };
        let meta = std::fs::metadata(&target)?;
        if meta.is_file() {
            self.push(relative, target, &meta);
        } else {
            self.skipped.push(relative);
        }
        Ok(())
    }

    fn push(&mut self, relative: PathBuf, path: PathBuf, meta: &std::fs::Metadata) {
        self.files.push(TreeFile {
            relative,
            path,
            len: meta.len(),
            modified: meta.modified().ok(),
        });
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
            copy(file, &mut HashWriter(hash))?;
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
            copy(file, &mut both)?;
            both.1
                .into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .with_context(|| format!("writing {}", target.display()))?;
        }
        Ok(())
    }
}

fn hash_name(hash: &mut Sha256, relative: &Path) {
    hash.update(relative.to_string_lossy().as_bytes());
    hash.update([0]);
}

/// Streams one file into `out`: opened without following a link and without blocking, and
/// refused unless it is still the regular file that was listed.
fn copy(file: &TreeFile, out: &mut impl Write) -> Result<()> {
    let opened = open_regular(&file.path)?;
    // Never more than was listed (and checked against the limit), even if it grew since.
    let copied = std::io::copy(&mut opened.take(file.len), out)
        .with_context(|| format!("reading {}", file.path.display()))?;
    if copied != file.len {
        bail!("{:?} changed while it was read", file.relative);
    }
    Ok(())
}

#[cfg(unix)]
fn open_regular(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    if !file.metadata()?.is_file() {
        bail!("{} is no longer a regular file", path.display());
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_regular(path: &Path) -> Result<File> {
    Ok(File::open(path)?)
}

#[cfg(unix)]
fn create_private(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))
}

#[cfg(not(unix))]
fn create_private(path: &Path) -> Result<File> {
    File::create_new(path).with_context(|| format!("creating {}", path.display()))
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
    fn a_sparse_giant_is_refused_without_being_read() {
        let tmp = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(tmp.path().join("model.onnx")).unwrap();
        f.set_len(2 << 30).unwrap();
        let err = format!("{:#}", Tree::list(tmp.path()).unwrap_err());
        assert!(err.contains("over the limit"), "{err}");
    }
}
