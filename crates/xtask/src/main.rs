//! `cargo xtask <command>`: the project's two entry points for a fresh machine, plus build.
//!
//! - `build`: installs the `wasm32-wasip2` target if missing, builds every component in
//!   `components/` and the `runtime-host` binary, all in the release profile;
//! - `test`: `build`, then every native test (unit and end-to-end) in the same profile, so
//!   wasmtime's stack is compiled once for both;
//! - `up`: `build`, then runs the local stack on embedded defaults until Ctrl-C.
//!
//! Standard library only, so it compiles in about a second before anything else.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

const WASM_TARGET: &str = "wasm32-wasip2";
const USAGE: &str = "usage: cargo xtask <build | test | up [--chat-port PORT] [--registry-port PORT] [--data-dir DIR]>

  build   install the wasm32-wasip2 target if needed; build components and runtime-host
  test    build, then run every test
  up      build, then run the local stack: chat (http://127.0.0.1:8050, with sample
          dialogs) and the port registry (http://127.0.0.1:5000)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build") => build(),
        Some("test") => build().and_then(|()| test(&args[1..])),
        Some("up") => build().and_then(|()| up(&args[1..])),
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

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

fn run(mut cmd: Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
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

/// Runs the workspace's native crates' tests (its `default-members`), in release, and
/// ends with one `tests: N passed, M failed` line totalling every test binary.
fn test(extra: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["test", "--release", "--no-fail-fast"])
        .args(extra)
        .stdout(Stdio::piped());
    eprintln!("xtask: running {cmd:?}");
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
    println!("tests: {passed} passed, {failed} failed");
    if !status.success() || failed > 0 {
        return Err(format!("tests failed ({status})"));
    }
    if passed == 0 {
        return Err("no test ran".into());
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    #[test]
    fn counts_libtest_summaries() {
        let s = "ok. 7 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.76s";
        assert_eq!(super::count_before(s, "passed"), 7);
        assert_eq!(super::count_before(s, "failed"), 2);
    }
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The admin token: `$CHAT_ADMIN_TOKEN`, else one made on first run and kept in the data dir.
fn admin_token(data_dir: &Path) -> Result<String, String> {
    if let Ok(t) = std::env::var("CHAT_ADMIN_TOKEN")
        && !t.is_empty()
    {
        return Ok(t);
    }
    let file = data_dir.join("chat_admin_token");
    if let Ok(t) = std::fs::read_to_string(&file) {
        return Ok(t.trim().to_owned());
    }
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(
        &mut std::fs::File::open("/dev/urandom").map_err(|e| e.to_string())?,
        &mut bytes,
    )
    .map_err(|e| e.to_string())?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(data_dir).map_err(|e| e.to_string())?;
    std::fs::write(&file, &token).map_err(|e| format!("writing {}: {e}", file.display()))?;
    Ok(token)
}

/// Starts `runtime-host <args>` and waits for its `listening on URL` line; the rest of its
/// standard output keeps being forwarded.
fn start_service(host: &Path, args: &[String]) -> Result<(std::process::Child, String), String> {
    let mut child = Command::new(host)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", host.display()))?;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref().map_while(Result::ok) {
        println!("{line}");
        if let Some(url) = line.strip_prefix("listening on ") {
            let url = url.trim().to_owned();
            std::thread::spawn(move || lines.map_while(Result::ok).for_each(|l| println!("{l}")));
            return Ok((child, url));
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    Err(format!(
        "`runtime-host {}` did not start ({status})",
        args.join(" ")
    ))
}

fn up(args: &[String]) -> Result<(), String> {
    let root = root();
    let chat_port = flag(args, "--chat-port").unwrap_or_else(|| "8050".into());
    let registry_port = flag(args, "--registry-port").unwrap_or_else(|| "5000".into());
    let data_dir = flag(args, "--data-dir")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".data"));
    let data = data_dir.display().to_string();
    let token = admin_token(&data_dir)?;
    let host = root.join("target/release/runtime-host");
    let chat = root
        .join("target/wasm32-wasip2/release/chat.wasm")
        .display()
        .to_string();
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let (mut registry, registry_url) = start_service(
        &host,
        &owned(&[
            "registry",
            "--listen",
            &format!("127.0.0.1:{registry_port}"),
            "--data-dir",
            &data,
        ]),
    )?;
    let (mut chat, chat_url) = match start_service(
        &host,
        &owned(&[
            "serve",
            &chat,
            "--listen",
            &format!("127.0.0.1:{chat_port}"),
            "--data-dir",
            &data,
            "--variable",
            &format!("chat_admin_token={token}"),
        ]),
    ) {
        Ok(started) => started,
        Err(e) => {
            let _ = registry.kill();
            return Err(e);
        }
    };
    let mut import = Command::new(&host);
    import
        .args(["chats", "import"])
        .arg(root.join("components/chat/samples/dialogs.json"))
        .args(["--url", &chat_url, "--token", &token]);
    run(import)?;
    println!(
        "\n  chat service   {chat_url}/api/chats\n  admin token    {token}  (also in {data}/chat_admin_token)\n  port registry  {registry_url}/registry\n  data           {data}\n\n  Ctrl-C stops everything.\n"
    );
    // Ctrl-C reaches both services (same process group); each shuts down gracefully.
    let chat_status = chat.wait().map_err(|e| e.to_string())?;
    let registry_status = registry.wait().map_err(|e| e.to_string())?;
    if chat_status.success() && registry_status.success() {
        Ok(())
    } else {
        Err(format!(
            "services stopped: chat {chat_status}, registry {registry_status}"
        ))
    }
}
