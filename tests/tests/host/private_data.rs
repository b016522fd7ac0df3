//! The host's data is its user's alone (issue 45, section 1): another user of the machine
//! read a registration id out of a store `up` had made 0644 in a 0755 directory, unregistered
//! the model with it and took its port. Here the attack runs again as a real second user
//! (`nobody`), against a stack started with umask 000, and against a data directory an earlier
//! run left open to everyone.

use e2e_tests::{Stack, temp_dir};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Every file and directory under `dir` (itself included).
fn everything_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_owned()];
    let mut i = 0;
    while i < found.len() {
        if found[i].is_dir() && !found[i].is_symlink() {
            for e in std::fs::read_dir(&found[i]).unwrap() {
                found.push(e.unwrap().path());
            }
        }
        i += 1;
    }
    found
}

/// Runs `program args` as the user `nobody`; whether it succeeded, and what it printed.
fn as_nobody(program: &str, args: &[&Path]) -> (bool, String) {
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--", program])
        .args(args)
        .output()
        .expect("running runuser");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// What `nobody` can reach of the data directory `data`: nothing. With `all_modes`, every
/// file and directory under it is private by its own mode (what the host makes itself);
/// else the directory itself, the stores and the tokens are (what the host tightens in a
/// directory an earlier run left open: nothing inside a 0700 directory can be reached).
fn assert_private(data: &Path, all_modes: bool) {
    let everything = everything_under(data);
    let db = data.join("sqlite_key_value.db");
    assert!(everything.contains(&db), "no store in {everything:?}");
    assert!(
        everything.contains(&data.join("admin_token")),
        "{everything:?}"
    );
    let checked = everything.iter().filter(|p| {
        all_modes
            || *p == data
            || p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("sqlite_key_value.db") || n.ends_with("token")
            })
    });
    for path in checked {
        let mode = std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o077,
            0,
            "{} is {:o}: readable by other users",
            path.display(),
            mode & 0o7777
        );
    }
    let (listed, text) = as_nobody("ls", &[data]);
    assert!(!listed, "another user listed the data directory:\n{text}");
    for path in everything.iter().filter(|p| p.is_file()) {
        let (read, text) = as_nobody("cat", &[path]);
        assert!(!read, "another user read {}:\n{text}", path.display());
    }
    // The attack's target is there: the registrations, each with its id.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let leases: i64 = conn
        .query_row(
            "SELECT count(*) FROM spin_key_value WHERE key LIKE 'registry/%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(leases > 0, "no registration in the store");
}

/// What an older version (or a careless `chmod -R`) left: everything open to everyone.
fn open_to_everyone(data: &Path) {
    for path in everything_under(data) {
        let mode = if path.is_dir() { 0o777 } else { 0o666 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

#[test]
fn another_user_reads_nothing_of_the_stack_s_data() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "SKIPPED another_user_reads_nothing_of_the_stack_s_data: needs root to run the \
             attack as another user (`cargo xtask test` runs as root in CI)"
        );
        return;
    }
    // The most careless umask: whatever the host makes private, it makes so itself. (This
    // binary has no other test, so no other test's files are touched by it.)
    // SAFETY: umask only swaps the process's file-creation mask.
    unsafe { libc::umask(0) };
    let parent = temp_dir();
    std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = parent.path().join("data");
    let ports = 8;

    // A data directory the host makes itself.
    let mut stack = Stack::up_at(&data, &[], ports);
    assert_private(&data, true);
    stack.stop(Duration::from_secs(60));
    drop(stack);

    // One an earlier run left open, the store files included: tightened at start.
    open_to_everyone(&data);
    assert!(as_nobody("cat", &[&data.join("sqlite_key_value.db")]).0);
    let mut stack = Stack::up_at(&data, &[], ports);
    assert_private(&data, false);
    stack.stop(Duration::from_secs(60));
}
