//! Where this program's own components and default models are: found from the binary's own
//! resolved path, never from the working directory. An installed `runtime-host` started in a
//! directory another user can write (a shared checkout, `/tmp`) once loaded that user's
//! `target/wasm32-wasip2/release/chat.wasm`, which then read the real chat admin token; the
//! registry and `./models` were found the same way (issue 56, item 2).
//!
//! Two layouts, both relative to `std::env::current_exe()` with its links resolved (a link
//! in `/usr/local/bin` to a build elsewhere finds that build's files):
//!
//! - **installed**: `<prefix>/bin/runtime-host`, its components in
//!   `<prefix>/lib/runtime-host/NAME.wasm` and its default model directories in
//!   `<prefix>/lib/runtime-host/models/`;
//! - **built by cargo**: `target/release/runtime-host`, its components in
//!   `target/wasm32-wasip2/release/NAME.wasm` and the repository's `models/` beside
//!   `target/` (how `cargo xtask up` and the tests run it).

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The directory holding this binary, links resolved; `None` if the system cannot say.
fn binary_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    exe.parent().map(Path::to_path_buf)
}

/// The installed layout's library directory, `<prefix>/lib/runtime-host`.
fn installed_lib(bin: &Path) -> Option<PathBuf> {
    bin.parent().map(|prefix| prefix.join("lib/runtime-host"))
}

/// The cargo build's component directory, `target/wasm32-wasip2/release`, when the binary is
/// `target/<profile>/runtime-host`.
fn built_components(bin: &Path) -> Option<PathBuf> {
    bin.parent()
        .map(|target| target.join("wasm32-wasip2/release"))
}

/// Where this binary's components may be, in the order they are tried.
fn component_dirs() -> Vec<PathBuf> {
    let Some(bin) = binary_dir() else {
        return Vec::new();
    };
    [installed_lib(&bin), built_components(&bin)]
        .into_iter()
        .flatten()
        .collect()
}

/// This installation's component `NAME.wasm` (`chat`, `registry`, `molprop`, ...).
pub fn component(name: &str) -> Result<PathBuf> {
    let file = format!("{name}.wasm");
    let dirs = component_dirs();
    dirs.iter()
        .map(|d| d.join(&file))
        .find(|p| p.is_file())
        .with_context(|| {
            format!(
                "could not find {file} beside this program (looked in {dirs:?}; the working \
                 directory is never searched): install the components in \
                 <prefix>/lib/runtime-host/ beside <prefix>/bin/runtime-host, build them with \
                 `cargo xtask build`, or pass the component's path"
            )
        })
}

/// This installation's default model directories: `<prefix>/lib/runtime-host/models`, or
/// the repository's `models/` when the binary is a cargo build (`target/release`).
pub fn models_dir() -> Option<PathBuf> {
    let bin = binary_dir()?;
    let installed = installed_lib(&bin).map(|lib| lib.join("models"));
    // Only a cargo target directory (one holding the components' build) has the repository
    // beside it; `/usr/local/bin/../..` is no repository.
    let built = built_components(&bin)
        .filter(|c| c.is_dir())
        .and_then(|_| bin.parent()?.parent().map(|root| root.join("models")));
    [installed, built]
        .into_iter()
        .flatten()
        .find(|p| p.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cargo build's layout: the test binary itself runs from `target/release/deps`, so
    /// its components are looked for there and never in the working directory.
    #[test]
    fn nothing_is_looked_for_in_the_working_directory() {
        let cwd = std::env::current_dir().unwrap();
        for dir in component_dirs() {
            assert!(dir.is_absolute(), "{}", dir.display());
            assert_ne!(dir, cwd.join("target/wasm32-wasip2/release"));
        }
        let err = component("no-such-component").unwrap_err().to_string();
        assert!(err.contains("never searched"), "{err}");
    }

    #[test]
    fn the_layouts_are_relative_to_the_binary() {
        let bin = Path::new("/opt/rh/bin");
        assert_eq!(
            installed_lib(bin).unwrap(),
            Path::new("/opt/rh/lib/runtime-host")
        );
        let bin = Path::new("/src/repo/target/release");
        assert_eq!(
            built_components(bin).unwrap(),
            Path::new("/src/repo/target/wasm32-wasip2/release")
        );
    }
}
