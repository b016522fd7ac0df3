//! Pictures and sounds named on the command line: files, folders and globs, made into the
//! list of files to score. The shell expands an unquoted glob itself; a quoted one (or one on
//! a shell that does not, or one matching more names than a command line holds) is expanded
//! here, with `*` and `?` in its last part.

use crate::input::{Payload, Row};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The kind of file a model takes, from its `/capabilities` input types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    Image,
    Audio,
}

/// Extensions of the files a folder's listing takes for each kind (case-insensitive): the
/// formats the ONNX model component decodes.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "bmp", "webp"];
const AUDIO_EXTENSIONS: &[&str] = &["wav", "flac", "ogg"];

impl MediaKind {
    /// The request's `input_type`.
    pub fn input_type(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
        }
    }

    fn extensions(self) -> &'static [&'static str] {
        match self {
            Self::Image => IMAGE_EXTENSIONS,
            Self::Audio => AUDIO_EXTENSIONS,
        }
    }

    /// Whether `path` is named like a file of this kind.
    pub fn named_like(self, path: &Path) -> bool {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        self.extensions()
            .iter()
            .any(|e| ext.eq_ignore_ascii_case(e))
    }
}

/// Whether `path` is a picture or sound by its extension (of either kind).
pub fn is_media(path: &Path) -> bool {
    MediaKind::Image.named_like(path) || MediaKind::Audio.named_like(path)
}

/// Whether `path` is a pattern to expand (only its last part may be one: [`list`] says so).
pub fn is_pattern(path: &Path) -> bool {
    path.to_str().is_some_and(|n| n.contains(['*', '?']))
}

/// The files `inputs` name, in order: a file as it is, a folder's files of `kind` sorted by
/// name (not its subfolders nor hidden files), a pattern's matching files sorted by name. A file named twice
/// is scored once. A pattern matching nothing, or a path that is not there, is an error:
/// a typo should not score an empty set.
pub fn list(inputs: &[PathBuf], kind: MediaKind) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        let found = if input.is_dir() {
            // Hidden files are a system's leftovers (`._scan.png`), not pictures.
            let found = folder(input, |name| {
                !name.starts_with('.') && kind.named_like(Path::new(name))
            })?;
            if found.is_empty() {
                bail!(
                    "{} has no {} files ({})",
                    input.display(),
                    kind.input_type(),
                    kind.extensions().join(", ")
                );
            }
            found
        } else if input.exists() {
            vec![input.clone()]
        } else if is_pattern(input) {
            expand(input)?
        } else {
            bail!("{}: no such file or folder", input.display());
        };
        for file in found {
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    Ok(files)
}

/// The files of `pattern`'s folder whose names match its last part.
fn expand(pattern: &Path) -> Result<Vec<PathBuf>> {
    let name = pattern.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let parent = pattern.parent().unwrap_or(Path::new(""));
    if parent.to_str().is_some_and(|p| p.contains(['*', '?'])) {
        bail!(
            "{}: only the last part of a path may hold * or ?",
            pattern.display()
        );
    }
    let dir = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    if !dir.is_dir() {
        bail!("{}: no folder {}", pattern.display(), dir.display());
    }
    let pattern_chars: Vec<char> = name.chars().collect();
    let found = folder(dir, |file| {
        // A leading dot is matched only by a pattern that has one, as in the shell.
        (!file.starts_with('.') || name.starts_with('.'))
            && matches(&pattern_chars, &file.chars().collect::<Vec<_>>())
    })?;
    if found.is_empty() {
        bail!("no file matches {}", pattern.display());
    }
    // Named as the user wrote the folder (`scans/a.png`, not `./scans/a.png`).
    Ok(found
        .into_iter()
        .map(|f| parent.join(f.file_name().unwrap_or_default()))
        .collect())
}

/// The plain files of `dir` (links followed) whose names `keep` takes, sorted by name.
fn folder(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if keep(name) && path.is_file() {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// Whether `name` matches `pattern`: `?` any one character, `*` any run of them (none too).
/// Backtracks only to the last `*`, so the time is linear in practice and never exponential.
fn matches(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                // The last `*` takes one more character, and matching goes on after it.
                Some((sp, sn)) => {
                    star = Some((sp, sn + 1));
                    p = sp + 1;
                    n = sn + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A file's row: named by its path as given, its size known before it is read (for sizing
/// batches). A file that cannot be looked at fails alone.
pub fn row(path: &Path) -> Row {
    let id = path.display().to_string();
    let payload = match std::fs::metadata(path) {
        Ok(m) => Payload::File {
            path: path.to_owned(),
            bytes: m.len(),
        },
        Err(e) => Payload::Unreadable(format!("cannot read {id}: {e}")),
    };
    Row { id, payload }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, name: &str) -> bool {
        matches(
            &pattern.chars().collect::<Vec<_>>(),
            &name.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn wildcards_match_as_in_the_shell() {
        assert!(m("*.png", "a.png"));
        assert!(m("*.png", ".png"));
        assert!(!m("*.png", "a.png.txt"));
        assert!(m("scan-??.png", "scan-07.png"));
        assert!(!m("scan-??.png", "scan-7.png"));
        assert!(m("*a*b*", "xxaxxbxx"));
        assert!(!m("*a*b", "xxaxxbxc"));
        assert!(m("*", ""));
        assert!(!m("?", ""));
        assert!(m("ä*", "äpfel"));
        // Many stars against a long name that almost matches: answered at once.
        let name = "a".repeat(10_000);
        assert!(!m(&format!("{}b", "*a".repeat(50)), &name));
    }

    #[test]
    fn folders_patterns_and_files_are_listed_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for name in ["b.png", "a.PNG", "c.wav", "notes.txt", ".hidden.png"] {
            std::fs::write(d.join(name), b"x").unwrap();
        }
        std::fs::create_dir(d.join("sub.png")).unwrap();
        let images = list(&[d.to_owned()], MediaKind::Image).unwrap();
        let names: Vec<_> = images.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(names, ["a.PNG", "b.png"]);
        let sounds = list(&[d.join("*.wav"), d.join("c.wav")], MediaKind::Audio).unwrap();
        assert_eq!(sounds, [d.join("c.wav")]);
        let globbed = list(&[d.join("*.png")], MediaKind::Image).unwrap();
        assert_eq!(globbed, [d.join("b.png")]);
        let err = list(&[d.join("*.jpg")], MediaKind::Image).unwrap_err();
        assert!(err.to_string().contains("no file matches"), "{err}");
        let err = list(&[d.join("*/x.png")], MediaKind::Image).unwrap_err();
        assert!(err.to_string().contains("last part"), "{err}");
        let err = list(&[d.join("missing.png")], MediaKind::Image).unwrap_err();
        assert!(err.to_string().contains("no such file"), "{err}");
    }
}
