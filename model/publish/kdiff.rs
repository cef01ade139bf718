//! Patches made at run time from a kernel source tree the user has.
//!
//! The kernel is GPL-2.0 and this crate is not: no kernel code is stored
//! here. A patch is a list of edits located in the user's tree by short
//! patterns (a function's name, an identifier, a few words of a comment);
//! its context and removed lines are read from that tree when the report
//! is written, and its added lines are this crate's own. [`Tree::find`]
//! finds the tree (`--source DIR`, `$FLUSHCHECK_KERNEL_SOURCE`, the kernel
//! cache, `/usr/src`), [`how_to_get`] says how to get one, [`Edit`] holds
//! one file's edits and prints them as a unified diff that `git apply` and
//! `patch -p1` take.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable naming a kernel source tree, or a directory of
/// unpacked trees (`linux-source-7.3/`, ...).
pub const ENV: &str = "FLUSHCHECK_KERNEL_SOURCE";

/// The kernel sources a patch is written against: a Debian source package
/// (`linux-source-7.3`, which unpacks to a directory of that name) and the
/// release series its Makefile must name.
#[derive(Clone, Copy, Debug)]
pub struct Series {
    /// `VERSION.PATCHLEVEL` (`7.3`).
    pub series: &'static str,
    /// Debian's package, and the directory its tarball unpacks to.
    pub package: &'static str,
    /// Where Debian has the package (`trixie-backports`, `trixie`, ...).
    pub suite: &'static str,
}

/// An unpacked kernel source tree.
#[derive(Clone, Debug)]
pub struct Tree {
    /// Its top directory (the one with the Makefile).
    pub root: PathBuf,
    /// `VERSION.PATCHLEVEL.SUBLEVEL` from its Makefile.
    pub release: String,
}

/// `VERSION.PATCHLEVEL.SUBLEVEL` of the tree at `root`, from its Makefile.
fn makefile_release(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("Makefile")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|r| r.trim_start().strip_prefix('='))
            .map(|v| v.trim().to_string())
    };
    Some(format!(
        "{}.{}.{}",
        field("VERSION")?,
        field("PATCHLEVEL")?,
        field("SUBLEVEL")?
    ))
}

impl Tree {
    /// The tree of `series`: `explicit` (a tree, or a directory holding
    /// `series.package`), else [`ENV`], else the kernel cache's `src/`
    /// (`$FLUSHCHECK_KERNELS`, else `target/kernels`), else `/usr/src`.
    /// The error says where it looked and how to get the tree.
    pub fn find(explicit: Option<&Path>, series: &Series) -> Result<Tree, String> {
        let mut places: Vec<PathBuf> = Vec::new();
        if let Some(p) = explicit {
            places.push(p.to_path_buf());
        } else {
            if let Some(v) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
                places.push(PathBuf::from(v));
            }
            let cache = std::env::var_os("FLUSHCHECK_KERNELS")
                .filter(|v| !v.is_empty())
                .map_or_else(|| PathBuf::from("target/kernels"), PathBuf::from);
            places.push(cache.join("src"));
            places.push(PathBuf::from("/usr/src"));
        }
        let mut wrong = Vec::new();
        for p in &places {
            for root in [p.clone(), p.join(series.package)] {
                let Some(release) = makefile_release(&root) else {
                    continue;
                };
                if release.starts_with(&format!("{}.", series.series)) {
                    return Ok(Tree { root, release });
                }
                wrong.push(format!("{} is {release}", root.display()));
            }
        }
        let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
        Err(format!(
            "no {} kernel source tree in {}{}. {}",
            series.series,
            looked.join(", "),
            if wrong.is_empty() {
                String::new()
            } else {
                format!(" ({})", wrong.join("; "))
            },
            how_to_get(series)
        ))
    }

    /// The text of `rel` (`mm/memcontrol.c`) in this tree.
    pub fn read(&self, rel: &str) -> Result<String, String> {
        let p = self.root.join(rel);
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    }

    /// [`Edit::new`] of `rel` in this tree.
    pub fn edit(&self, rel: &'static str) -> Result<Edit, String> {
        Ok(Edit::new(rel, &self.read(rel)?))
    }
}

/// How to get the tree of `series`, in a sentence with the commands.
pub fn how_to_get(s: &Series) -> String {
    format!(
        "Get it from Debian ({suite}): `apt-get install {pkg}`, then `tar -xf \
         /usr/src/{pkg}.tar.xz -C DIR` and pass `--source DIR/{pkg}` (or set {ENV}); any \
         {series}.y checkout of the stable tree works as well.",
        suite = s.suite,
        pkg = s.package,
        series = s.series,
    )
}

/// One change: `remove` lines from old line `at` (0-based), `add` in
/// their place.
#[derive(Clone, Debug)]
struct Change {
    at: usize,
    remove: usize,
    add: Vec<String>,
}

/// One file of a tree and the edits made to it.
#[derive(Clone, Debug)]
pub struct Edit {
    /// The path in the tree (`mm/memcontrol.c`).
    pub path: &'static str,
    lines: Vec<String>,
    changes: Vec<Change>,
}

/// Lines of context around each change, as `diff -u` and git use.
const CONTEXT: usize = 3;

impl Edit {
    /// `text`, the file at `path`, with no edits yet.
    pub fn new(path: &'static str, text: &str) -> Edit {
        Edit {
            path,
            lines: text.lines().map(str::to_string).collect(),
            changes: Vec::new(),
        }
    }

    /// The file's lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The lines of function `name`'s definition: from the line that
    /// starts it (at column 0, `name(` in it, not a declaration ending in
    /// `;`) to its closing `}` at column 0, both included.
    pub fn function(&self, name: &str) -> Result<(usize, usize), String> {
        let call = format!("{name}(");
        let start = self
            .lines
            .iter()
            .position(|l| {
                !l.starts_with(char::is_whitespace)
                    && !l.starts_with('#')
                    && l.contains(&call)
                    && !l.trim_end().ends_with(';')
                    && !l.starts_with(' ')
            })
            .ok_or_else(|| format!("{}: no definition of {name}()", self.path))?;
        let end = self.lines[start..]
            .iter()
            .position(|l| l == "}")
            .map(|k| start + k)
            .ok_or_else(|| format!("{}: {name}() has no closing brace", self.path))?;
        Ok((start, end))
    }

    /// The first line in `range` (inclusive) containing `pat`.
    pub fn find(&self, range: (usize, usize), pat: &str, what: &str) -> Result<usize, String> {
        (range.0..=range.1.min(self.lines.len().saturating_sub(1)))
            .find(|&i| self.lines[i].contains(pat))
            .ok_or_else(|| format!("{}: no `{pat}` {what}", self.path))
    }

    /// The first line of the whole file containing `pat`.
    pub fn find_anywhere(&self, pat: &str, what: &str) -> Result<usize, String> {
        self.find((0, self.lines.len()), pat, what)
    }

    /// The `/* ... */` comment that line `at` is part of: its first and
    /// last lines.
    pub fn comment_around(&self, at: usize) -> Result<(usize, usize), String> {
        let start = (0..=at)
            .rev()
            .find(|&i| self.lines[i].trim_start().starts_with("/*"))
            .ok_or_else(|| format!("{}: line {} is in no comment", self.path, at + 1))?;
        let end = (at..self.lines.len())
            .find(|&i| self.lines[i].contains("*/"))
            .ok_or_else(|| {
                format!(
                    "{}: the comment at line {} never ends",
                    self.path,
                    start + 1
                )
            })?;
        Ok((start, end))
    }

    fn push(&mut self, c: Change) -> Result<(), String> {
        let (a, b) = (c.at, c.at + c.remove);
        if b > self.lines.len() {
            return Err(format!(
                "{}: an edit runs past the end of the file",
                self.path
            ));
        }
        if self
            .changes
            .iter()
            .any(|d| a < d.at + d.remove.max(1) && d.at < b.max(a + 1))
        {
            return Err(format!(
                "{}: two edits touch line {} (the patterns found the same place twice)",
                self.path,
                a + 1
            ));
        }
        self.changes.push(c);
        self.changes.sort_by_key(|c| (c.at, c.remove));
        Ok(())
    }

    /// Remove lines `from..=to`.
    pub fn delete(&mut self, from: usize, to: usize) -> Result<(), String> {
        self.push(Change {
            at: from,
            remove: to + 1 - from,
            add: Vec::new(),
        })
    }

    /// Insert `lines` before line `at`.
    pub fn insert(&mut self, at: usize, lines: Vec<String>) -> Result<(), String> {
        self.push(Change {
            at,
            remove: 0,
            add: lines,
        })
    }

    /// Replace lines `from..=to` with `lines`.
    pub fn replace(&mut self, from: usize, to: usize, lines: Vec<String>) -> Result<(), String> {
        self.push(Change {
            at: from,
            remove: to + 1 - from,
            add: lines,
        })
    }

    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        self.changes
            .iter()
            .fold((0, 0), |(a, r), c| (a + c.add.len(), r + c.remove))
    }

    /// The line git shows after a hunk's `@@`: the nearest line above
    /// `at` that starts with a letter or `_` and is not a label.
    fn funcname(&self, at: usize) -> String {
        (0..at)
            .rev()
            .map(|i| &self.lines[i])
            .find(|l| {
                l.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && !l.trim_end().ends_with(':')
            })
            .map(|l| {
                l.chars()
                    .take(72)
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .unwrap_or_default()
    }

    /// The edits as a unified diff with git's headers (`diff --git`,
    /// `--- a/`, `+++ b/`), three lines of context.
    pub fn diff(&self) -> String {
        let mut out = String::new();
        if self.changes.is_empty() {
            return out;
        }
        let _ = writeln!(out, "diff --git a/{p} b/{p}", p = self.path);
        let _ = writeln!(out, "--- a/{}", self.path);
        let _ = writeln!(out, "+++ b/{}", self.path);
        // Group changes whose context windows touch into one hunk.
        let mut groups: Vec<Vec<&Change>> = Vec::new();
        for c in &self.changes {
            match groups.last_mut() {
                Some(g) => {
                    let last = g.last().expect("a group is not empty");
                    if c.at <= last.at + last.remove + 2 * CONTEXT {
                        g.push(c);
                    } else {
                        groups.push(vec![c]);
                    }
                }
                None => groups.push(vec![c]),
            }
        }
        let mut delta: isize = 0;
        for g in groups {
            let first = g[0];
            let last = g[g.len() - 1];
            let start = first.at.saturating_sub(CONTEXT);
            let end = (last.at + last.remove + CONTEXT).min(self.lines.len());
            let mut body = String::new();
            let (mut old_n, mut new_n) = (0, 0);
            let mut i = start;
            for c in &g {
                while i < c.at {
                    let _ = writeln!(body, " {}", self.lines[i]);
                    (old_n, new_n, i) = (old_n + 1, new_n + 1, i + 1);
                }
                for l in &self.lines[c.at..c.at + c.remove] {
                    let _ = writeln!(body, "-{l}");
                }
                for l in &c.add {
                    let _ = writeln!(body, "+{l}");
                }
                old_n += c.remove;
                new_n += c.add.len();
                i = c.at + c.remove;
            }
            while i < end {
                let _ = writeln!(body, " {}", self.lines[i]);
                (old_n, new_n, i) = (old_n + 1, new_n + 1, i + 1);
            }
            // An empty side starts at the line before (diff -u's rule).
            let old_start = if old_n == 0 { start } else { start + 1 };
            let new_first = (start as isize + delta) as usize;
            let new_start = if new_n == 0 { new_first } else { new_first + 1 };
            let func = self.funcname(start);
            let _ = writeln!(
                out,
                "@@ -{old_start},{old_n} +{new_start},{new_n} @@{}{func}",
                if func.is_empty() { "" } else { " " }
            );
            out.push_str(&body);
            delta += new_n as isize - old_n as isize;
        }
        out
    }
}

/// `git diff --stat`'s summary of `edits`.
pub fn diffstat(edits: &[Edit]) -> String {
    let width = edits.iter().map(|e| e.path.len()).max().unwrap_or(0);
    let mut out = String::new();
    let (mut ins, mut del) = (0, 0);
    for e in edits {
        let (a, r) = e.counts();
        ins += a;
        del += r;
        let _ = writeln!(
            out,
            " {:<width$} | {:>3} {}{}",
            e.path,
            a + r,
            "+".repeat(a),
            "-".repeat(r)
        );
    }
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        " {} changed, {}(+), {}(-)",
        plural(edits.len(), "file"),
        plural(ins, "insertion"),
        plural(del, "deletion")
    );
    out
}

/// The new text of `e`'s file (the edits applied), for tests.
pub fn applied(e: &Edit) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    for c in &e.changes {
        out.extend(e.lines[i..c.at].iter().cloned());
        out.extend(c.add.iter().cloned());
        i = c.at + c.remove;
    }
    out.extend(e.lines[i..].iter().cloned());
    let mut s = out.join("\n");
    s.push('\n');
    s
}
