//! A model directory checked before anything is copied or compiled: its `model.toml` parsed
//! as the ONNX model component parses it (`model_manifest`, one crate for both), and the
//! files it names present. Every problem is reported at once, in well under a second: `up`,
//! the admin API and `serve` refuse a directory with its whole list instead of compiling an
//! 8 MB component to learn of one problem at a time; `runtime-host model check` runs it alone.

use model_manifest::{Manifest, Output};
use std::path::{Component, Path};

/// Largest `model.toml` read: a manifest is text, a few kB (a model's fingerprints and test
/// set are files of their own).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The directory's manifest, or every problem found, each naming its field or file.
pub fn check_model_dir(dir: &Path) -> Result<Manifest, Vec<String>> {
    let path = dir.join("model.toml");
    let meta =
        std::fs::symlink_metadata(&path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
    if !meta.is_file() {
        return Err(vec![format!("{}: not a regular file", path.display())]);
    }
    if meta.len() > MAX_MANIFEST_BYTES {
        return Err(vec![format!(
            "{}: {} bytes; a manifest is at most {MAX_MANIFEST_BYTES}",
            path.display(),
            meta.len()
        )]);
    }
    let text = std::fs::read(&path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
    let text =
        String::from_utf8(text).map_err(|_| vec![format!("{}: not UTF-8 text", path.display())])?;
    let manifest = Manifest::parse_all(&text).map_err(|problems| {
        problems
            .into_iter()
            .map(|p| format!("{}: {p}", path.display()))
            .collect::<Vec<_>>()
    })?;
    let mut problems = Vec::new();
    for (field, file) in manifest.files() {
        let inside = !file.is_empty()
            && Path::new(file)
                .components()
                .all(|c| matches!(c, Component::Normal(_)));
        if !inside {
            problems.push(format!(
                "{}: {field} = {file:?} must name a file inside the model directory",
                path.display()
            ));
            continue;
        }
        let named = dir.join(file);
        match std::fs::metadata(&named) {
            Ok(m) if m.is_file() => {}
            Ok(_) => problems.push(format!("{}: not a regular file ({field})", named.display())),
            Err(e) => problems.push(format!("{}: {e} ({field})", named.display())),
        }
    }
    if problems.is_empty() {
        Ok(manifest)
    } else {
        Err(problems)
    }
}

/// One line saying what a checked manifest describes.
pub fn summary(m: &Manifest) -> String {
    let output = match &m.output {
        Output::Regression { property, unit } => format!("regression of {property} ({unit})"),
        Output::Classification {
            property, labels, ..
        } => format!("classification of {property} into {} labels", labels.len()),
    };
    let examples = m.test_examples.examples.len();
    format!(
        "{}: {output}, {examples} test example{}",
        m.info.name,
        if examples == 1 { "" } else { "s" }
    )
}

/// Checks every model directory among `dirs` (`--dir HOST:/model` mounts holding a
/// `model.toml`) before the component is compiled: `serve` and `model` stop at start-up with
/// every problem rather than serve 503 to every request.
pub fn check_mounts(dirs: &[String]) -> anyhow::Result<()> {
    for mount in dirs {
        let Some((host, "/model")) = mount.rsplit_once(':') else {
            continue;
        };
        let dir = Path::new(host);
        if !dir.join("model.toml").is_file() {
            continue;
        }
        if let Err(problems) = check_model_dir(dir) {
            anyhow::bail!(
                "the model in {} cannot serve: model.toml has {} problem{}:\n{}\n(`runtime-host \
                 model check {}` checks it again without starting anything)",
                dir.display(),
                problems.len(),
                if problems.len() == 1 { "" } else { "s" },
                problems.join("\n"),
                dir.display()
            );
        }
    }
    Ok(())
}
