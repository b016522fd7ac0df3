//! Which compile cache may be used: one that nobody but this user (and root) can write.
//!
//! Compiled code from the cache is mapped and run as it is, as the host's user: whoever can
//! put a file into the cache runs code as that user. Another local user who made a
//! world-writable cache directory and planted an artifact under the name a compile told her
//! had it run as root on the first request. So, as ssh treats the files that hold its keys,
//! the cache is used only when this user owns it and every directory above it belongs to
//! this user or root and is writable by nobody else (a shared directory with the sticky bit,
//! as `/tmp`, is fine: others cannot replace what is ours in it). Anything else is refused
//! with what to do, never used quietly. A cache this user owns that others can merely read
//! is made private, since snapshots carry the model files the data directory keeps private.
//!
//! Every command makes the cache 0700 and its files 0600 whatever the umask
//! ([`super::file::write_atomically`]).

use anyhow::{Result, bail};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The subdirectories whose temporaries are cleaned when a cache is opened.
const FILE_DIRS: [&str; 2] = [super::super::compiled::LAYOUT, "snapshots"];

/// The cache directory `dir`, made (0700) if it is missing, as a path without links once it
/// is found safe to use; `Err` says why not and what to do.
pub fn trusted(dir: &Path) -> Result<PathBuf> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| anyhow::anyhow!("creating the compile cache {}: {e}", dir.display()))?;
    }
    let real = dir.canonicalize().map_err(|e| {
        anyhow::anyhow!("the compile cache {} cannot be opened: {e}", dir.display())
    })?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if let Err(why) = check_path(&real, me) {
        bail!(
            "refusing the compile cache {}: {why}. Code compiled into it runs as this user, so \
             it is used only when this user owns it and nobody else can write to it or to any \
             directory above it. Give --cache-dir (or RUNTIME_HOST_CACHE_DIR) a directory of \
             your own, or remove this one and let runtime-host make it anew",
            dir.display()
        );
    }
    make_private(&real, me);
    for sub in FILE_DIRS {
        super::file::remove_stale_temporaries(&real.join(sub));
    }
    remove_old_locks(&real.join("locks"));
    Ok(real)
}

/// Removes the 64 lock files of earlier versions (`locks/00.lock` to `63.lock`): the locks
/// are byte ranges of one file now ([`super::lock`]).
fn remove_old_locks(locks: &Path) {
    for bucket in 0..64 {
        let _ = std::fs::remove_file(locks.join(format!("{bucket:02}.lock")));
    }
}

/// Whether `real` (a path without links) and everything above it is safe for `me`.
fn check_path(real: &Path, me: u32) -> Result<(), String> {
    for above in real.ancestors().skip(1) {
        let meta = std::fs::metadata(above).map_err(|e| format!("{}: {e}", above.display()))?;
        let owner_ok = meta.uid() == 0 || meta.uid() == me;
        let shared_safely = meta.mode() & 0o1000 != 0;
        if !owner_ok {
            return Err(format!(
                "{} above it belongs to another user (uid {})",
                above.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 && !shared_safely {
            return Err(format!(
                "{} above it can be written by other users (mode {:o})",
                above.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    check_dir(real, me)?;
    // What the cache holds, where it exists already (made by an earlier, looser version).
    for sub in FILE_DIRS.iter().chain(&["locks"]) {
        let path = real.join(sub);
        if path.exists() {
            check_dir(&path, me)?;
        }
    }
    Ok(())
}

/// The cache itself, or a directory in it: this user's (or root's) and nobody else's to write.
fn check_dir(dir: &Path, me: u32) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != me && meta.uid() != 0 {
        return Err(format!(
            "{} belongs to another user (uid {})",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} can be written by other users (mode {:o})",
            dir.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Makes the cache 0700 when this user owns it and others may read it (logged).
fn make_private(real: &Path, me: u32) {
    let Ok(meta) = std::fs::metadata(real) else {
        return;
    };
    if meta.uid() != me || meta.mode() & 0o077 == 0 {
        return;
    }
    match std::fs::set_permissions(real, std::fs::Permissions::from_mode(0o700)) {
        Ok(()) => tracing::info!(
            cache = %real.display(),
            "the compile cache could be read by other users; made private (snapshots carry \
             model files)"
        ),
        Err(e) => tracing::warn!(cache = %real.display(), "cannot make the cache private: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_missing_cache_is_made_private_and_a_readable_one_of_ours_made_private() {
        let base = tempfile::tempdir().unwrap();
        let made = trusted(&base.path().join("a").join("cache")).unwrap();
        assert_eq!(mode(&made), 0o700);
        let readable = base.path().join("readable");
        std::fs::create_dir(&readable).unwrap();
        std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(mode(&trusted(&readable).unwrap()), 0o700);
    }

    #[test]
    fn a_cache_others_can_write_is_refused_with_what_to_do() {
        let base = tempfile::tempdir().unwrap();
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = trusted(&open).unwrap_err().to_string();
        assert!(error.contains("can be written by other users"), "{error}");
        assert!(error.contains("--cache-dir"), "{error}");
        // Below a directory others can write, however private the cache itself.
        let inner = open.join("inner");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&inner)
            .unwrap();
        let error = trusted(&inner).unwrap_err().to_string();
        assert!(error.contains("above it"), "{error}");
        // A subdirectory an older version left writable.
        let cache = base.path().join("cache");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&cache)
            .unwrap();
        let layout = cache.join(super::super::super::compiled::LAYOUT);
        std::fs::create_dir(&layout).unwrap();
        std::fs::set_permissions(&layout, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(trusted(&cache).is_err());
    }

    /// A link to a safe cache is followed once and the real path used from then on; a link
    /// in a shared directory cannot swap the cache later.
    #[test]
    fn the_cache_is_used_by_its_real_path() {
        let base = tempfile::tempdir().unwrap();
        let real = base.path().join("real");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&real)
            .unwrap();
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(trusted(&link).unwrap(), real.canonicalize().unwrap());
    }

    /// Another user's cache, as root (the planted-cache attack): refused.
    #[test]
    fn another_users_cache_is_refused() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIPPED: another_users_cache_is_refused needs root (to chown)");
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let theirs = base.path().join("theirs");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&theirs)
            .unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let error = trusted(&theirs).unwrap_err().to_string();
        assert!(error.contains("belongs to another user"), "{error}");
    }
}
