//! The test binaries `cargo test --no-run` builds, and the groups of their tests that run
//! as one process each: a whole binary, or one module of the end-to-end binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A test binary cargo built.
#[derive(Clone)]
pub struct Binary {
    /// The target's name (`chat_api`, or the crate's name for unit tests).
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

/// The tests of `binary` grouped by their top module (`chat_api::refusals::x` is
/// `chat_api`'s), each group labelled with the module's name.
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

/// libtest's terse list (`module::name: test` a line) as test names by top module.
fn group_by_module(list: &str) -> BTreeMap<String, Vec<String>> {
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in list.lines().filter_map(|l| l.strip_suffix(": test")) {
        let module = name.split("::").next().unwrap_or(name);
        modules
            .entry(module.to_owned())
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
    /// With `autotests = false`, a scenario file that `tests/tests/e2e.rs` does not declare
    /// would never be built or run.
    #[test]
    fn every_end_to_end_file_is_a_module_of_the_binary() {
        let dir = crate::root().join("tests/tests");
        let e2e = std::fs::read_to_string(dir.join("e2e.rs")).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let module = name.strip_suffix(".rs").unwrap_or(&name);
            if module == "e2e" {
                continue;
            }
            let declared = format!("mod {module};");
            assert!(
                e2e.lines().any(|l| l.trim() == declared),
                "tests/tests/{name} is not declared in tests/tests/e2e.rs: it would never run"
            );
        }
    }

    #[test]
    fn a_list_of_tests_groups_by_top_module_and_skips_by_name_part() {
        let list = "chat_api::lists: test\nchat_api::refusals::bad: test\n\
                    registry::leases::under_spin_x: test\nregistry::five: test\n\
                    openapi::doc: benchmark\n";
        let modules = super::group_by_module(list);
        assert_eq!(modules.keys().collect::<Vec<_>>(), ["chat_api", "registry"]);
        assert_eq!(
            modules["chat_api"],
            ["chat_api::lists", "chat_api::refusals::bad"]
        );
        let binary = super::Binary {
            name: "e2e".into(),
            executable: "/e2e".into(),
            dir: "/".into(),
        };
        let group = super::Group {
            label: "registry".into(),
            binary: binary.clone(),
            tests: Some(modules["registry"].clone()),
        };
        assert_eq!(
            group.args(&["under_spin_"]).unwrap(),
            ["--exact", "registry::five"]
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
            "target": {"name": "chat_api", "kind": ["test"]},
            "profile": {"test": true},
            "executable": "/w/target/release/deps/chat_api-0123"
        });
        let binary = super::test_binary(&message).expect("a test binary");
        assert_eq!(binary.name, "chat_api");
        assert_eq!(binary.dir, std::path::Path::new("/w/tests"));
        let mut library = message.clone();
        library["profile"]["test"] = false.into();
        assert!(super::test_binary(&library).is_none());
    }
}
