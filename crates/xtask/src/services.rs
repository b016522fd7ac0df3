//! Real services the tests need, from Debian's packages: installed with apt-get when the
//! test command runs as root (as CI does), otherwise reported loudly as skipped.

use std::path::Path;
use std::process::{Command, Stdio};

/// The test binary that runs a process per module (`tests/tests/e2e.rs`).
pub const BY_MODULE: &str = "e2e";

/// End-to-end modules whose scenarios run a second time with every host's store on Redis.
pub const REDIS_PASS: &[&str] = &[
    "chat::api",
    "chat::data",
    "host::services",
    "registry::api",
    "models::lifecycle",
];

/// Scenarios of those modules that work on the SQLite file itself: the Redis pass leaves
/// out every test whose name contains one of these, so they are neither run nor counted
/// there.
pub const SQLITE_ONLY: &[&str] = &[
    "store_file_uses_spins_layout",
    // Spin's store, not runtime-host's: the pass would run them again unchanged.
    "under_spin_",
    "a_lock_left_by_a_dead_request_is_broken_and_a_live_one_is_not",
];

/// Test modules that run with no other beside them: the bench's smoke run loads every core
/// on purpose, and the embedding tests time CPU-bound passes against request deadlines
/// (beside the bench, a 2 s deadline was missed).
pub const RUN_ALONE: &[&str] = &["tools::bench", "models::embeddings", "tools::package"];

/// A service some tests need: the programs that must run, the Debian packages that bring
/// them, and which tests are skipped without it.
struct Needed {
    what: &'static str,
    programs: &'static [&'static str],
    packages: &'static [&'static str],
    tests: &'static str,
}

const REDIS: Needed = Needed {
    what: "redis-server",
    programs: &["redis-server", "redis-cli"],
    packages: &["redis-server", "redis-tools"],
    tests: "tests/tests/host/redis_store.rs (two registries and two chat hosts on one Redis, \
            Redis killed under load) and the Redis pass of chat::api, chat::data, \
            registry::api, host::services and models::lifecycle",
};

const BROWSER: Needed = Needed {
    what: "chromium and chromedriver",
    programs: &["chromium", "chromedriver"],
    packages: &["chromium", "chromium-driver"],
    tests: "the browser tests of the web console (tests/tests/console/)",
};

const PROMETHEUS: Needed = Needed {
    what: "prometheus",
    programs: &["prometheus"],
    packages: &["prometheus"],
    tests: "the Prometheus scrape of the stack (tests/tests/host/metrics.rs, \
            prometheus_scrapes_the_stack_and_promql_sees_the_traffic)",
};

const VALGRIND: Needed = Needed {
    what: "valgrind",
    programs: &["valgrind", "callgrind_control"],
    packages: &["valgrind"],
    tests: "the bench's instructions section in tests/tests/tools/bench.rs (instructions per \
            request under callgrind)",
};

const OCI_REGISTRY: Needed = Needed {
    what: "docker-registry",
    programs: &["docker-registry"],
    packages: &["docker-registry"],
    tests: "the app pushed to a local OCI registry and run from its reference \
            (tests/tests/spin/app.rs, the_app_pushed_to_an_oci_registry_runs_from_its_reference)",
};

const HAPROXY: Needed = Needed {
    what: "haproxy",
    // `haproxy` and `ip` answer `-v`/`-V`, not `--version`: checked in `ensure_fleet`.
    programs: &[],
    packages: &["haproxy", "iproute2"],
    tests: "the fleet of three hosts behind HAProxy (tests/tests/fleet/three_hosts/)",
};

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Installs Debian `packages` with apt-get, if this process may. The package lists are
/// refreshed once per run, however many services need installing.
fn apt_install(packages: &[&str]) -> Result<(), String> {
    static UPDATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !is_root() || !local_redis::program_runs("apt-get") {
        return Err("not root, or no apt-get".into());
    }
    let quiet = |args: &[&str]| {
        eprintln!("xtask: running apt-get {}", args.join(" "));
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .map_err(|e| e.to_string())
            .and_then(|s| {
                s.success()
                    .then_some(())
                    .ok_or(format!("apt-get failed ({s})"))
            })
    };
    if !UPDATED.load(std::sync::atomic::Ordering::Relaxed) {
        quiet(&["update", "-qq"])?;
        UPDATED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(packages);
    quiet(&install)
}

/// Makes sure `redis-server` is here; `false` (announced loudly) when it cannot be.
pub fn ensure_redis() -> bool {
    ensure(&REDIS)
}

/// Makes sure headless Chromium and its WebDriver are here; `false` (announced loudly) when
/// they cannot be.
pub fn ensure_browser() -> bool {
    ensure(&BROWSER)
}

/// Makes sure a Prometheus server is here; `false` (announced loudly) when it cannot be.
pub fn ensure_prometheus() -> bool {
    ensure(&PROMETHEUS)
}

/// Makes sure the CNCF distribution registry (`docker-registry`) is here; `false`
/// (announced loudly) when it cannot be.
pub fn ensure_oci_registry() -> bool {
    let here = ensure(&OCI_REGISTRY);
    // On a machine run by systemd the package starts a registry on port 5000, the registry
    // interface's port; the tests start their own on a free port, so it is stopped again.
    if here && is_root() && local_redis::program_runs("systemctl") {
        let _ = Command::new("systemctl")
            .args(["disable", "--now", "docker-registry"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    here
}

/// Whether the Debian package's test can run: as root (it installs into this machine, with
/// `dpkg -i`) with `dpkg-deb` and `adduser`; `false` (announced loudly) when it cannot.
pub fn ensure_package() -> bool {
    let tests = "the Debian package installed, served by its unit and purged \
                 (tests/tests/tools/package.rs), and the fleet that runs on it \
                 (tests/tests/fleet/three_hosts/)";
    let why = if !is_root() {
        "it installs into this machine with dpkg -i, which needs root"
    } else if !local_redis::program_answers("dpkg-deb", "--version")
        || !local_redis::program_answers("adduser", "--version")
    {
        "dpkg-deb or adduser is missing"
    } else {
        return true;
    };
    eprintln!(
        "\nxtask: ************************************************************\n\
         xtask: SKIPPING {tests}:\n\
         xtask: {why}.\n\
         xtask: ************************************************************\n"
    );
    false
}

/// Makes sure the fleet test can run: root (it makes network namespaces), HAProxy,
/// iproute2's `ip` and redis-server (got before, by [`ensure_redis`]); `false` (announced
/// loudly) when it cannot.
pub fn ensure_fleet() -> bool {
    let runs = local_redis::program_answers;
    let present = || runs("haproxy", "-v") && runs("ip", "-V");
    if !is_root() {
        eprintln!(
            "\nxtask: ************************************************************\n\
             xtask: SKIPPING {}:\n\
             xtask: it makes network namespaces, which needs root.\n\
             xtask: ************************************************************\n",
            HAPROXY.tests
        );
        return false;
    }
    if !ensure_with(&HAPROXY, present) {
        return false;
    }
    let redis = local_redis::installed();
    if !redis {
        eprintln!(
            "\nxtask: ************************************************************\n\
             xtask: SKIPPING {}:\n\
             xtask: its hosts share a redis-server, which is missing (see above).\n\
             xtask: ************************************************************\n",
            HAPROXY.tests
        );
    }
    redis
}

/// Makes sure valgrind (callgrind) is here; `false` (announced loudly) when it cannot be.
pub fn ensure_valgrind() -> bool {
    ensure(&VALGRIND)
}

/// Makes sure the tests' Python tools (pinned in tests/python/requirements.txt: schemathesis,
/// scikit-learn, skl2onnx) are in a virtual environment at `target/test-python`; `false`
/// (announced loudly) when they cannot be. Installed again whenever the pins change (a copy
/// of the requirements beside the environment says what it holds).
pub fn ensure_test_python(root: &Path) -> bool {
    let made = crate::python_env::pinned(
        root,
        "target/test-python",
        "tests/python/requirements.txt",
        "bin/st",
        "the tests' Python tools",
    );
    let Err(why) = made else { return true };
    eprintln!(
        "\nxtask: ************************************************************\n\
         xtask: SKIPPING the tests that need the tests' Python tools (schemathesis runs,\n\
         xtask: the bring-your-own-model test): {why}.\n\
         xtask: ************************************************************\n"
    );
    false
}

fn ensure(needed: &Needed) -> bool {
    ensure_with(needed, || {
        needed.programs.iter().all(|p| local_redis::program_runs(p))
    })
}

/// [`ensure`] with `present` saying whether the service is here.
fn ensure_with(needed: &Needed, present: impl Fn() -> bool) -> bool {
    if present() {
        return true;
    }
    match apt_install(needed.packages) {
        Ok(()) if present() => true,
        outcome => {
            let why = outcome
                .err()
                .unwrap_or_else(|| "installed, yet not found".into());
            eprintln!(
                "\nxtask: ************************************************************\n\
                 xtask: SKIPPING {}:\n\
                 xtask: {} not installed and could not be ({why}).\n\
                 xtask: Install it (sudo apt-get install {}) or run as root.\n\
                 xtask: ************************************************************\n",
                needed.tests,
                needed.what,
                needed.packages.join(" "),
            );
            false
        }
    }
}

/// A redis-server for the Redis pass: many databases (one per test data directory), no
/// persistence (the pass checks behaviour, not durability), killed when dropped.
pub fn pass_redis(dir: &Path) -> Result<local_redis::RedisServer, String> {
    local_redis::RedisServer::start(
        dir,
        local_redis::Options {
            durability: local_redis::Durability::None,
            databases: 10_000,
            ..Default::default()
        },
    )
}

/// Makes sure the Spin CLI runs (`SPIN`, `spin` on the PATH, or the project machines' shared
/// `../shared/bin/spin`, which unpacks itself on first use: done here, during the compile);
/// `false` (announced loudly, naming the tests skipped) when there is none. Spin is not a
/// Debian package, so nothing is installed.
pub fn ensure_spin(root: &Path) -> bool {
    let spin = std::env::var_os("SPIN")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("spin"))
                    .find(|p| p.is_file())
            })
        })
        .or_else(|| Some(root.join("../shared/bin/spin")).filter(|p| p.is_file()));
    let runs = spin.as_ref().is_some_and(|spin| {
        Command::new(spin)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !runs {
        eprintln!(
            "xtask: SKIPPING the Spin tests (tests/tests/spin/, the embeddings and console \
             scenarios under Spin): no working Spin CLI (set SPIN, put spin on the PATH, or use \
             ../shared/bin/spin; it needs xz)"
        );
    }
    runs
}
