//! The optional tools some tests need, in one list: how the test command gets each (installed
//! with apt-get or pip where it may, found otherwise), the variable that tells the tests it
//! has it, and what is skipped without it. The tests' side of the same list is
//! `e2e_tests::tools` (tests/src/tools.rs): a test that lacks a tool skips, loudly, unless the
//! test command set the tool's variable, where it fails; and under CI the test command itself
//! fails unless it has them all.

use crate::{oip_python, openai_python, services};
use std::path::Path;

/// A tool some tests need.
pub struct Tool {
    /// What it is, for the CI error that names what is missing.
    pub what: &'static str,
    /// Set to `1` for the tests once the tool is here: a test that then lacks it fails
    /// rather than skips.
    pub require: &'static str,
    /// What the run's summary says was skipped without it.
    pub skipped: &'static str,
    /// Installs or finds it, from the repository root; `false`, announced loudly (naming the
    /// tests skipped), where it cannot.
    ensure: fn(&Path) -> bool,
}

/// Every optional tool, in the order they are got: Redis before the fleet, which needs it.
pub const OPTIONAL: &[Tool] = &[
    Tool {
        what: "redis-server",
        require: "E2E_REQUIRE_REDIS",
        skipped: "the Redis tests (redis-server missing; see above)",
        ensure: |_| services::ensure_redis(),
    },
    Tool {
        what: "Chromium",
        require: "E2E_REQUIRE_BROWSER",
        skipped: "the browser test (chromium missing; see above)",
        ensure: |_| services::ensure_browser(),
    },
    Tool {
        what: "Prometheus",
        require: "E2E_REQUIRE_PROMETHEUS",
        skipped: "the Prometheus scrape of the stack (prometheus missing; see above)",
        ensure: |_| services::ensure_prometheus(),
    },
    Tool {
        what: "valgrind",
        require: "E2E_REQUIRE_VALGRIND",
        skipped: "the bench's instructions section (valgrind missing; see above)",
        ensure: |_| services::ensure_valgrind(),
    },
    Tool {
        what: "the tests' Python tools",
        require: "E2E_REQUIRE_TEST_PYTHON",
        skipped: "the schemathesis runs and the bring-your-own-model test (the tests' Python \
                  tools missing; see above)",
        ensure: services::ensure_test_python,
    },
    Tool {
        what: "the Open Inference Protocol's clients",
        require: "E2E_REQUIRE_OIP_PYTHON",
        skipped: "the Open Inference Protocol clients and schemathesis run (their tools \
                  missing; see above)",
        ensure: oip_python::ensure,
    },
    Tool {
        what: "the OpenAI client",
        require: "E2E_REQUIRE_OPENAI_PYTHON",
        skipped: "the OpenAI client's tests (its environment missing; see above)",
        ensure: openai_python::ensure,
    },
    Tool {
        what: "Spin",
        require: "E2E_REQUIRE_SPIN",
        skipped: "the Spin scenarios (no spin CLI; see above)",
        ensure: services::ensure_spin,
    },
    Tool {
        what: "docker-registry",
        require: "E2E_REQUIRE_OCI_REGISTRY",
        skipped: "the OCI registry round trip (docker-registry missing; see above)",
        ensure: |_| services::ensure_oci_registry(),
    },
    Tool {
        what: "the fleet's HAProxy (as root)",
        require: "E2E_REQUIRE_FLEET",
        skipped: "the fleet behind HAProxy (needs root, haproxy and redis-server; see above)",
        ensure: |_| services::ensure_fleet(),
    },
    Tool {
        what: PACKAGE,
        require: "E2E_REQUIRE_PACKAGE",
        skipped: "the Debian package's installation and the fleet on it (needs root and dpkg; \
                  see above)",
        ensure: |_| services::ensure_package(),
    },
];

/// [`Tool::what`] of the Debian package's test: with it, the test command builds the packages
/// (`crate::deb`) once, before the tests.
pub const PACKAGE: &str = "the Debian package (as root)";

/// Which of the [`OPTIONAL`] tools this machine has.
pub struct Found(Vec<(&'static Tool, bool)>);

impl Found {
    /// Gets every optional tool in turn (installing what this process may).
    pub fn ensure(root: &Path) -> Self {
        Self(OPTIONAL.iter().map(|t| (t, (t.ensure)(root))).collect())
    }

    /// Whether the tool `what` ([`Tool::what`]) is here.
    pub fn has(&self, what: &str) -> bool {
        self.0.iter().any(|(t, here)| *here && t.what == what)
    }

    /// The tools that are not here.
    pub fn missing(&self) -> impl Iterator<Item = &'static Tool> + '_ {
        self.0.iter().filter(|(_, here)| !here).map(|(t, _)| *t)
    }

    /// The variables that make the tests require the tools that are here.
    pub fn required(&self) -> Vec<(String, String)> {
        self.0
            .iter()
            .filter(|(_, here)| *here)
            .map(|(t, _)| (t.require.to_owned(), "1".to_owned()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    /// The tests read the same variables (tests/src/tools.rs): a name that differs on one
    /// side would turn a required tool back into a silent skip.
    #[test]
    fn the_tests_know_every_tools_variable() {
        let tests = std::fs::read_to_string(crate::root().join("tests/src/tools.rs")).unwrap();
        for tool in super::OPTIONAL {
            assert!(
                tests.contains(&format!("\"{}\"", tool.require)),
                "tests/src/tools.rs does not read {} ({})",
                tool.require,
                tool.what
            );
        }
        let variables = tests.matches("\"E2E_REQUIRE_").count();
        assert_eq!(
            variables,
            super::OPTIONAL.len(),
            "tests/src/tools.rs reads a variable the test command never sets"
        );
    }

    #[test]
    fn found_tools_are_required_and_missing_ones_skipped() {
        let (redis, browser) = (&super::OPTIONAL[0], &super::OPTIONAL[1]);
        let found = super::Found(vec![(redis, true), (browser, false)]);
        assert!(found.has("redis-server") && !found.has("Chromium"));
        assert_eq!(
            found.required(),
            [("E2E_REQUIRE_REDIS".to_owned(), "1".to_owned())]
        );
        assert_eq!(
            found.missing().map(|t| t.what).collect::<Vec<_>>(),
            ["Chromium"]
        );
    }
}
