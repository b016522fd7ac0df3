//! `cargo xtask layers`: the shape of the code, checked. Run by the test command (a unit
//! test of xtask's runs it over the repository) and on its own.
//!
//! - **Layers.** The host's modules are layered, lowest first (docs/ARCHITECTURE.md):
//!   `host-core`'s support, metrics, capabilities, runtime and http, then `runtime-host`'s
//!   services, commands and cli. A module may import only from its own layer or a lower
//!   one; an import that points up is refused, naming the file and the name imported.
//!   Cargo already keeps host-core from reaching runtime-host; this keeps the layers inside
//!   each crate in order.
//! - **No circles.** In the host's crates the files' imports (`use` and paths written
//!   inline: `crate::`, `super::`, `self::` or a child module's name) form no circle, not
//!   even between a module and its own `mod.rs`, tests included. In every other crate of
//!   the workspace, sibling files form no circle (a `lib.rs` or `mod.rs` and the children
//!   it calls may use each other's items, and tests may import what they test with).
//! - **Short files.** A Rust file over 400 lines says why in its opening comment, with the
//!   words "over 400 lines".
//!
//! Imports are read from the source text: comments, strings and character literals are
//! blanked first, then `use` trees are expanded and inline paths collected. A path is the
//! file of the longest prefix of it that is a module of the crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest a Rust file may be without saying why.
const MAX_LINES: usize = 400;
/// What its opening comment says when it is longer.
const LONG_FILE_REASON: &str = "over 400 lines";

/// The layered crates: where their sources are, and each top-level module's layer. A
/// module not named here (beside the crate's root) is an error: every module has a layer.
const LAYERED: &[(&str, &[&str])] = &[
    (
        "crates/host-core/src",
        &["support", "metrics", "capabilities", "runtime", "http"],
    ),
    ("runtime-host/src", &["services", "commands", "cli"]),
];

/// One problem found, as it is reported.
pub type Problem = String;

/// Checks the workspace at `root`; every problem found.
pub fn check(root: &Path) -> Result<Vec<Problem>, String> {
    let mut problems = Vec::new();
    let mut layer_base = 0;
    for (dir, layers) in LAYERED {
        let krate = Crate::read(&root.join(dir))?;
        problems.extend(krate.layering(layers, layer_base));
        layer_base += layers.len();
    }
    let layered: Vec<PathBuf> = LAYERED.iter().map(|(dir, _)| root.join(dir)).collect();
    for src in crate_sources(root)? {
        let krate = Crate::read(&src)?;
        problems.extend(krate.circles(layered.contains(&src)));
        problems.extend(krate.long_files());
    }
    Ok(problems)
}

/// `cargo xtask layers`: prints the problems; `Err` if there are any.
pub fn run(root: &Path) -> Result<(), String> {
    let problems = check(root)?;
    if problems.is_empty() {
        println!("layers: every import points down, no import circle, no file too long");
        return Ok(());
    }
    for p in &problems {
        eprintln!("layers: {p}");
    }
    Err(format!(
        "{} problem(s) with the code's shape (see docs/ARCHITECTURE.md)",
        problems.len()
    ))
}

/// The `src/` directory of every crate of the workspace (not `target/`).
fn crate_sources(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let skip = name == "target" || name.to_string_lossy().starts_with('.');
            if path.is_dir() && !skip {
                stack.push(path);
            }
        }
        let src = dir.join("src");
        if dir.join("Cargo.toml").is_file() && src.is_dir() {
            found.push(src);
        }
    }
    found.sort();
    Ok(found)
}

/// One crate's module tree: each file with its module path and what it imports.
struct Crate {
    src: PathBuf,
    /// Module path (`["http", "server"]`) to the file that holds it.
    modules: BTreeMap<Vec<String>, PathBuf>,
    /// Each file's imports: module path of the file, then what it imports.
    imports: BTreeMap<Vec<String>, Vec<Reference>>,
    lines: BTreeMap<Vec<String>, (usize, String)>,
}

impl Crate {
    fn read(src: &Path) -> Result<Self, String> {
        let mut modules = BTreeMap::new();
        for file in rust_files(src)? {
            let relative = file.strip_prefix(src).unwrap_or(&file);
            if !relative.starts_with("bin") {
                // (src/bin/ holds crates of their own.)
                modules.insert(module_path(relative), file);
            }
        }
        let known: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
        let generated = generated_references(src, &known);
        let mut imports = BTreeMap::new();
        let mut lines = BTreeMap::new();
        for (module, file) in &modules {
            let text =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            let code = blank_comments_and_literals(&text);
            let mut refs = references(&code, module, &known);
            if text.contains("include!(concat!(env!(\"OUT_DIR\")") {
                // What the build script writes for this file to include refers on its behalf.
                refs.extend(generated.iter().map(|r| Reference {
                    path: r.path.clone(),
                    written: r.written.clone(),
                    in_tests: false,
                }));
            }
            imports.insert(module.clone(), refs);
            lines.insert(
                module.clone(),
                (text.lines().count(), opening_comment(&text)),
            );
        }
        Ok(Self {
            src: src.to_owned(),
            modules,
            imports,
            lines,
        })
    }

    fn shown(&self, module: &[String]) -> String {
        let file = &self.modules[module];
        let root = self
            .src
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&self.src);
        file.strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string()
    }

    /// The module whose file holds `path`: its longest prefix that is a module.
    fn owner(&self, path: &[String]) -> Vec<String> {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|prefix| self.modules.contains_key(prefix))
            .unwrap_or_default()
    }

    /// Every file-to-file import: (from, to, as written), to another file. Unless `strict`,
    /// without the tests' imports and those between a module and its own ancestors (a
    /// `lib.rs` or `mod.rs` that its children use while it calls them).
    fn edges(&self, strict: bool) -> Vec<(Vec<String>, Vec<String>, String)> {
        let mut edges = Vec::new();
        for (from, refs) in &self.imports {
            for r in refs {
                let to = self.owner(&r.path);
                let related = to.starts_with(from) || from.starts_with(&to);
                if &to != from && (strict || !(r.in_tests || related)) {
                    edges.push((from.clone(), to, r.written.clone()));
                }
            }
        }
        edges
    }

    /// Imports that point to a higher layer. `layers` are the top-level modules in order,
    /// the first at layer `base + 1`; the crate's root file is above them all.
    fn layering(&self, layers: &[&str], base: usize) -> Vec<Problem> {
        let layer_of = |module: &[String]| -> Option<(usize, String)> {
            match module.first() {
                None => Some((usize::MAX, "the crate's root".to_owned())),
                Some(top) => layers
                    .iter()
                    .position(|l| l == top)
                    .map(|i| (base + i + 1, format!("{top} (layer {})", base + i + 1))),
            }
        };
        let mut problems = Vec::new();
        for module in self.modules.keys() {
            if layer_of(module).is_none() {
                problems.push(format!(
                    "{} is in no layer: put it under one of {} (docs/ARCHITECTURE.md)",
                    self.shown(module),
                    layers.join(", ")
                ));
            }
        }
        for (from, to, written) in self.edges(true) {
            let (Some((from_layer, from_name)), Some((to_layer, to_name))) =
                (layer_of(&from), layer_of(&to))
            else {
                continue;
            };
            if to_layer > from_layer {
                problems.push(format!(
                    "{} ({from_name}) imports `{written}` from {}, a higher layer ({to_name}): \
                     an import may only point down; move the item down or pass it in",
                    self.shown(&from),
                    self.shown(&to)
                ));
            }
        }
        problems
    }

    /// Circles among the crate's files ([`Crate::edges`]).
    fn circles(&self, strict: bool) -> Vec<Problem> {
        let mut graph: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> = BTreeMap::new();
        for (from, to, written) in self.edges(strict) {
            graph.entry(from).or_default().entry(to).or_insert(written);
        }
        let mut problems = Vec::new();
        for component in strongly_connected(&graph) {
            if component.len() < 2 {
                continue;
            }
            let members: BTreeSet<_> = component.iter().cloned().collect();
            let arrows: Vec<String> = component
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|(to, _)| members.contains(*to))
                        .map(move |(to, written)| {
                            format!("{} -> {} (`{written}`)", self.shown(from), self.shown(to))
                        })
                })
                .collect();
            problems.push(format!(
                "import circle of {} files: {}; cut one arrow (move the item to a module both \
                 can import, or pass it in)",
                component.len(),
                arrows.join(", ")
            ));
        }
        problems
    }

    /// Files over [`MAX_LINES`] whose opening comment does not say why.
    fn long_files(&self) -> Vec<Problem> {
        self.lines
            .iter()
            .filter(|(_, (count, opening))| {
                *count > MAX_LINES && !opening.to_lowercase().contains(LONG_FILE_REASON)
            })
            .map(|(module, (count, _))| {
                format!(
                    "{} has {count} lines: split it at its seams, or say why in its opening \
                     comment (\"{LONG_FILE_REASON}\" and the reason)",
                    self.shown(module)
                )
            })
            .collect()
    }
}

/// The crate's paths that its build script (`src/../build.rs`) writes into generated code,
/// in any string: `crate::a::b` found anywhere in the script's text.
fn generated_references(src: &Path, known: &BTreeSet<Vec<String>>) -> Vec<Reference> {
    let Some(script) = src.parent().map(|d| d.join("build.rs")) else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(&script) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let path: Vec<String> = text[at..]
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap_or_default()
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        found.extend(Reference::to(&path, &[], &[], known).map(|mut r| {
            r.written = format!("{} (in code build.rs generates)", r.written);
            r
        }));
    }
    found
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The module a file (relative to `src/`) holds: `http/server.rs` and `http/server/mod.rs`
/// are `http::server`; `lib.rs` and `main.rs` the crate's root.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_owned());
    }
    parts
}

/// The `//!` lines at the top of a file.
fn opening_comment(text: &str) -> String {
    text.lines()
        .take_while(|l| l.trim_start().starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` with every comment, string and character literal replaced by spaces (newlines
/// kept), so that what is left is code.
fn blank_comments_and_literals(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && starts_raw_string(&chars, i) {
            // A raw string: r"...", r#"..."#, with as many #s at the end as at the start.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    _ => j += 1,
                }
            }
            out.extend(chars[i..j.min(chars.len())].iter().map(|&c| blank(c)));
            i = j;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            out.extend(chars[i..end].iter().map(|&c| blank(c)));
            i = end;
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{..}'), or a lifetime ('a) left as it is.
            let end = if next == Some('\\') {
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                Some(j + 1)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    let end = end.min(chars.len());
                    out.extend(chars[i..end].iter().map(|&c| blank(c)));
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// Whether the `r` at `i` begins a raw string (`r"`, `r#"`, `br"`): not the end of a name.
fn starts_raw_string(chars: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).map(|p| &chars[p]);
    match before {
        Some('b') => !is_ident(i.checked_sub(2).and_then(|p| chars.get(p))),
        other => !is_ident(other),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Path,
    Open,
    Close,
    Semi,
    Comma,
    Other(char),
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
            continue;
        }
        match c {
            ':' if chars.get(i + 1) == Some(&':') => {
                out.push(Token::Path);
                i += 2;
                continue;
            }
            '{' => out.push(Token::Open),
            '}' => out.push(Token::Close),
            ';' => out.push(Token::Semi),
            ',' => out.push(Token::Comma),
            c if c.is_whitespace() => {}
            c => out.push(Token::Other(c)),
        }
        i += 1;
    }
    out
}

/// One path a file's code refers to.
struct Reference {
    /// As a module path from the crate's root.
    path: Vec<String>,
    /// As written.
    written: String,
    /// Written inside a `mod tests { .. }`.
    in_tests: bool,
}

impl Reference {
    /// `path` written in module `here` (inside the inline modules `inline`); `None` for a
    /// path into another crate.
    fn to(
        path: &[String],
        inline: &[(String, usize)],
        here: &[String],
        known: &BTreeSet<Vec<String>>,
    ) -> Option<Self> {
        Some(Self {
            path: resolve(path, here, known)?,
            written: path.join("::"),
            in_tests: inline.iter().any(|(name, _)| name == "tests"),
        })
    }
}

/// What the code of module `module` refers to. `known` are the crate's modules: a path may
/// start with a child module's name (`use worker::Worker`, `engine::find(..)`).
fn references(code: &str, module: &[String], known: &BTreeSet<Vec<String>>) -> Vec<Reference> {
    let toks = tokens(code);
    let mut found = Vec::new();
    // Names `use` brought in from this crate, and the module path each stands for.
    let mut used: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Inline modules open here (`mod tests {`), with the brace depth each opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let here = |inline: &[(String, usize)]| -> Vec<String> {
        let mut m = module.to_vec();
        m.extend(inline.iter().map(|(name, _)| name.clone()));
        m
    };
    while i < toks.len() {
        match &toks[i] {
            Token::Open => depth += 1,
            Token::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Ident(kw) if kw == "mod" => {
                if let (Some(Token::Ident(name)), Some(Token::Open)) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth));
                }
            }
            Token::Ident(kw) if kw == "use" => {
                let end = toks[i..]
                    .iter()
                    .position(|t| *t == Token::Semi)
                    .map_or(toks.len(), |p| i + p);
                let mut trees = Vec::new();
                use_tree(&toks[i + 1..end], &[], &mut trees);
                for (path, name) in trees {
                    let reference = Reference::to(&path, &inline, &here(&inline), known);
                    if let Some(r) = &reference {
                        used.insert(name, r.path.clone());
                    }
                    found.extend(reference);
                }
                i = end;
                continue;
            }
            // `$crate::` in a macro is `crate::`.
            Token::Ident(first)
                if toks.get(i + 1) == Some(&Token::Path)
                    && !matches!(i.checked_sub(1).map(|p| &toks[p]), Some(Token::Path))
                    && (matches!(first.as_str(), "crate" | "super" | "self")
                        || known.contains(&child(&here(&inline), first))
                        || used.contains_key(first)) =>
            {
                // A name a `use` brought in stands for the path it was brought from.
                let mut path = match used.get(first) {
                    Some(from) if !known.contains(&child(&here(&inline), first)) => {
                        std::iter::once("crate".to_owned())
                            .chain(from.iter().cloned())
                            .collect()
                    }
                    _ => vec![first.clone()],
                };
                let mut j = i + 1;
                while toks.get(j) == Some(&Token::Path) {
                    match toks.get(j + 1) {
                        Some(Token::Ident(seg)) => {
                            path.push(seg.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                found.extend(Reference::to(&path, &inline, &here(&inline), known));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Expands a `use` tree (`crate::a::{b, c::{d as e}}`) into its paths, each with the name it
/// is known by here (`b`, `e`; `self` stands for the module before it).
fn use_tree(toks: &[Token], prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut path = prefix.to_vec();
    let mut alias = None;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Token::Ident(id) if id == "as" => {
                // `as name`: the path is complete, and known by that name.
                if let Some(Token::Ident(name)) = toks.get(i + 1) {
                    alias = Some(name.clone());
                }
                i += 2;
                continue;
            }
            Token::Ident(id) => path.push(id.clone()),
            Token::Path => {}
            Token::Other('*') => {}
            Token::Open => {
                // The group's items, split at its top-level commas.
                let mut depth = 0;
                let mut start = i + 1;
                let mut j = i + 1;
                while j < toks.len() {
                    match toks[j] {
                        Token::Open => depth += 1,
                        Token::Close if depth == 0 => break,
                        Token::Close => depth -= 1,
                        Token::Comma if depth == 0 => {
                            use_tree(&toks[start..j], &path, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                use_tree(&toks[start..j.min(toks.len())], &path, out);
                return;
            }
            _ => {}
        }
        i += 1;
    }
    if path.len() > prefix.len() {
        let name = alias.unwrap_or_else(|| {
            path.iter()
                .rev()
                .find(|s| *s != "self")
                .cloned()
                .unwrap_or_default()
        });
        out.push((path, name));
    }
}

/// Module `name` inside module `parent`.
fn child(parent: &[String], name: &str) -> Vec<String> {
    let mut path = parent.to_vec();
    path.push(name.to_owned());
    path
}

/// `path` as a module path from the crate's root, seen from module `here` (a crate of the
/// modules `known`); `None` for a path into another crate.
fn resolve(path: &[String], here: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut at: Vec<String>;
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some(first) if known.contains(&child(here, first)) => {
            at = here.to_vec();
        }
        Some("crate") => {
            at = Vec::new();
            rest = &path[1..];
        }
        Some("self") => {
            at = here.to_vec();
            rest = &path[1..];
        }
        Some("super") => {
            at = here.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    at.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(at)
}

/// The strongly connected components of `graph` (Tarjan's algorithm, iterative).
fn strongly_connected<V: Ord + Clone>(graph: &BTreeMap<V, BTreeMap<V, String>>) -> Vec<Vec<V>> {
    let nodes: Vec<V> = graph
        .iter()
        .flat_map(|(from, tos)| std::iter::once(from.clone()).chain(tos.keys().cloned()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let index_of: BTreeMap<&V, usize> = nodes.iter().enumerate().map(|(i, v)| (v, i)).collect();
    let successors: Vec<Vec<usize>> = nodes
        .iter()
        .map(|v| {
            graph
                .get(v)
                .map(|tos| tos.keys().map(|t| index_of[t]).collect())
                .unwrap_or_default()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut components, mut next) = (Vec::new(), Vec::new(), 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some((v, child)) = work.pop() {
            if child == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = successors[v].get(child) {
                work.push((v, child + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// The repository as it is: its layers hold, it has no circles, no file is too long.
    #[test]
    fn the_repository_keeps_its_shape() {
        let problems = check(&root()).unwrap();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// A crate of `files` (path under src/, text) written to a temporary directory.
    fn crate_of(files: &[(&str, &str)]) -> (tempdir::TempDir, Crate) {
        let dir = tempdir::TempDir::new();
        for (path, text) in files {
            let file = dir.0.join("src").join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        let krate = Crate::read(&dir.0.join("src")).unwrap();
        (dir, krate)
    }

    mod tempdir {
        pub struct TempDir(pub std::path::PathBuf);
        impl TempDir {
            pub fn new() -> Self {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let n = N.fetch_add(1, Ordering::Relaxed);
                let dir =
                    std::env::temp_dir().join(format!("xtask-layers-{}-{n}", std::process::id()));
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                Self(dir)
            }
        }
        impl Drop for TempDir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    const LAYERS: &[&str] = &["low", "high"];

    #[test]
    fn an_upward_import_is_named_with_its_file() {
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "pub mod low; pub mod high;"),
            ("low/mod.rs", "pub mod a;"),
            ("low/a.rs", "use crate::high::b::Thing;\nfn f() {}"),
            ("high/mod.rs", "pub mod b;"),
            ("high/b.rs", "use crate::low::a;\npub struct Thing;"),
        ]);
        let problems = krate.layering(LAYERS, 0);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("low/a.rs"), "{}", problems[0]);
        assert!(
            problems[0].contains("crate::high::b::Thing"),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn inline_paths_grouped_uses_and_super_count_but_comments_and_strings_do_not() {
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "pub mod low; pub mod high;"),
            ("low/mod.rs", "pub mod a; pub mod b;"),
            (
                "low/a.rs",
                "// crate::high::x in a comment\nconst S: &str = \"crate::high::x\";\n\
                 const R: &str = r#\"use crate::high::x;\"#;\nfn f<'a>(c: char) { let _ = '\"'; }\n\
                 use super::{b::{self, Other}};",
            ),
            (
                "low/b.rs",
                "pub struct Other;\nfn g() { crate::high::c::h(); }",
            ),
            ("high/mod.rs", "pub mod c;"),
            ("high/c.rs", "pub fn h() {}"),
        ]);
        let problems = krate.layering(LAYERS, 0);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("low/b.rs"), "{}", problems[0]);
        assert!(problems[0].contains("crate::high::c::h"), "{}", problems[0]);
    }

    #[test]
    fn circles_are_found_even_through_a_mod_rs() {
        // A module's tests importing `super::*` is no circle.
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "mod a;"),
            ("a/mod.rs", "mod b;\nuse b::X;\nfn f() { b::g(); }"),
            (
                "a/b.rs",
                "pub struct X;\npub fn g() {}\n#[cfg(test)]\nmod tests { use super::*; }",
            ),
        ]);
        assert!(krate.circles(true).is_empty(), "{:?}", krate.circles(true));
        for import in ["use b::X;", "use self::b::X;", "fn f() { b::X::new(); }"] {
            let (_dir, krate) = crate_of(&[
                ("lib.rs", "mod a;"),
                ("a/mod.rs", &format!("mod b;\n{import}\npub struct Y;")),
                ("a/b.rs", "use super::Y;\npub struct X;"),
            ]);
            let circles = krate.circles(true);
            assert_eq!(circles.len(), 1, "{import}: {circles:?}");
            // Outside the host's crates a module and its own parent may use each other.
            assert!(krate.circles(false).is_empty(), "{import}");
            assert!(circles[0].contains("a/mod.rs -> "), "{}", circles[0]);
            assert!(circles[0].contains("a/b.rs -> "), "{}", circles[0]);
        }
    }

    #[test]
    fn sibling_circles_are_found_in_every_crate_but_not_through_tests() {
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "mod molecule; mod rings;"),
            (
                "molecule.rs",
                "use crate::rings::Ring;\npub struct Molecule;",
            ),
            (
                "rings.rs",
                "use crate::molecule::Molecule;\npub struct Ring;",
            ),
        ]);
        let circles = krate.circles(false);
        assert_eq!(circles.len(), 1, "{circles:?}");
        assert!(circles[0].contains("molecule.rs -> "), "{}", circles[0]);
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "mod molecule; mod rings;"),
            (
                "molecule.rs",
                "pub struct Molecule;\n#[cfg(test)]\nmod tests { use crate::rings::Ring; }",
            ),
            (
                "rings.rs",
                "use crate::molecule::Molecule;\npub struct Ring;",
            ),
        ]);
        assert!(krate.circles(false).is_empty());
        assert_eq!(krate.circles(true).len(), 1);
    }

    #[test]
    fn names_brought_in_by_use_macros_and_generated_code_count() {
        // `use crate::low::b;` then `b::c::f()`: the arrow goes to b/c.rs.
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "mod low;"),
            ("low/mod.rs", "mod a; mod b;"),
            (
                "low/a.rs",
                "use crate::low::b;\nfn f() { b::c::g(); }\npub struct A;",
            ),
            ("low/b/mod.rs", "pub mod c;"),
            ("low/b/c.rs", "use crate::low::a::A;\npub fn g() {}"),
        ]);
        let circles = krate.circles(true);
        assert_eq!(circles.len(), 1, "{circles:?}");
        assert!(circles[0].contains("low/b/c.rs"), "{}", circles[0]);
        // `$crate::` in a macro, and a path in code the build script generates.
        let (dir, krate) = crate_of(&[
            ("lib.rs", "pub mod low; pub mod high;"),
            ("low/mod.rs", "pub mod m; pub mod g;"),
            ("low/m.rs", "macro_rules! m { () => { $crate::high::x() } }"),
            (
                "low/g.rs",
                "include!(concat!(env!(\"OUT_DIR\"), \"/g.rs\"));",
            ),
            ("high/mod.rs", "pub fn x() {} pub struct Y;"),
        ]);
        assert_eq!(
            krate.layering(LAYERS, 0).len(),
            1,
            "{:?}",
            krate.layering(LAYERS, 0)
        );
        std::fs::write(
            dir.0.join("build.rs"),
            "fn main() { let _ = \"with: crate::high::Y\"; }",
        )
        .unwrap();
        let krate = Crate::read(&dir.0.join("src")).unwrap();
        let problems = krate.layering(LAYERS, 0);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("low/g.rs") && p.contains("build.rs"))
        );
    }

    #[test]
    fn raw_byte_strings_are_not_code() {
        let code =
            blank_comments_and_literals("let a = br#\"crate::x\"#; let b = r\"\\\"; crate::y");
        assert!(!code.contains("crate::x"), "{code}");
        assert!(code.contains("crate::y"), "{code}");
    }

    #[test]
    fn a_long_file_must_say_why() {
        let long = "fn f() {}\n".repeat(MAX_LINES + 1);
        let explained = format!("//! A table: over 400 lines, generated.\n{long}");
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", &long),
            ("b.rs", &explained),
        ]);
        let problems = krate.long_files();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("a.rs"), "{}", problems[0]);
    }

    #[test]
    fn a_module_outside_every_layer_is_named() {
        let (_dir, krate) = crate_of(&[
            ("lib.rs", "mod low; mod elsewhere;"),
            ("low.rs", ""),
            ("elsewhere.rs", ""),
        ]);
        let problems = krate.layering(LAYERS, 0);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("elsewhere.rs"), "{}", problems[0]);
    }
}
