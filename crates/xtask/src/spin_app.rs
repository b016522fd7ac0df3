//! What the project's `spin.toml` needs from xtask, so plain `spin build` and `spin up` from
//! the repository root do what the README's examples expect:
//!
//! - every component's build command is `cargo xtask build-components`: the same
//!   components, features and profile settings as `cargo xtask build`, so neither build
//!   undoes the other's (checked below);
//! - Spin's default state directory is `.spin/` beside spin.toml, whose llm factor reads
//!   `.spin/ai-models/<model>/`: `install-models` links `.spin/ai-models` to the files it put
//!   in `.data/ai-models`, so minilm answers without `--state-dir .data`.

use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

/// Links `<root>/.spin/ai-models` to `../.data/ai-models` (relative, so the checkout may
/// move), making `.spin` private as Spin keeps its key-value store there. Whatever is at
/// `.spin/ai-models` already is left alone.
pub fn link_ai_models(root: &Path) -> Result<(), String> {
    let state = root.join(".spin");
    let link = state.join("ai-models");
    if link.symlink_metadata().is_ok() {
        return Ok(());
    }
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&state)
        .and_then(|()| std::os::unix::fs::symlink("../.data/ai-models", &link));
    made.map_err(|e| {
        format!(
            "could not link {} to .data/ai-models ({e}); `spin up --state-dir .data` reads \
             the AI models without it",
            link.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The build command of every component in spin.toml.
    const BUILD_COMMAND: &str = "cargo xtask build-components";

    /// `spin build` runs what `cargo xtask build` runs for the components, nothing else.
    #[test]
    fn every_component_builds_as_xtask_builds() {
        let manifest = std::fs::read_to_string(crate::root().join("spin.toml")).unwrap();
        let commands: Vec<&str> = manifest
            .lines()
            .filter_map(|l| l.trim().strip_prefix("command = "))
            .collect();
        let components = manifest
            .lines()
            .filter(|l| l.starts_with("[component.") && l.ends_with(".build]"))
            .count();
        assert_eq!(commands.len(), components, "a build command per component");
        assert!(components >= 7);
        for command in commands {
            assert_eq!(command, format!("\"{BUILD_COMMAND}\""));
        }
    }

    #[test]
    fn spin_s_state_directory_reads_the_installed_ai_models() {
        let root = std::env::temp_dir().join(format!("xtask-spin-{}", std::process::id()));
        std::fs::create_dir_all(root.join(".data/ai-models/all-minilm-l6-v2")).unwrap();
        link_ai_models(&root).unwrap();
        assert!(root.join(".spin/ai-models/all-minilm-l6-v2").is_dir());
        let mode = std::fs::metadata(root.join(".spin")).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o700
        );
        // A second run leaves it as it is.
        link_ai_models(&root).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}
