//! The cache's files: written whole or not at all, private, durable, and read back only when
//! they are what was written.
//!
//! A file is written to a temporary name beside it (private to the user, whatever the
//! umask), flushed to the disk, renamed into place and its directory flushed, so a crash or a
//! full disk leaves the old file or the new one, never part of one; a temporary that could
//! not be finished is removed at once, and those of processes that died are removed when a
//! cache is opened ([`remove_stale_temporaries`]): on a full disk they kept it full.
//!
//! Beside each file its SHA-256, `<file>.sha256`, written before it. Compiled code is
//! mapped and run as it is: 64 bytes of noise per page of a cached artifact made every start
//! crash on its first request. So a file is used only when its bytes match their digest
//! ([`matches_digest`], [`read_checked`]); one that does not is a cache miss, made again and
//! said in the log. (The digest guards against damage. Against a file planted by someone
//! else, only who may write the cache protects: see [`super::dir`].)

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// The suffix of a file's digest beside it.
const DIGEST_SUFFIX: &str = ".sha256";

/// After this long, a temporary whose process cannot be told dead is taken for left over.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// Writes `bytes` to `path` whole ([`write_atomically`]), its digest beside it first.
pub fn write_with_digest(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically(&digest_path(path), hex(&Sha256::digest(bytes)).as_bytes())?;
    write_atomically(path, bytes)
}

/// Whether the file at `path` holds the bytes its digest was made of. `false` when either
/// is missing or unreadable; a mismatch is logged.
pub fn matches_digest(path: &Path) -> bool {
    let Some(expected) = recorded_digest(path) else {
        return false;
    };
    let actual = std::fs::File::open(path).and_then(|mut file| {
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            match file.read(&mut buffer)? {
                0 => return Ok(hex(&hasher.finalize())),
                n => hasher.update(&buffer[..n]),
            }
        }
    });
    let matches = actual.as_deref().is_ok_and(|a| a == expected);
    if !matches && actual.is_ok() {
        warn_damaged(path);
    }
    matches
}

/// The file at `path`, when it holds the bytes its digest was made of.
pub fn read_checked(path: &Path) -> Option<Vec<u8>> {
    let expected = recorded_digest(path)?;
    let bytes = std::fs::read(path).ok()?;
    if hex(&Sha256::digest(&bytes)) != expected {
        warn_damaged(path);
        return None;
    }
    Some(bytes)
}

fn warn_damaged(path: &Path) {
    tracing::warn!(
        file = %path.display(),
        "a cached file does not match the digest written with it (damaged on disk?): \
         not used, made again"
    );
}

/// Whether a well-formed digest is recorded beside `path` (its bytes are not checked).
pub fn has_digest(path: &Path) -> bool {
    recorded_digest(path).is_some()
}

/// The digest recorded beside `path`, if there is a well-formed one.
fn recorded_digest(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(digest_path(path)).ok()?;
    let text = text.trim();
    (text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())).then(|| text.to_owned())
}

fn digest_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(DIGEST_SUFFIX);
    PathBuf::from(name)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Removes the file at `path` and its digest; `Ok` when the file was removed.
pub fn remove(path: &Path) -> std::io::Result<()> {
    std::fs::remove_file(path)?;
    let _ = std::fs::remove_file(digest_path(path));
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file in the same directory (mode 0600,
/// whatever the umask), flushed to the disk before it is renamed into place: a reader sees
/// the whole file or none, and after a crash the file is whole or absent. The temporary is
/// removed when anything fails.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy());
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e).with_context(|| format!("writing {}", temp.display()));
    }
    if let Err(e) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    // The rename itself, on the disk.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Removes the temporaries [`write_atomically`] left in `dir` (`.<name>.<pid>-<n>.tmp`,
/// and `.<name>.<pid>.tmp` of earlier versions) whose process is gone, or that are older
/// than [`STALE_AFTER`].
pub fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = temporary_pid(name) else {
            continue;
        };
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| SystemTime::now().duration_since(t).unwrap_or_default() > STALE_AFTER);
        let alive = Path::new("/proc").join(pid.to_string()).exists();
        if (old || !alive) && std::fs::remove_file(entry.path()).is_ok() {
            tracing::info!(file = %entry.path().display(), "removed an unfinished cache file");
        }
    }
}

/// The process id in a temporary's name, if `name` is one.
fn temporary_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, writer) = inner.rsplit_once('.')?;
    writer.split('-').next()?.parse().ok()
}

/// Sets `path`'s modification time to now: the time it was last used, for [`prune`].
pub fn mark_used(path: &Path) {
    let touched = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
    if let Err(e) = touched {
        tracing::debug!(file = %path.display(), "cannot mark the cached file used: {e}");
    }
}

/// Removes the least recently used files of `dir` (by modification time), with their
/// digests, until they take at most `cap` bytes, never `keep` (the one just written).
pub fn prune(dir: &Path, cap: u64, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<_> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.as_encoded_bytes();
            !name.starts_with(b".") && !name.ends_with(DIGEST_SUFFIX.as_bytes())
        })
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    files.sort();
    for (_, len, path) in files {
        if total <= cap {
            break;
        }
        if path != keep && remove(&path).is_ok() {
            tracing::info!(file = %path.display(), "removed from the cache (least recently used)");
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_private_and_read_back_only_while_it_matches_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("a.cwasm");
        write_with_digest(&path, b"compiled code").unwrap();
        for written in [&path, &digest_path(&path)] {
            let mode = std::fs::metadata(written).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", written.display());
        }
        let sub = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(sub.permissions().mode() & 0o777, 0o700);
        assert!(matches_digest(&path));
        assert_eq!(read_checked(&path).unwrap(), b"compiled code");
        // Noise over part of it, the length unchanged.
        std::fs::write(&path, b"compiled c\xde\xad").unwrap();
        assert!(!matches_digest(&path));
        assert_eq!(read_checked(&path), None);
        // A file without its digest is not trusted either.
        write_atomically(&path, b"compiled code").unwrap();
        std::fs::remove_file(digest_path(&path)).unwrap();
        assert!(!matches_digest(&path));
    }

    #[test]
    fn temporaries_of_processes_that_are_gone_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mine = format!(".b.cwasm.{}-3.tmp", std::process::id());
        for name in [
            ".a.cwasm.999999999-0.tmp",
            ".c.wasm.999999998.tmp",
            &mine,
            "d.cwasm",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        remove_stale_temporaries(dir.path());
        assert_eq!(names(dir.path()), [mine.as_str(), "d.cwasm"]);
    }

    /// A disk that fills up during a write keeps no part of the file (as root only: it
    /// mounts a small tmpfs).
    #[test]
    fn a_write_that_fills_the_disk_leaves_nothing_behind() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIPPED: a_write_that_fills_the_disk_leaves_nothing_behind needs root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mount = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(mount.success(), "mounting a tmpfs");
        let path = dir.path().join("big.cwasm");
        let written = write_with_digest(&path, &vec![7u8; 1 << 20]);
        let left = names(dir.path());
        std::process::Command::new("umount")
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(written.is_err(), "the disk was full");
        assert!(
            left.iter().all(|n| !n.ends_with(".tmp")) && !left.contains(&"big.cwasm".into()),
            "left: {left:?}"
        );
    }

    #[test]
    fn the_least_recently_used_files_go_first_with_their_digests_and_never_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let at = |secs| std::time::UNIX_EPOCH + Duration::from_secs(secs);
        // Written in this order, last used at these times.
        let files = [
            ("least", 100),
            ("most", 300),
            ("second", 200),
            ("written", 50),
        ];
        for (name, used) in files {
            let path = dir.path().join(name);
            write_with_digest(&path, &[0u8; 10]).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(at(used)).unwrap();
        }
        // 40 bytes, cap 25: the two least recently used go, except the one just written.
        prune(dir.path(), 25, &dir.path().join("written"));
        assert_eq!(
            names(dir.path()),
            ["most", "most.sha256", "written", "written.sha256"]
        );
    }
}
