//! Harness for the end-to-end tests: starts the real `runtime-host` binary on a free port with
//! a temporary data directory, and talks to it over HTTP.
//!
//! The binary and components must be built first (`cargo xtask test` does that); the harness
//! finds them under the workspace's `target/` (or `$CARGO_TARGET_DIR`).

pub mod client;
pub mod host;

pub use client::{Client, Reply};
pub use host::{Host, HostBuilder};

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

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("e2e-")
        .tempdir()
        .expect("creating a temporary directory")
}
