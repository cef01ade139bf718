//! The crate's import graph, read from the source: which file of `model/`
//! names which other, with `pub use` re-exports followed to the file that
//! defines the item. `tests/suite/architecture.rs` checks it (no folder
//! arrow running up, no circle); `cargo test --release architecture --
//! --nocapture` prints it, as docs/model.md section 2 quotes.
//!
//! A reference is a `use` tree or an inline path starting with `crate::`,
//! `super::` or `self::` (or a child module's name, in a `use`), outside
//! comments and string literals. `mod x;` is containment, not an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path below the crate root (`["drive", "fuzz"]`).
pub type ModPath = Vec<String>;

/// Every module file: its path, its module path, and its source with
/// comments and string literals blanked.
pub struct Crate {
    /// File (relative to `model/`) by module path.
    pub files: BTreeMap<ModPath, String>,
    sources: BTreeMap<ModPath, String>,
    /// `pub use` re-exports: (module, name) -> the full path it names.
    reexports: BTreeMap<(ModPath, String), ModPath>,
}

fn blank_comments_and_strings(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'/' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'*' {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            out.push('"');
            i += 1;
        } else if b[i] == b'\'' && i + 2 < b.len() && b[i + 2] == b'\'' {
            out.push_str("' '");
            i += 3;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn module_path(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && stem != "lib" {
        parts.push(stem);
    }
    parts
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("model/ readable")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // The binary is a crate of its own.
            if p.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Expand one `use` tree (`a::{b, c::{d, e as f}}`) into full paths.
fn expand(tree: &str) -> Vec<Vec<String>> {
    fn go(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let s = s.trim();
        if s.is_empty() {
            return;
        }
        if let Some(open) = s.find('{') {
            let head: Vec<String> = s[..open]
                .split("::")
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(String::from)
                .collect();
            let close = s.rfind('}').unwrap_or(s.len());
            let inner = &s[open + 1..close];
            let mut p = prefix.to_vec();
            p.extend(head);
            let (mut depth, mut start) = (0, 0);
            for (i, ch) in inner.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(&inner[start..i], &p, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            go(&inner[start..], &p, out);
        } else {
            let s = s.split(" as ").next().unwrap_or(s);
            let mut p = prefix.to_vec();
            p.extend(
                s.split("::")
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(String::from),
            );
            out.push(p);
        }
    }
    let mut out = Vec::new();
    go(tree, &[], &mut out);
    out
}

/// The byte ranges of inline `mod name { ... }` blocks.
fn inline_mods(src: &str) -> Vec<(usize, usize)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(k) = src[from..].find("mod ") {
        let i = from + k;
        from = i + 4;
        if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
            continue;
        }
        let name_end = src[i + 4..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map(|n| i + 4 + n);
        let Some(e) = name_end else { continue };
        if !src[e..].trim_start().starts_with('{') {
            continue;
        }
        let open = e + src[e..].find('{').unwrap_or(0);
        let mut depth = 0;
        for (j, ch) in src[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push((open, open + j));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// How many inline modules enclose byte `at`.
fn depth_at(mods: &[(usize, usize)], at: usize) -> usize {
    mods.iter().filter(|(a, b)| *a < at && at < *b).count()
}

/// A path found in a source: where, and its segments.
type Found = (usize, Vec<String>);

/// `use` statements of a (blanked) source: (where, is `pub`, the tree).
fn uses(src: &str) -> Vec<(usize, bool, String)> {
    let mut out = Vec::new();
    let mut rest = src;
    let mut offset = 0;
    while let Some(i) = rest.find("use ") {
        let before = &rest[..i];
        let at_start = before
            .chars()
            .last()
            .is_none_or(|c| c == '\n' || c == ' ' || c == ';' || c == '{' || c == '}');
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let lead = before[line_start..].trim();
        let is_pub = lead.starts_with("pub");
        let ok = at_start && (lead.is_empty() || lead.starts_with("pub"));
        let after = &rest[i + 4..];
        let Some(end) = after.find(';') else { break };
        if ok {
            out.push((offset + i, is_pub, after[..end].to_string()));
        }
        offset += i + 4 + end;
        rest = &after[end..];
    }
    out
}

/// Drop the `super`s that leave inline modules (they stay in the file).
fn strip_inline(path: Vec<String>, depth: usize) -> Vec<String> {
    let mut p = path;
    let mut d = depth;
    while d > 0 && p.first().is_some_and(|s| s == "super") {
        p.remove(0);
        d -= 1;
    }
    if d < depth && p.first().is_none_or(|s| s != "super") {
        p.insert(0, "self".into());
    }
    p
}

impl Crate {
    /// Read every `.rs` file under `root` (the crate's `model/`).
    pub fn read(root: &Path) -> Crate {
        let mut paths = Vec::new();
        walk(root, &mut paths);
        let mut files = BTreeMap::new();
        let mut sources = BTreeMap::new();
        for p in paths {
            let rel = p.strip_prefix(root).expect("under root").to_path_buf();
            let m = module_path(&rel);
            let src = std::fs::read_to_string(&p).expect("readable source");
            files.insert(m.clone(), rel.to_string_lossy().into_owned());
            sources.insert(m, blank_comments_and_strings(&src));
        }
        let mut c = Crate {
            files,
            sources,
            reexports: BTreeMap::new(),
        };
        let mut reexports = BTreeMap::new();
        for (m, src) in &c.sources {
            for (_, is_pub, tree) in uses(src) {
                if !is_pub {
                    continue;
                }
                for path in expand(&tree) {
                    if let Some(full) = c.absolute(m, &path) {
                        if let Some(name) = full.last() {
                            reexports.insert((m.clone(), name.clone()), full.clone());
                        }
                    }
                }
            }
        }
        c.reexports = reexports;
        c
    }

    /// `path` as written in module `m`, made absolute; `None` for paths
    /// outside the crate.
    fn absolute(&self, m: &ModPath, path: &[String]) -> Option<ModPath> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" => {
                let mut p = m.clone();
                p.extend(path[1..].iter().cloned());
                Some(p)
            }
            "super" => {
                let mut p = m.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    p.pop();
                    rest = &rest[1..];
                }
                p.extend(rest.iter().cloned());
                Some(p)
            }
            name => {
                // A child module named in a `use` (2018 paths).
                let mut child = m.clone();
                child.push(name.to_string());
                self.files.contains_key(&child).then(|| {
                    let mut p = m.clone();
                    p.extend(path.iter().cloned());
                    p
                })
            }
        }
    }

    /// The file that defines what `path` (absolute) names, following
    /// re-exports.
    fn resolve(&self, path: &[String], depth: usize) -> Option<ModPath> {
        if depth > 16 {
            return None;
        }
        // The longest prefix that is a module with a file.
        let mut k = path.len();
        while k > 0 && !self.files.contains_key(&path[..k].to_vec()) {
            k -= 1;
        }
        let module = path[..k].to_vec();
        if let Some(name) = path.get(k) {
            if let Some(target) = self.reexports.get(&(module.clone(), name.clone())) {
                if target.as_slice() != path {
                    let mut t = target.clone();
                    t.extend(path[k + 1..].iter().cloned());
                    return self.resolve(&t, depth + 1).or(Some(module));
                }
            }
        }
        Some(module)
    }

    /// File-level edges: each module to the modules it names.
    pub fn edges(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut out: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (m, src) in &self.sources {
            let mods = inline_mods(src);
            let mut found: Vec<Found> = Vec::new();
            for (at, _, tree) in uses(src) {
                found.extend(expand(&tree).into_iter().map(|p| (at, p)));
            }
            // Inline paths: crate::a::b, super::a, self::a.
            for start in ["crate::", "super::", "self::"] {
                let mut rest = src.as_str();
                while let Some(i) = rest.find(start) {
                    // Judge the character before the match in the whole
                    // source: `rest` starts mid-path after a `super::`, so
                    // `super::super::a` would otherwise count twice.
                    let ok = src[..src.len() - rest.len() + i]
                        .chars()
                        .last()
                        .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
                    let tail: String = rest[i..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    // `$crate::name!`: a `#[macro_export]` macro at the crate
                    // root calling itself (v6_4_flushers!), not an import.
                    let root_macro = rest[i + tail.len()..].starts_with('!')
                        && tail.trim_start_matches(start).split("::").count() == 1;
                    if ok && !root_macro {
                        let at = src.len() - rest.len() + i;
                        found.push((
                            at,
                            tail.split("::")
                                .filter(|s| !s.is_empty())
                                .map(String::from)
                                .collect(),
                        ));
                    }
                    rest = &rest[i + start.len()..];
                }
            }
            let set = out.entry(m.clone()).or_default();
            for (at, p) in found {
                let p = strip_inline(p, depth_at(&mods, at));
                if let Some(abs) = self.absolute(m, &p) {
                    if let Some(t) = self.resolve(&abs, 0).filter(|t| t != m) {
                        set.insert(t);
                    }
                }
            }
        }
        out
    }
}

/// The top-level folder (or file) a module belongs to.
pub fn folder(m: &ModPath) -> String {
    m.first().cloned().unwrap_or_else(|| "lib".into())
}

/// Folder-level edges.
pub fn folder_edges(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (a, ts) in edges {
        for b in ts {
            let (fa, fb) = (folder(a), folder(b));
            if fa != fb && fa != "lib" {
                out.insert((fa, fb));
            }
        }
    }
    out
}

/// Strongly connected components with more than one member (Tarjan).
pub fn circles<T: Ord + Clone>(edges: &BTreeMap<T, BTreeSet<T>>) -> Vec<Vec<T>> {
    struct S<'a, T: Ord> {
        edges: &'a BTreeMap<T, BTreeSet<T>>,
        index: BTreeMap<T, usize>,
        low: BTreeMap<T, usize>,
        on: BTreeSet<T>,
        stack: Vec<T>,
        next: usize,
        out: Vec<Vec<T>>,
    }
    fn visit<T: Ord + Clone>(s: &mut S<T>, v: &T) {
        s.index.insert(v.clone(), s.next);
        s.low.insert(v.clone(), s.next);
        s.next += 1;
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        let succ: Vec<T> = s
            .edges
            .get(v)
            .map(|x| x.iter().cloned().collect())
            .unwrap_or_default();
        for w in succ {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let lw = s.low[&w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(&w) {
                let iw = s.index[&w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(&w);
                let done = w == *v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = S {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    let nodes: Vec<T> = edges.keys().cloned().collect();
    for v in &nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}
