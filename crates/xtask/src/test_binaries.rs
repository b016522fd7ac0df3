//! The test binaries `cargo test --no-run` builds, and the groups of their tests that run
//! as one process each: a whole binary, or one module (`group::module`) of the end-to-end
//! binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A test binary cargo built.
#[derive(Clone)]
pub struct Binary {
    /// The target's name (`e2e`, or the crate's name for unit tests).
    pub name: String,
    pub executable: PathBuf,
    /// The package's directory: cargo runs tests there, and so do we.
    pub dir: PathBuf,
}

/// Tests of one binary that run as one process: all of them, or (for the end-to-end binary)
/// one module's, named exactly.
pub struct Group {
    pub label: String,
    pub binary: Binary,
    /// The tests' full names; `None` for every test of the binary.
    pub tests: Option<Vec<String>>,
}

impl Group {
    /// The binary's arguments that run this group, less the tests whose names contain one
    /// of `skip` (libtest's own `--skip` cannot be used: with `--exact` it matches whole
    /// names only); `None` when that leaves no test (libtest given no name runs them all).
    pub fn args(&self, skip: &[&str]) -> Option<Vec<String>> {
        let skipped = |name: &str| skip.iter().any(|part| name.contains(part));
        match &self.tests {
            Some(tests) => {
                let kept: Vec<String> = tests.iter().filter(|t| !skipped(t)).cloned().collect();
                (!kept.is_empty())
                    .then(|| std::iter::once("--exact".to_owned()).chain(kept).collect())
            }
            None => Some(
                skip.iter()
                    .flat_map(|part| ["--skip".to_owned(), part.to_string()])
                    .collect(),
            ),
        }
    }
}

/// The tests of `binary` grouped by their module (`chat::api::refusals::x` is `chat::api`'s),
/// each group labelled with the module's path.
pub fn modules(binary: &Binary) -> Result<Vec<Group>, String> {
    let listed = Command::new(&binary.executable)
        .args(["--list", "--format", "terse"])
        .current_dir(&binary.dir)
        .output()
        .map_err(|e| format!("listing {}: {e}", binary.executable.display()))?;
    if !listed.status.success() {
        return Err(format!(
            "listing the tests of {} failed ({}): {}",
            binary.name,
            listed.status,
            String::from_utf8_lossy(&listed.stderr)
        ));
    }
    let modules = group_by_module(&String::from_utf8_lossy(&listed.stdout));
    if modules.is_empty() {
        return Err(format!("{} lists no test", binary.name));
    }
    Ok(modules
        .into_iter()
        .map(|(module, tests)| Group {
            label: module,
            binary: binary.clone(),
            tests: Some(tests),
        })
        .collect())
}

/// How deep a module that runs as one process lies: `tests/tests/e2e.rs` declares the groups
/// (`chat`), each group its modules (`chat::api`).
const MODULE_DEPTH: usize = 2;

/// libtest's terse list (`group::module::name: test` a line) as test names by module: the
/// first [`MODULE_DEPTH`] parts of a name, less the test's own (a test declared in a group's
/// `mod.rs` is the group's).
fn group_by_module(list: &str) -> BTreeMap<String, Vec<String>> {
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in list.lines().filter_map(|l| l.strip_suffix(": test")) {
        let parts: Vec<&str> = name.split("::").collect();
        let depth = parts.len().saturating_sub(1).clamp(1, MODULE_DEPTH);
        modules
            .entry(parts[..depth].join("::"))
            .or_default()
            .push(name.to_owned());
    }
    modules
}

/// Builds every test binary `cargo` (a prepared `cargo test ... --no-run`) selects and lists
/// them from its JSON messages (compiler messages still reach the terminal, rendered).
pub fn build(mut cargo: Command) -> Result<Vec<Binary>, String> {
    cargo.args(["--no-run", "--message-format=json-render-diagnostics"]);
    let mut binaries = Vec::new();
    let status = crate::each_output_line(cargo, |line| {
        let message = serde_json::from_str::<serde_json::Value>(&line);
        if let Some(binary) = message.ok().as_ref().and_then(test_binary) {
            binaries.push(binary);
        }
    })?;
    if !status.success() {
        return Err(format!("building the tests failed ({status})"));
    }
    binaries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(binaries)
}

/// The test binary a `compiler-artifact` message announces, if it is one.
fn test_binary(message: &serde_json::Value) -> Option<Binary> {
    if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
        return None;
    }
    let executable = PathBuf::from(message["executable"].as_str()?);
    let dir = Path::new(message["manifest_path"].as_str()?).parent()?;
    Some(Binary {
        name: message["target"]["name"].as_str()?.to_owned(),
        executable,
        dir: dir.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    /// With `autotests = false`, a scenario file that is not declared (in its group's `mod.rs`,
    /// the group in `tests/tests/e2e.rs`) would never be built or run; and a module outside
    /// any group would sit where the map of the tests does not show it.
    #[test]
    fn every_end_to_end_file_is_a_module_of_a_group_of_the_binary() {
        let dir = crate::root().join("tests/tests");
        let declares = |file: &std::path::Path, module: &str| {
            let text = std::fs::read_to_string(file).unwrap();
            let declared = format!("mod {module};");
            text.lines().any(|l| l.trim() == declared)
        };
        let mut groups = 0;
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "e2e.rs" {
                continue;
            }
            assert!(
                entry.path().is_dir(),
                "tests/tests/{name} is outside every group: move it into the group of \
                 tests/tests/e2e.rs that names what it tests"
            );
            assert!(
                declares(&dir.join("e2e.rs"), &name),
                "the group tests/tests/{name}/ is not declared in tests/tests/e2e.rs: it would \
                 never run"
            );
            groups += 1;
            for module in std::fs::read_dir(entry.path()).unwrap().flatten() {
                let file = module.file_name().to_string_lossy().into_owned();
                let module = file.strip_suffix(".rs").unwrap_or(&file);
                if module == "mod" {
                    continue;
                }
                assert!(
                    declares(&entry.path().join("mod.rs"), module),
                    "tests/tests/{name}/{file} is not declared in tests/tests/{name}/mod.rs: \
                     it would never run"
                );
            }
        }
        assert!(groups > 1, "no groups found in {}", dir.display());
    }

    #[test]
    fn a_list_of_tests_groups_by_module_and_skips_by_name_part() {
        let list = "chat::api::lists: test\nchat::api::refusals::bad: test\n\
                    chat::data::restart: test\nchat::in_the_group: test\n\
                    registry::api::leases::under_spin_x: test\nregistry::api::five: test\n\
                    top: test\ntools::openapi::doc: benchmark\n";
        let modules = super::group_by_module(list);
        assert_eq!(
            modules.keys().collect::<Vec<_>>(),
            ["chat", "chat::api", "chat::data", "registry::api", "top"]
        );
        assert_eq!(
            modules["chat::api"],
            ["chat::api::lists", "chat::api::refusals::bad"]
        );
        let binary = super::Binary {
            name: "e2e".into(),
            executable: "/e2e".into(),
            dir: "/".into(),
        };
        let group = super::Group {
            label: "registry::api".into(),
            binary: binary.clone(),
            tests: Some(modules["registry::api"].clone()),
        };
        assert_eq!(
            group.args(&["under_spin_"]).unwrap(),
            ["--exact", "registry::api::five"]
        );
        assert_eq!(group.args(&["registry::"]), None, "nothing left: no job");
        let whole = super::Group {
            label: "e2e".into(),
            binary,
            tests: None,
        };
        assert_eq!(whole.args(&["a"]).unwrap(), ["--skip", "a"]);
    }

    #[test]
    fn finds_test_binaries_in_cargo_messages() {
        let message = serde_json::json!({
            "reason": "compiler-artifact",
            "manifest_path": "/w/tests/Cargo.toml",
            "target": {"name": "e2e", "kind": ["test"]},
            "profile": {"test": true},
            "executable": "/w/target/release/deps/e2e-0123"
        });
        let binary = super::test_binary(&message).expect("a test binary");
        assert_eq!(binary.name, "e2e");
        assert_eq!(binary.dir, std::path::Path::new("/w/tests"));
        let mut library = message.clone();
        library["profile"]["test"] = false.into();
        assert!(super::test_binary(&library).is_none());
    }
}
