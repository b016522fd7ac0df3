//! The shape check on the repository as it is, and on small repositories written to show
//! that each rule finds what it is for.

use super::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The repository as it is: the binary's layers hold, no file is too long without a
/// reason, the map names every module, links lead somewhere.
#[test]
fn the_repository_keeps_its_shape() {
    let problems = check(&root()).unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A scratch repository, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    /// A repository with a map naming `named` and the given files (path, text).
    fn new(named: &str, files: &[(&str, &str)]) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("xtask-shape-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (dir_of_layer, _) in LAYERS {
            std::fs::create_dir_all(dir.join(dir_of_layer)).unwrap();
        }
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        std::fs::write(
            dir.join("README.md"),
            "See [the map](docs/ARCHITECTURE.md).\n",
        )
        .unwrap();
        std::fs::write(dir.join(MAP), named).unwrap();
        for (path, text) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        Self(dir)
    }

    fn problems(&self) -> Vec<Problem> {
        check(&self.0).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn lines(n: usize, opening: &str) -> String {
    format!("{opening}\n{}", "fn f() {}\n".repeat(n))
}

#[test]
fn a_service_naming_a_command_is_refused_but_a_comment_is_not() {
    let repo = Scratch::new(
        "`services::a` `commands::b`",
        &[
            (
                "runtime-host/src/services/a.rs",
                "// crate::commands in a comment\nuse crate::commands::b;\n",
            ),
            (
                "runtime-host/src/commands/b.rs",
                "use crate::services::a;\n",
            ),
        ],
    );
    let problems = repo.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("services/a.rs:2: services imports from commands"),
        "{problems:?}"
    );
}

#[test]
fn grouped_and_relative_imports_of_a_layer_above_are_refused_too() {
    let code = [
        "use crate::{",
        "    services::app,",
        "    cli::Cli,",
        "};",
        "use crate::{commands::up, services};",
        "use super::super::cli::Cli;",
        "use crate::services::clip;",
    ];
    assert_eq!(lines_naming(&code, "cli"), [0, 5]);
    assert_eq!(lines_naming(&code, "commands"), [4]);
    assert!(
        lines_naming(&code, "clip").is_empty(),
        "a module inside another is not one"
    );
}

#[test]
fn a_long_file_needs_a_stated_reason_not_a_quoted_rule() {
    let repo = Scratch::new(
        "`support::a` `support::b` `support::c`",
        &[
            ("crates/host-support/src/a.rs", &lines(401, "//! A module.")),
            (
                "crates/host-support/src/b.rs",
                &lines(401, "//! Says \"Over 400 lines:\" and stops."),
            ),
            (
                "crates/host-support/src/c.rs",
                &lines(401, "//! Over 400 lines: one table per case, generated."),
            ),
            ("tests/tests/long.rs", &lines(401, "//! A test.")),
            (
                "tools/long.py",
                &lines(401, "# Over 400 lines: one row per molecule, as data."),
            ),
        ],
    );
    let mut problems = repo.problems();
    problems.sort();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].starts_with("crates/host-support/src/a.rs has 402 lines"));
    assert!(problems[1].starts_with("crates/host-support/src/b.rs has 402 lines"));
    assert!(
        problems[2].starts_with("tests/tests/long.rs has 402 lines"),
        "{problems:?}"
    );
}

#[test]
fn a_module_missing_from_the_map_is_named() {
    let repo = Scratch::new(
        "`http::server` only",
        &[
            ("crates/host-http/src/lib.rs", ""),
            ("crates/host-http/src/server.rs", ""),
            ("crates/host-http/src/held.rs", ""),
            ("crates/host-http/src/server_tests.rs", ""),
            ("runtime-host/src/services/deployments/mod.rs", ""),
        ],
    );
    let problems = repo.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("`http::held`"), "{problems:?}");
    assert!(
        problems[1].contains("`services::deployments`"),
        "{problems:?}"
    );
}

#[test]
fn broken_links_missing_documents_and_dated_figures_are_named() {
    let repo = Scratch::new(
        "Measured on 2026-11-28: fast. [a](missing.md) [b](ARCHITECTURE.md) [c](https://x.org/y.md)",
        &[(
            "crates/host-support/src/lib.rs",
            "//! As DESIGN.md says, and docs/ARCHITECTURE.md.\n",
        )],
    );
    let mut problems = repo.problems();
    problems.sort();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("cites DESIGN.md"), "{problems:?}");
    assert!(
        problems[1].contains("link to missing.md leads nowhere"),
        "{problems:?}"
    );
    assert!(
        problems[2].contains("ARCHITECTURE.md:1: a dated figure"),
        "{problems:?}"
    );
}
