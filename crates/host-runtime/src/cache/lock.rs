//! One lock per cache file, so that a process making a file while holding another's lock
//! (a snapshot's, while compiling the instrumented component it is made with) never waits
//! on itself.
//!
//! The locks are byte ranges of one file, `<cache>/locks/files.lock`: the file made under a
//! lock named `n` locks the single byte at an offset that is a 63-bit digest of `n`. Distinct
//! names share a byte with a chance of one in 2^63, where the 64 lock files of earlier
//! versions (one per bucket of the name's hash) made a snapshot's lock and its instrumented
//! component's fall on one file once in 64 new snapshots: the process then waited on itself
//! for good. One file also means none pile up, however many cache files are ever made.
//!
//! The ranges are open file description locks (`F_OFD_SETLKW`): held per open file, so two
//! threads of one process exclude each other as two processes do (POSIX record locks would
//! not), released when the lock's file is closed, and also when its process dies.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The lock file's name in the cache's `locks/` directory.
const LOCK_FILE: &str = "files.lock";

/// An exclusive lock held while a cache file is being made: another process (or thread)
/// about to make the same file waits, then finds it made. Released when dropped.
pub struct CacheLock(#[allow(dead_code)] File);

impl CacheLock {
    /// Waits for the lock on `file` (`<cache>/<subdirectory>/<name>`), blocking; says so in
    /// the log when another holds it. `None` where no lock can be had (a read-only cache,
    /// say): then each maker makes its own, as without a lock.
    pub fn acquire(file: &Path) -> Option<Self> {
        let cache = file.parent()?.parent()?;
        let name = file.file_name()?.to_string_lossy();
        let lock = open(&lock_file(cache))?;
        let offset = offset_of(&name);
        match set_lock(&lock, offset, false) {
            Ok(()) => return Some(Self(lock)),
            Err(e) if is_busy(&e) => tracing::info!(
                file = %file.display(),
                "another process is making this file; waiting for it instead of making it again"
            ),
            Err(e) => {
                tracing::debug!(file = %file.display(), "no lock on the cache file: {e}");
                return None;
            }
        }
        set_lock(&lock, offset, true).ok()?;
        Some(Self(lock))
    }
}

/// Where the locks of the cache in `cache` are.
fn lock_file(cache: &Path) -> PathBuf {
    cache.join("locks").join(LOCK_FILE)
}

/// Opens (or makes) the lock file, read-write where it can: a write lock needs a handle
/// open for writing.
fn open(path: &Path) -> Option<File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .ok()
}

/// The byte that stands for `name`: FNV-1a over its bytes (the same in every process and
/// build), kept below `off_t`'s maximum.
fn offset_of(name: &str) -> i64 {
    let digest = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    (digest >> 1) as i64
}

/// Takes the write lock of the byte at `offset`, waiting for it when `wait`.
fn set_lock(file: &File, offset: i64, wait: bool) -> std::io::Result<()> {
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut range: libc::flock = unsafe { std::mem::zeroed() };
    range.l_type = libc::F_WRLCK as _;
    range.l_whence = libc::SEEK_SET as _;
    range.l_start = offset as _;
    range.l_len = 1;
    // `l_pid` must be 0 for open file description locks (it is, zeroed).
    let command = if wait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: fcntl on a descriptor `file` owns, with a pointer to a live `flock`.
        if unsafe { libc::fcntl(file.as_raw_fd(), command, &range) } == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Whether `error` says another holds the lock (`F_OFD_SETLK` answers EAGAIN or EACCES).
fn is_busy(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EAGAIN) | Some(libc::EACCES)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The bucket earlier versions chose among their 64 lock files.
    fn old_bucket(name: &str) -> u64 {
        name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        }) % 64
    }

    /// Two names that fell on one lock file before: holding one's lock, the same thread
    /// takes the other's at once (it waited on itself for good).
    #[test]
    fn names_that_shared_a_lock_file_take_their_locks_in_one_thread() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("snapshots").join("a.wasm");
        let target = old_bucket("a.wasm");
        let other = (0..)
            .map(|n| format!("{n:064x}.cwasm"))
            .find(|n| old_bucket(n) == target)
            .unwrap();
        let second = dir.path().join("compiled").join(&other);
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let held = CacheLock::acquire(&first).expect("a lock in a writable directory");
            let nested = CacheLock::acquire(&second).expect("the second lock");
            drop((nested, held));
            done.send(()).unwrap();
        });
        finished
            .recv_timeout(Duration::from_secs(10))
            .expect("the nested lock was taken without waiting on itself");
    }

    /// The same name's lock excludes another holder, in the same process as across them.
    #[test]
    fn one_names_lock_is_held_by_one_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("compiled").join("x.cwasm");
        let held = CacheLock::acquire(&file).unwrap();
        let waiting = std::thread::spawn({
            let file = file.clone();
            move || CacheLock::acquire(&file).map(drop)
        });
        std::thread::sleep(Duration::from_millis(200));
        assert!(!waiting.is_finished(), "the second holder waits");
        drop(held);
        assert!(waiting.join().unwrap().is_some());
        let locks: Vec<_> = std::fs::read_dir(dir.path().join("locks"))
            .unwrap()
            .collect();
        assert_eq!(locks.len(), 1, "one lock file, whatever the names");
    }
}
