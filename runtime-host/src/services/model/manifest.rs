//! A model directory checked before anything is copied or compiled: its `model.toml` parsed
//! as the ONNX model component parses it (`model_manifest`, one crate for both), and the
//! files it names present. Every problem is reported at once, in well under a second: `up`,
//! the admin API and `serve` refuse a directory with its whole list instead of compiling an
//! 8 MB component to learn of one problem at a time; `runtime-host model check` runs it first
//! (then the self-test a deploy runs: `super::check`).

use host_core::capabilities::outbound::rules::AllowedHosts;
use model_manifest::{Manifest, Output};
use std::path::{Component, Path};

/// Largest `model.toml` read: a manifest is text, a few kB (a model's fingerprints and test
/// set are files of their own).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The directory's manifest, or every problem found, each naming its field or file.
pub fn check_model_dir(dir: &Path) -> Result<Manifest, Vec<String>> {
    let path = dir.join("model.toml");
    let text = read_manifest(&path).map_err(|why| vec![format!("{}: {why}", path.display())])?;
    let manifest = Manifest::parse_all(&text).map_err(|problems| {
        problems
            .into_iter()
            .map(|p| format!("{}: {p}", path.display()))
            .collect::<Vec<_>>()
    })?;
    let hosts = &manifest.network.allowed_outbound_hosts;
    let problems: Vec<String> = manifest
        .files()
        .into_iter()
        .filter_map(|(field, file)| named_file_problem(dir, field, file))
        .chain(
            AllowedHosts::parse(hosts)
                .err()
                .map(|why| format!("network.allowed_outbound_hosts: {why}")),
        )
        .map(|p| format!("{}: {p}", path.display()))
        .collect();
    if problems.is_empty() {
        Ok(manifest)
    } else {
        Err(problems)
    }
}

/// The hosts the model at `source` may send HTTP requests to: its manifest's
/// `[network] allowed_outbound_hosts` for a model directory (checked by
/// [`check_model_dir`] before it gets here), none for a component of its own.
pub fn outbound_hosts(source: &Path) -> Vec<String> {
    if !source.join("model.toml").is_file() {
        return Vec::new();
    }
    check_model_dir(source)
        .map(|m| m.network.allowed_outbound_hosts)
        .unwrap_or_default()
}

/// `model.toml`'s text: the file itself (never through a link, never a FIFO or device,
/// which could hang or never end), at most [`MAX_MANIFEST_BYTES`], UTF-8.
fn read_manifest(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                "a link; a model directory's model.toml is a file of its own".into()
            }
            _ => e.to_string(),
        })?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(format!(
            "over {MAX_MANIFEST_BYTES} bytes; a manifest is text"
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

/// What is wrong with the file `field` names (`file`, relative to `dir`), if anything: it
/// must be a regular file inside the directory, a link only to one inside it (as the
/// directory's snapshot requires).
fn named_file_problem(dir: &Path, field: &str, file: &str) -> Option<String> {
    let plain = !file.is_empty()
        && Path::new(file)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return Some(format!(
            "{field} = {file:?} must name a file inside the model directory"
        ));
    }
    let named = dir.join(file);
    let inside = match (named.canonicalize(), dir.canonicalize()) {
        (Ok(target), Ok(root)) => target.starts_with(root),
        (Err(e), _) => return Some(format!("{field}: {}: {e}", named.display())),
        (_, Err(e)) => return Some(format!("{}: {e}", dir.display())),
    };
    if !inside {
        return Some(format!(
            "{field}: {} links out of the model directory",
            named.display()
        ));
    }
    match std::fs::metadata(&named) {
        Ok(m) if m.is_file() => None,
        Ok(_) => Some(format!(
            "{field}: {} is not a regular file",
            named.display()
        )),
        Err(e) => Some(format!("{field}: {}: {e}", named.display())),
    }
}

/// `model.toml has N problems:` and each, a line apiece.
pub fn listed(problems: &[String]) -> String {
    let n = problems.len();
    let s = if n == 1 { "" } else { "s" };
    format!("model.toml has {n} problem{s}:\n{}", problems.join("\n"))
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
/// every problem rather than serve 503 to every request. Returns the largest request body
/// such a model reads (a picture or sound model's file in base64; 0 for none), which the
/// host's cap must let through.
pub fn check_mounts(dirs: &[String]) -> anyhow::Result<usize> {
    let mut body = 0;
    for mount in dirs {
        let Some((host, guest)) = mount.rsplit_once(':') else {
            continue;
        };
        if guest.trim_end_matches('/') != "/model" {
            continue;
        }
        let dir = Path::new(host);
        if !dir.join("model.toml").is_file() {
            continue;
        }
        match check_model_dir(dir) {
            Ok(m) => body = body.max(m.input.max_body().unwrap_or(0)),
            Err(problems) => anyhow::bail!(
                "the model in {} cannot serve: {}\n(`runtime-host model check {}` checks it \
                 again, as a deploy would, without registering anything)",
                dir.display(),
                listed(&problems),
                dir.display()
            ),
        }
    }
    Ok(body)
}
