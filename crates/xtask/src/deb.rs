//! `cargo xtask deb`: the Debian packages, built with Debian's own `dpkg-deb` from the release
//! build (no packaging crate to compile: see docs/DECISIONS.md, "Installed as a Debian
//! package"), into `target/debian/`:
//!
//! - `runtime-host_<version>_<arch>.deb`: `/usr/bin/runtime-host`, its components in
//!   `/usr/lib/runtime-host/` and its model directories in `/usr/lib/runtime-host/models/`
//!   (the installed layout `runtime-host` finds from its own path), the systemd unit of
//!   `deploy/fleet/`, the default configuration of `deploy/package/` and its maintainer
//!   scripts (the system user, `/var/lib/runtime-host`, `host.env` with tokens of its own);
//! - `runtime-host-ai-models_<AI_MODELS_VERSION>_all.deb`: the AI models' weights from
//!   `.data/ai-models` (about 180 MB) in `/usr/share/runtime-host/ai-models`, the unit's
//!   `--ai-models-dir`. A package of their own, with a version of their own
//!   ([`AI_MODELS_VERSION`], which moves only when the weights do), so an upgrade of the
//!   program does not ship them again: the program depends on `>=` it.
//!
//! Every directory in a package is 0755 and every file has the mode stated here, whatever
//! the builder's umask; symbolic links in what is copied are refused (never followed).

use crate::{root, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The components the package installs: the services and every model `up` deploys by default.
pub const COMPONENTS: &[&str] = &[
    "registry",
    "chat",
    "console",
    "molprop",
    "minilm",
    "textgen",
    "onnx_model",
];

/// The package the program's `Depends` names for the AI models' weights.
const AI_MODELS_PACKAGE: &str = "runtime-host-ai-models";

/// The AI models package's own version: bumped when, and only when, the weights change (then
/// [`AI_MODELS_WEIGHTS`] too: [`weights_match_their_version`] holds them to `SHA256SUMS`).
const AI_MODELS_VERSION: &str = "1";

/// The SHA-256 of every file of the weights that [`AI_MODELS_VERSION`] packages, as
/// `models/<name>/SHA256SUMS` state them (and `install-models` checks them).
const AI_MODELS_WEIGHTS: &[&str] = &[
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
];

/// Builds both packages from what `cargo xtask build` left (it does not build).
pub fn build() -> Result<Vec<PathBuf>, String> {
    let version = version()?;
    weights_match_their_version()?;
    let out = root().join("target/debian");
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    // An earlier build's packages (another version) go: the tests install the two there.
    for entry in std::fs::read_dir(&out)
        .map_err(|e| e.to_string())?
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("runtime-host") && name.ends_with(".deb") {
            std::fs::remove_file(entry.path()).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    let program = program_package(&version, &out)?;
    let models = ai_models_package(AI_MODELS_VERSION, &out)?;
    Ok(vec![program, models])
}

/// The workspace's version (`[workspace.package] version`), the packages' version.
fn version() -> Result<String, String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).map_err(|e| e.to_string())?;
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .map(str::to_owned)
        .ok_or_else(|| "Cargo.toml names no workspace version".to_owned())
}

/// The machine's Debian architecture (`amd64`, `arm64`), which the binary is built for.
fn architecture() -> Result<String, String> {
    let out = Command::new("dpkg")
        .arg("--print-architecture")
        .output()
        .map_err(|e| format!("dpkg is needed to build the Debian package: {e}"))?;
    let arch = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || arch.is_empty() {
        return Err(format!(
            "`dpkg --print-architecture` named no architecture ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(arch)
}

/// A package's tree being put together: `DEBIAN/` and the files, fresh each build.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(out: &Path, name: &str) -> Result<Self, String> {
        let dir = out.join(format!("{name}.staging"));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        Ok(Self { dir })
    }

    /// Makes `dir` (inside the staging tree) and every directory above it up to the tree's
    /// root, each 0755 whatever the umask (dpkg-deb packs the modes as they are).
    fn dirs(&self, dir: &Path) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| d.starts_with(&self.dir)) {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("{}: {e}", d.display()))?;
            at = d.parent();
        }
        Ok(())
    }

    /// Copies `from` to `to` (a path inside the package) with `mode`.
    fn file(&self, from: &Path, to: &str, mode: u32) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let dest = self.dir.join(to.trim_start_matches('/'));
        self.dirs(dest.parent().unwrap())?;
        std::fs::copy(from, &dest).map_err(|e| {
            format!(
                "copying {} into the package: {e} (run `cargo xtask build` first)",
                from.display()
            )
        })?;
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
            .map_err(|e| e.to_string())
    }

    /// Copies the directory `from` to `to`, directories 0755, files 0644; what a checkout
    /// holds beside the model's own files (hidden files, Python's `__pycache__`) is left out.
    /// A symbolic link inside is refused, not followed (no loop, nothing from outside).
    fn tree(&self, from: &Path, to: &str) -> Result<(), String> {
        let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
        self.dirs(&self.dir.join(to.trim_start_matches('/')))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "__pycache__" {
                continue;
            }
            let kind = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if kind.is_symlink() {
                return Err(format!(
                    "{} is a symbolic link: the package copies plain files and directories \
                     only (put the file itself there)",
                    path.display()
                ));
            }
            if kind.is_dir() {
                self.tree(&path, &format!("{to}/{name}"))?;
            } else {
                self.file(&path, &format!("{to}/{name}"), 0o644)?;
            }
        }
        Ok(())
    }

    /// `DEBIAN/<name>` with `text`.
    fn control_file(&self, name: &str, text: &str, mode: u32) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.join("DEBIAN").join(name);
        self.dirs(path.parent().unwrap())?;
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| e.to_string())
    }

    /// The size of the files, in KiB, for `Installed-Size`.
    fn installed_kib(&self) -> u64 {
        fn bytes(dir: &Path) -> u64 {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_name() != "DEBIAN")
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        bytes(&self.dir).div_ceil(1024)
    }

    /// `DEBIAN/control` from `fields` (with `Installed-Size`), then `dpkg-deb --build` into
    /// `deb`; the staging tree removed after (the weights are 180 MB).
    fn pack(self, fields: &[(&str, String)], deb: PathBuf) -> Result<PathBuf, String> {
        let mut control = String::new();
        for (name, value) in fields {
            control.push_str(&format!("{name}: {value}\n"));
        }
        control.push_str(&format!("Installed-Size: {}\n", self.installed_kib()));
        self.control_file("control", &control, 0o644)?;
        let mut cmd = Command::new("dpkg-deb");
        // zstd at a low level: the weights and the compiled code hardly compress further,
        // and a higher level costs the test command seconds each run.
        cmd.args(["--root-owner-group", "-Zzstd", "-z1", "--build"])
            .arg(&self.dir)
            .arg(&deb);
        let built = run(cmd);
        let _ = std::fs::remove_dir_all(&self.dir);
        built.map(|()| deb)
    }
}

/// The fields every package has.
fn common_fields(name: &str, version: &str, arch: String) -> Vec<(&'static str, String)> {
    vec![
        ("Package", name.to_owned()),
        ("Version", version.to_owned()),
        ("Architecture", arch),
        (
            "Maintainer",
            "runtime-host developers <root@localhost>".to_owned(),
        ),
        ("Section", "net".to_owned()),
        ("Priority", "optional".to_owned()),
    ]
}

fn program_package(version: &str, out: &Path) -> Result<PathBuf, String> {
    let root = root();
    let arch = architecture()?;
    let staging = Staging::new(out, "runtime-host")?;
    staging.file(
        &root.join("target/release/runtime-host"),
        "/usr/bin/runtime-host",
        0o755,
    )?;
    let wasm = root.join("target").join(crate::WASM_TARGET).join("release");
    for name in COMPONENTS {
        let file = format!("{name}.wasm");
        staging.file(
            &wasm.join(&file),
            &format!("/usr/lib/runtime-host/{file}"),
            0o644,
        )?;
    }
    for model in model_dirs()? {
        let name = model.file_name().unwrap().to_string_lossy().into_owned();
        staging.tree(&model, &format!("/usr/lib/runtime-host/models/{name}"))?;
    }
    staging.file(
        &root.join("deploy/fleet/runtime-host.service"),
        "/lib/systemd/system/runtime-host.service",
        0o644,
    )?;
    let package = root.join("deploy/package");
    staging.file(
        &package.join("runtime-config.toml"),
        "/etc/runtime-host/runtime-config.toml",
        0o600,
    )?;
    staging.control_file(
        "conffiles",
        "/etc/runtime-host/runtime-config.toml\n",
        0o644,
    )?;
    for script in ["postinst", "prerm", "postrm"] {
        let text = std::fs::read_to_string(package.join(script)).map_err(|e| e.to_string())?;
        staging.control_file(script, &text, 0o755)?;
    }
    let mut fields = common_fields("runtime-host", version, arch.clone());
    fields.push((
        "Depends",
        format!("adduser, {AI_MODELS_PACKAGE} (>= {AI_MODELS_VERSION})"),
    ));
    fields.push((
        "Description",
        "chat, port registry and models as WebAssembly components\n runtime-host serves the \
         Lightweight AI Model Runtime Interface v1.2: chat, a port registry and models, with \
         a web console, as a systemd service (docs/deploy.md)."
            .to_owned(),
    ));
    staging.pack(
        &fields,
        out.join(format!("runtime-host_{version}_{arch}.deb")),
    )
}

/// The weights' checksums in `models/*/SHA256SUMS` are the ones [`AI_MODELS_VERSION`] stands
/// for: changed weights need a new version (or the program's `>=` would accept an installed
/// package with the old ones).
fn weights_match_their_version() -> Result<(), String> {
    let mut sums = Vec::new();
    for model in crate::AI_MODELS {
        let file = root().join("models").join(model).join("SHA256SUMS");
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        sums.extend(text.split_whitespace().step_by(2).map(str::to_owned));
    }
    if sums != AI_MODELS_WEIGHTS {
        return Err(format!(
            "the AI models' weights changed ({sums:?}): bump AI_MODELS_VERSION and update \
             AI_MODELS_WEIGHTS in crates/xtask/src/deb.rs"
        ));
    }
    Ok(())
}

/// The repository's model directories (each with a `model.toml`): what `up` deploys by
/// default beside its components.
fn model_dirs() -> Result<Vec<PathBuf>, String> {
    let models = root().join("models");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&models)
        .map_err(|e| format!("{}: {e}", models.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("model.toml").is_file())
        .collect();
    dirs.sort();
    Ok(dirs)
}

fn ai_models_package(version: &str, out: &Path) -> Result<PathBuf, String> {
    let staging = Staging::new(out, AI_MODELS_PACKAGE)?;
    for model in crate::AI_MODELS {
        let dir = crate::ai_models_dir().join(model);
        if !dir.is_dir() {
            return Err(format!(
                "{} is missing: run `cargo xtask install-models` first",
                dir.display()
            ));
        }
        staging.tree(&dir, &format!("/usr/share/runtime-host/ai-models/{model}"))?;
    }
    let mut fields = common_fields(AI_MODELS_PACKAGE, version, "all".to_owned());
    fields.push((
        "Description",
        "runtime-host's AI models: all-MiniLM-L6-v2 and SmolLM2-135M-Instruct\n The weights \
         runtime-host's minilm and textgen models read (--ai-models-dir \
         /usr/share/runtime-host/ai-models)."
            .to_owned(),
    ));
    staging.pack(
        &fields,
        out.join(format!("{AI_MODELS_PACKAGE}_{version}_all.deb")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository's weights are the ones the AI models package's version stands for.
    #[test]
    fn the_ai_models_version_moves_with_the_weights() {
        weights_match_their_version().unwrap();
    }

    /// Staged directories and files have their stated modes whatever they were made with
    /// (a restrictive umask: directories made 0700 first), and a symbolic link in a copied
    /// tree is refused.
    #[test]
    fn staging_states_its_modes_and_refuses_links() {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let tmp = std::env::temp_dir().join(format!("xtask-deb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let src = tmp.join("src");
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("sub/file"), "x").unwrap();
        let staging = Staging::new(&tmp, "p").unwrap();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(staging.dir.join("usr/lib"))
            .unwrap();
        staging.tree(&src, "/usr/lib/p").unwrap();
        staging
            .control_file("postinst", "#!/bin/sh\n", 0o755)
            .unwrap();
        for dir in ["", "usr", "usr/lib", "usr/lib/p", "usr/lib/p/sub", "DEBIAN"] {
            assert_eq!(mode(&staging.dir.join(dir)), 0o755, "{dir:?}");
        }
        assert_eq!(mode(&staging.dir.join("usr/lib/p/sub/file")), 0o644);
        assert_eq!(mode(&staging.dir.join("DEBIAN/postinst")), 0o755);

        std::os::unix::fs::symlink("..", src.join("sub/loop")).unwrap();
        let refused = staging.tree(&src, "/usr/lib/q").unwrap_err();
        assert!(refused.contains("symbolic link"), "{refused}");
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
