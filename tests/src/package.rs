//! The Debian packages `cargo xtask deb` builds (target/debian: `runtime-host` and
//! `runtime-host-ai-models`), installed into this machine with `dpkg -i` for a test, as
//! docs/deploy.md installs them, and purged when dropped. Root only; `cargo xtask test` builds
//! the packages first when it runs as root (`E2E_REQUIRE_PACKAGE`). The tests that install
//! them (`tools::package`, `fleet::three_hosts`) never run beside each other: the first runs
//! alone.

use std::path::PathBuf;
use std::process::Command;

/// The program's package.
/// The components `up` runs, which the package installs in `/usr/lib/runtime-host/` (as
/// xtask's `deb::COMPONENTS` stages them).
pub const COMPONENTS: [&str; 7] = [
    "registry",
    "chat",
    "console",
    "molprop",
    "minilm",
    "textgen",
    "onnx_model",
];

pub const PROGRAM: &str = "runtime-host";
/// The AI models' weights.
pub const AI_MODELS: &str = "runtime-host-ai-models";

/// The packages in target/debian, where this machine can install them (as root); `None`
/// otherwise, for [`crate::tools::require_or_skip`] with [`crate::tools::Tool::Package`].
pub fn built() -> Option<Vec<PathBuf>> {
    let root = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        return None;
    }
    let dir = crate::workspace_root().join("target/debian");
    let mut debs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    debs.sort();
    (debs.len() == 2).then_some(debs)
}

/// Runs `program args`, panicking with its output unless it succeeds; its standard output.
pub fn must(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Removes both packages and everything they made, whatever an earlier run left.
pub fn purge() {
    must("dpkg", &["--purge", PROGRAM, AI_MODELS]);
}

/// Both packages installed; purged when dropped.
pub struct Installed(());

impl Installed {
    /// Purges what an earlier run may have left, then `dpkg -i` of `debs` (from [`built`]).
    /// Where systemd runs, the installation starts the service; it is stopped again, so
    /// that the test starts what it needs itself, as everywhere else.
    pub fn install(debs: &[PathBuf]) -> Self {
        purge();
        let mut args = vec!["-i"];
        args.extend(debs.iter().map(|p| p.to_str().expect("a UTF-8 path")));
        must("dpkg", &args);
        stop_if_systemd();
        Self(())
    }
}

/// Where systemd runs, an installation (postinst) starts the service: stopped again, so that
/// a test starts what it needs itself.
pub fn stop_if_systemd() {
    if std::path::Path::new("/run/systemd/system").is_dir() {
        must("systemctl", &["stop", "runtime-host"]);
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        // No panic here: a test that failed already is unwinding.
        let _ = Command::new("dpkg")
            .args(["--purge", PROGRAM, AI_MODELS])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output();
    }
}
