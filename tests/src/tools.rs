//! The optional tools some tests need, and the one rule for a test that lacks one: it is
//! skipped with a loud `SKIPPED <test>: ...` line, unless `cargo xtask test` found or
//! installed the tool and said so (`E2E_REQUIRE_<TOOL>=1`), where the lack fails the test: a
//! tool that went missing must not pass as a skip. Under CI the test command fails unless it
//! has every tool, so there nothing is skipped. The test command's side of the same list is
//! crates/xtask/src/optional_tools.rs (a unit test there keeps the variables the same).

/// A tool some tests need that a machine may lack.
#[derive(Clone, Copy, Debug)]
pub enum Tool {
    /// `redis-server` ([`crate::redis::RedisServer`]).
    Redis,
    /// Headless Chromium and chromedriver ([`crate::browser::Browser`]).
    Browser,
    /// A Prometheus server ([`crate::prometheus::Prometheus`]).
    Prometheus,
    /// valgrind's callgrind, for the bench's instructions section.
    Valgrind,
    /// The tests' Python tools in target/test-python ([`crate::test_python`]).
    TestPython,
    /// The Open Inference Protocol's clients in target/test-python-oip, and its document.
    OipPython,
    /// OpenAI's Python client in target/test-python-openai.
    OpenaiPython,
    /// The Spin CLI ([`crate::spin::spin_binary`]).
    Spin,
    /// The CNCF distribution registry, `docker-registry` ([`crate::oci::OciRegistry`]).
    OciRegistry,
    /// Root, HAProxy, iproute2 and redis-server, for a fleet in network namespaces.
    Fleet,
    /// Root and dpkg, and the packages `cargo xtask test` built in target/debian, to install
    /// into this machine.
    Package,
}

impl Tool {
    /// The variable `cargo xtask test` sets to `1` once it has the tool.
    fn variable(self) -> &'static str {
        match self {
            Tool::Redis => "E2E_REQUIRE_REDIS",
            Tool::Browser => "E2E_REQUIRE_BROWSER",
            Tool::Prometheus => "E2E_REQUIRE_PROMETHEUS",
            Tool::Valgrind => "E2E_REQUIRE_VALGRIND",
            Tool::TestPython => "E2E_REQUIRE_TEST_PYTHON",
            Tool::OipPython => "E2E_REQUIRE_OIP_PYTHON",
            Tool::OpenaiPython => "E2E_REQUIRE_OPENAI_PYTHON",
            Tool::Spin => "E2E_REQUIRE_SPIN",
            Tool::OciRegistry => "E2E_REQUIRE_OCI_REGISTRY",
            Tool::Fleet => "E2E_REQUIRE_FLEET",
            Tool::Package => "E2E_REQUIRE_PACKAGE",
        }
    }

    /// What is missing and how to get it, for the SKIPPED line.
    fn missing(self) -> &'static str {
        match self {
            Tool::Redis => {
                "redis-server is not installed (apt-get install redis-server; `cargo xtask test` \
                 does this when it runs as root)"
            }
            Tool::Browser => {
                "chromium and chromium-driver are not installed (apt-get install chromium \
                 chromium-driver; `cargo xtask test` does this when it runs as root)"
            }
            Tool::Prometheus => {
                "prometheus is not installed (apt-get install prometheus; `cargo xtask test` \
                 does this when it runs as root)"
            }
            Tool::Valgrind => {
                "valgrind is not installed (apt-get install valgrind; `cargo xtask test` does \
                 this when it runs as root)"
            }
            Tool::TestPython => {
                "the tests' Python tools are not installed in target/test-python (`cargo xtask \
                 test` installs tests/python/requirements.txt there)"
            }
            Tool::OipPython => {
                "the protocol's clients (target/test-python-oip) or its OpenAPI document \
                 (target/oip-openapi/dataplane.json) are missing or stale (`cargo xtask test` \
                 installs tests/python/oip-requirements.txt and takes the document out of the \
                 wheel tests/python/oip-openapi.txt pins)"
            }
            Tool::OpenaiPython => {
                "the OpenAI client is not installed in target/test-python-openai (`cargo xtask \
                 test` installs tests/python/openai-requirements.txt there)"
            }
            Tool::Spin => {
                "Spin is not installed (set SPIN, put spin on the PATH, or use \
                 ../shared/bin/spin)"
            }
            Tool::OciRegistry => {
                "docker-registry is not installed (apt-get install docker-registry; `cargo \
                 xtask test` does this when it runs as root)"
            }
            Tool::Fleet => {
                "this machine cannot run a fleet (`cargo xtask test` run as root installs what \
                 it needs)"
            }
            Tool::Package => {
                "the Debian package cannot be installed here (it needs root, dpkg, and \
                 target/debian/*.deb, which `cargo xtask deb` builds and `cargo xtask test` \
                 builds when it runs as root)"
            }
        }
    }

    /// Whether the test command has the tool, so that a test lacking it must fail.
    pub fn required(self) -> bool {
        std::env::var(self.variable()).is_ok_and(|v| v == "1")
    }
}

/// `found` where the tool is here; where it is not (`None`), `None` after a loud SKIPPED line
/// naming `test` and saying how to get the tool, or a panic where the test command has the
/// tool ([`Tool::required`]).
pub fn require_or_skip<T>(tool: Tool, test: &str, found: Option<T>) -> Option<T> {
    decide(tool, test, found, tool.required())
}

/// [`require_or_skip`] with whether the tool is required given.
fn decide<T>(tool: Tool, test: &str, found: Option<T>, required: bool) -> Option<T> {
    if found.is_none() {
        if required {
            panic!(
                "{test}: {}, but {}=1: the test command has it",
                tool.missing(),
                tool.variable()
            );
        }
        eprintln!("SKIPPED {test}: {}", tool.missing());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::{Tool, decide};

    #[test]
    fn a_tool_here_is_passed_through_and_a_missing_one_skipped() {
        assert_eq!(decide(Tool::Redis, "t", Some(7), true), Some(7));
        assert_eq!(decide(Tool::Redis, "t", Some(7), false), Some(7));
        assert_eq!(decide::<u8>(Tool::Redis, "t", None, false), None);
    }

    #[test]
    #[should_panic(expected = "t: redis-server is not installed")]
    fn a_missing_tool_the_test_command_has_fails_the_test() {
        decide::<u8>(Tool::Redis, "t", None, true);
    }
}
