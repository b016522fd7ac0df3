//! `cargo xtask shape`: what the crate graph cannot say about the code's shape, checked. Run
//! by the test command (a unit test of xtask's runs it over the repository) and on its own.
//!
//! The host's layers below its services are crates (`host-support`, `host-metrics`,
//! `host-capabilities`, `host-runtime`, `host-http`): a crate names only the crates it
//! depends on and Cargo refuses a cycle, so an import that points up does not compile. What
//! is left to check here:
//!
//! - **The binary's layers.** Inside `runtime-host`, services come before commands and
//!   commands before the command line: no code under `services/` names `crate::commands` or
//!   `crate::cli`, none under `commands/` names `crate::cli`.
//! - **Short files.** A source file of the repository (Rust, JavaScript, Python; tests and
//!   tools included) over 400 lines gives its reason in its opening comment, on a line that
//!   starts `Over 400 lines:` and goes on to say why in a few words.
//! - **A true map.** docs/ARCHITECTURE.md names every module of every layer (as
//!   `layer::module`, e.g. `http::held`); the links of README.md and docs/ lead to files of
//!   the repository; nothing cites a document the repository does not have; the map holds
//!   no dated figures (those belong to docs/BENCHMARKS.md).

use std::path::{Path, PathBuf};

/// Longest a source file may be without saying why.
const MAX_LINES: usize = 400;
/// How a long file's opening comment starts its reason.
const REASON_MARK: &str = "Over 400 lines:";
/// Fewest words a stated reason has.
const REASON_WORDS: usize = 3;

/// The host's layers, lowest first: the folder of each layer's modules and its name.
const LAYERS: &[(&str, &str)] = &[
    ("crates/host-support/src", "support"),
    ("crates/host-metrics/src", "metrics"),
    ("crates/host-capabilities/src", "capabilities"),
    ("crates/host-runtime/src", "runtime"),
    ("crates/host-http/src", "http"),
    ("runtime-host/src/services", "services"),
    ("runtime-host/src/commands", "commands"),
    ("runtime-host/src/cli", "cli"),
];

/// The binary's layers, lowest first, as `crate::` names them.
const BINARY_LAYERS: &[&str] = &["services", "commands", "cli"];

/// Where the map is.
const MAP: &str = "docs/ARCHITECTURE.md";

/// One problem found, as it is reported.
pub type Problem = String;

/// Checks the repository at `root`; every problem found.
pub fn check(root: &Path) -> Result<Vec<Problem>, String> {
    let files = source_files(root)?;
    let mut problems = Vec::new();
    problems.extend(binary_layers(root, &files));
    problems.extend(long_files(root, &files));
    problems.extend(map_names_every_module(root)?);
    problems.extend(links_lead_somewhere(root)?);
    problems.extend(no_missing_documents(root, &files));
    Ok(problems)
}

/// `cargo xtask shape`: prints the problems; `Err` if there are any.
pub fn run(root: &Path) -> Result<(), String> {
    let problems = check(root)?;
    if problems.is_empty() {
        println!("shape: the binary's layers hold, no file too long, {MAP} is true");
        return Ok(());
    }
    for p in &problems {
        eprintln!("shape: {p}");
    }
    Err(format!(
        "{} problem(s) with the code's shape",
        problems.len()
    ))
}

/// Every Rust, JavaScript and Python file under `root`, but for build output and hidden or
/// installed folders.
fn source_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let skipped = ["target", "node_modules", "__pycache__", "shared"];
            if path.is_dir() && !name.starts_with('.') && !skipped.contains(&name.as_str()) {
                stack.push(path);
            } else if ["rs", "js", "py"]
                .iter()
                .any(|e| name.ends_with(&format!(".{e}")))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn shown(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Code under a binary layer that names a layer above it (comments aside): as
/// `crate::above`, inside a `crate::{...}` group, or through `super::` (at any depth).
fn binary_layers(root: &Path, files: &[PathBuf]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (at, layer) in BINARY_LAYERS.iter().enumerate() {
        let dir = root.join("runtime-host/src").join(layer);
        for file in files.iter().filter(|f| f.starts_with(&dir)) {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let code: Vec<&str> = text
                .lines()
                .map(|l| match l.trim_start().starts_with("//") {
                    true => "",
                    false => l,
                })
                .collect();
            for above in &BINARY_LAYERS[at + 1..] {
                for n in lines_naming(&code, above) {
                    problems.push(format!(
                        "{}:{}: {layer} imports from {above}, a layer above it: move what both \
                         need down into {layer} (or lower)",
                        shown(root, file),
                        n + 1
                    ));
                }
            }
        }
    }
    problems
}

/// The lines (from 0) of `code` whose paths start at the crate's module `name`.
fn lines_naming(code: &[&str], name: &str) -> Vec<usize> {
    let direct = [format!("crate::{name}"), format!("super::{name}")];
    let mut found = Vec::new();
    let mut group: Option<(usize, usize)> = None; // (line it opened on, brace depth)
    for (n, line) in code.iter().enumerate() {
        if direct.iter().any(|d| line.contains(d.as_str())) {
            found.push(n);
        }
        let mut rest = *line;
        if group.is_none()
            && let Some(at) = rest.find("crate::{")
        {
            group = Some((n, 0));
            rest = &rest[at + "crate::".len()..];
        }
        let Some((opened, mut depth)) = group else {
            continue;
        };
        let named = |item: &str| item == name || item.starts_with(&format!("{name}::"));
        if depth == 1 && named(rest.trim_start()) {
            found.push(opened); // an item at the start of a group's line
        }
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            let item = rest[i + 1..].trim_start();
            let at_top = depth == 1 && (c == '{' || c == ',');
            if at_top && named(item) {
                found.push(opened);
            }
            if depth == 0 {
                break;
            }
        }
        group = (depth > 0).then_some((opened, depth));
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Files over [`MAX_LINES`] whose opening comment gives no reason.
fn long_files(root: &Path, files: &[PathBuf]) -> Vec<Problem> {
    files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).ok()?;
            let count = text.lines().count();
            (count > MAX_LINES && !states_reason(&text)).then(|| {
                format!(
                    "{} has {count} lines: split it at its seams, or give the reason in its \
                     opening comment, on a line starting \"{REASON_MARK}\"",
                    shown(root, file)
                )
            })
        })
        .collect()
}

/// Whether the file's opening comment (its first lines that are comments) has a line
/// starting with [`REASON_MARK`] followed by a reason of a few words.
fn states_reason(text: &str) -> bool {
    text.lines()
        .take_while(|l| {
            let l = l.trim_start();
            l.starts_with("//") || l.starts_with('#') || l.starts_with('*') || l.is_empty()
        })
        .map(|l| l.trim_start_matches(['/', '!', '#', '*', ' ', '(']))
        .filter_map(|l| l.strip_prefix(REASON_MARK))
        .any(|reason| reason.split_whitespace().count() >= REASON_WORDS)
}

/// The modules of each layer the map does not name.
fn map_names_every_module(root: &Path) -> Result<Vec<Problem>, String> {
    let map = read(root, MAP)?;
    let mut problems = Vec::new();
    for (dir, layer) in LAYERS {
        for module in modules(&root.join(dir))? {
            if !map.contains(&format!("{layer}::{module}")) {
                problems.push(format!(
                    "{MAP} does not name `{layer}::{module}` ({dir}): add it to its layer's table"
                ));
            }
        }
    }
    let dated = map.lines().enumerate().filter(|(_, l)| has_date(l));
    problems.extend(dated.map(|(n, _)| {
        format!(
            "{MAP}:{}: a dated figure: it belongs in docs/BENCHMARKS.md",
            n + 1
        )
    }));
    Ok(problems)
}

/// The top-level modules in `dir`: its `.rs` files (not the crate's root, not tests) and its
/// folders.
fn modules(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            match e.path().is_dir() {
                true => Some(name),
                false => name.strip_suffix(".rs").map(str::to_owned),
            }
        })
        .filter(|n| {
            !["lib", "mod", "main", "tests"].contains(&n.as_str()) && !n.ends_with("_tests")
        })
        .collect();
    names.sort();
    Ok(names)
}

/// Whether a line holds a date (`2026-11-28`).
fn has_date(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(9)).any(|i| {
        let d = |j: usize| b[i + j].is_ascii_digit();
        d(0) && d(1)
            && d(2)
            && d(3)
            && b[i + 4] == b'-'
            && d(5)
            && d(6)
            && b[i + 7] == b'-'
            && d(8)
            && d(9)
            && b[i..i + 2] == *b"20"
    })
}

/// Relative links of README.md and docs/*.md whose file does not exist.
fn links_lead_somewhere(root: &Path) -> Result<Vec<Problem>, String> {
    let mut docs = vec![root.join("README.md")];
    let entries = std::fs::read_dir(root.join("docs")).map_err(|e| format!("docs: {e}"))?;
    docs.extend(
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    let mut problems = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
        for target in link_targets(&text) {
            let file = target.split('#').next().unwrap_or_default();
            let external = target.contains("://") || target.starts_with("mailto:");
            if external || file.is_empty() {
                continue;
            }
            let base = if file.starts_with('/') {
                root.to_owned()
            } else {
                doc.parent().unwrap().to_owned()
            };
            if !base.join(file.trim_start_matches('/')).exists() {
                problems.push(format!(
                    "{}: the link to {target} leads nowhere",
                    shown(root, &doc)
                ));
            }
        }
    }
    Ok(problems)
}

/// The targets of Markdown links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let end = rest.find(')')?;
            let target = rest[..end].split_whitespace().next()?.to_owned();
            Some(target)
        })
        .collect()
}

/// Sources citing a Markdown document of this repository that does not exist.
fn no_missing_documents(root: &Path, files: &[PathBuf]) -> Vec<Problem> {
    let mut problems = Vec::new();
    // The checker's own tests cite missing documents on purpose.
    let own_tests = root.join("crates/xtask/src/shape_tests.rs");
    for file in files.iter().filter(|f| **f != own_tests) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let here = file.parent().unwrap_or(root);
        for cited in cited_documents(&text) {
            let found = [root, &root.join("docs"), here]
                .iter()
                .any(|d| d.join(&cited).exists());
            if !found {
                problems.push(format!(
                    "{} cites {cited}, which is not in the repository: cite what is (a file \
                     under docs/, the specification's section)",
                    shown(root, file)
                ));
            }
        }
    }
    problems
}

/// Names of Markdown files a text's comments cite: words ending `.md` (`docs/DECISIONS.md`).
/// Code is left alone: a path it joins is tested where it runs.
fn cited_documents(text: &str) -> Vec<String> {
    let comments = text.lines().filter(|l| {
        let l = l.trim_start();
        l.starts_with("//") || l.starts_with('#') || l.starts_with('*')
    });
    let words = comments.flat_map(|l| {
        l.split(|c: char| !(c.is_alphanumeric() || "_-./".contains(c)))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    });
    words
        .filter(|w| w.ends_with(".md") && w.len() > 3)
        .filter(|w| !w.starts_with("../") && !w.starts_with("//"))
        .map(|w| w.trim_start_matches("./").to_owned())
        .collect()
}

fn read(root: &Path, file: &str) -> Result<String, String> {
    std::fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"))
}

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;
