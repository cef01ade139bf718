//! The mail a maintainer would act on, one per finding
//! (`flushcheck report --finding ID`), in kernel terms and kernel form: a
//! `[PATCH]` with a diff where a change is proposed (the diff made at run
//! time from a kernel tree, [`crate::publish::kdiff`]), a short reply in the
//! original thread (`In-Reply-To:`) where the behaviour is known or the
//! claim was made in review, or a note saying why nothing is sent. `To:`
//! and `Cc:` come from the MAINTAINERS entries of the files concerned
//! ([`crate::protocol::findings::maintainers`]) and the people whose words
//! the mail answers ([`people`]). [`form`] holds the checks every mail
//! passes; [`full`] the model's whole report (`--model-report`), which is not the
//! mail.
//!
//! Mails: [`c12`] (a patch), [`death`] (a stable-only patch), [`comment`]
//! (c1-bound's comment patch, which also carries c10-bound's correction),
//! [`notes`] (the replies and the notes).

pub mod c12;
pub mod comment;
pub mod death;
pub mod evidence;
pub mod form;
pub mod full;
pub mod names;
pub mod notes;
pub mod people;
pub mod scaled;
pub mod text;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::protocol::findings::Finding;
use crate::publish::kdiff::{diffstat, Edit, Series};

/// The widest line of a mail's prose and headers.
pub const WIDTH: usize = 80;

/// The width prose is wrapped to (a commit message's).
pub const PROSE: usize = 72;

/// What a mail is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A patch for mainline (`[PATCH]`, `Fixes:`, a diff).
    Patch,
    /// A stable-only patch (`[PATCH x.y]`, to stable@).
    StablePatch,
    /// A reply in an existing thread (`Re:`, `In-Reply-To:`).
    Reply,
    /// Nothing to send: the note says why.
    NoMail,
}

/// What the mails are made from besides the finding.
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    /// `--source DIR`: a kernel tree, or a directory of trees.
    pub source: Option<PathBuf>,
    /// The recorded consoles of real kernels (`--consoles DIR`; default
    /// [`evidence::default_dir`]).
    pub consoles: Option<PathBuf>,
    /// `--signed-off-by "Name <address>"`.
    pub signed_off_by: Option<String>,
}

impl Ctx {
    /// The consoles directory.
    pub fn consoles(&self) -> PathBuf {
        self.consoles.clone().unwrap_or_else(evidence::default_dir)
    }
}

/// A patch's diff, or why there is none here.
#[derive(Clone, Debug)]
pub enum Diff {
    /// Made from the tree at `release`.
    Made {
        /// The tree's release (its Makefile's).
        release: String,
        /// The edits, one per file.
        edits: Vec<Edit>,
    },
    /// No tree of `series` was found: the message says where it looked and
    /// how to get one.
    Missing {
        /// The series looked for.
        series: Series,
        /// Why.
        why: String,
    },
}

/// One mail.
#[derive(Clone, Debug)]
pub struct Mail {
    /// The finding.
    pub id: &'static str,
    /// What it is.
    pub kind: Kind,
    /// `Subject:` (with its prefix: `[PATCH]`, `Re: ...`).
    pub subject: String,
    /// `To:`.
    pub to: Vec<String>,
    /// `Cc:`.
    pub cc: Vec<String>,
    /// `In-Reply-To:` (a reply).
    pub in_reply_to: Option<String>,
    /// `References:` (a reply).
    pub references: Vec<String>,
    /// The release whose functions the prose names (`v7.3.4`): every
    /// `name()` in it must be one [`names::known`] lists for it.
    pub release: &'static str,
    /// The prose, wrapped (quoted lines start with `> `).
    pub body: String,
    /// `Fixes:`, `Signed-off-by:` and the like.
    pub trailers: Vec<String>,
    /// The diff of a patch.
    pub diff: Option<Diff>,
    /// Below the `---` of a patch, or after a reply's signature: what the
    /// mail is based on (commands that reproduce it).
    pub notes: String,
    /// The most lines of prose (not counting quoted or blank lines).
    pub limit: usize,
}

/// A header field, folded (RFC 5322: a continuation line starts with a
/// space) after a comma when it does not fit.
pub fn header(out: &mut String, name: &str, values: &[String]) {
    if values.is_empty() {
        return;
    }
    let mut line = format!("{name}:");
    for (i, v) in values.iter().enumerate() {
        let piece = if i + 1 < values.len() {
            format!("{v},")
        } else {
            v.clone()
        };
        if line.chars().count() + 1 + piece.chars().count() > WIDTH && line.contains(' ') {
            let _ = writeln!(out, "{line}");
            line = String::new();
        }
        line.push(' ');
        line.push_str(&piece);
    }
    let _ = writeln!(out, "{line}");
}

/// `Subject:`, folded at a space before [`WIDTH`] if it is longer.
fn subject_line(out: &mut String, subject: &str) {
    let line = format!("Subject: {subject}");
    if line.chars().count() <= WIDTH {
        let _ = writeln!(out, "{line}");
        return;
    }
    let cut = line[..WIDTH].rfind(' ').unwrap_or(line.len());
    let _ = writeln!(out, "{}", &line[..cut]);
    let _ = writeln!(out, " {}", line[cut..].trim_start());
}

impl Mail {
    /// The mail as text: headers, a blank line, the prose, the trailers,
    /// and for a patch `---`, the notes, the diffstat and the diff.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if self.kind == Kind::NoMail {
            let _ = writeln!(out, "No mail for {}\n({})", self.id, self.subject);
            out.push('\n');
            out.push_str(&self.body);
            if !self.notes.is_empty() {
                out.push('\n');
                out.push_str(&self.notes);
            }
            return out;
        }
        subject_line(&mut out, &self.subject);
        header(&mut out, "To", &self.to);
        header(&mut out, "Cc", &self.cc);
        if let Some(r) = &self.in_reply_to {
            let _ = writeln!(out, "In-Reply-To: {r}");
            // Message-IDs separated by folding white space, no commas.
            let mut line = "References:".to_string();
            for id in &self.references {
                if line.len() + 1 + id.len() > WIDTH && line.contains(' ') {
                    let _ = writeln!(out, "{line}");
                    line.clear();
                }
                line.push(' ');
                line.push_str(id);
            }
            let _ = writeln!(out, "{line}");
        }
        out.push('\n');
        out.push_str(&self.body);
        if !self.trailers.is_empty() {
            out.push('\n');
            for t in &self.trailers {
                let _ = writeln!(out, "{t}");
            }
        }
        match &self.diff {
            Some(d) => {
                let _ = writeln!(out, "---");
                if !self.notes.is_empty() {
                    out.push_str(&self.notes);
                    out.push('\n');
                }
                match d {
                    Diff::Made { release, edits } => {
                        let _ = writeln!(out, "Against {release}.\n");
                        out.push_str(&diffstat(edits));
                        out.push('\n');
                        for e in edits {
                            out.push_str(&e.diff());
                        }
                    }
                    Diff::Missing { series, why } => {
                        let text = format!(
                            "The diff is made from a {} kernel tree when the report is \
                             written, and none was found here: {why}",
                            series.series
                        );
                        for l in words(&text, PROSE) {
                            let _ = writeln!(out, "{l}");
                        }
                    }
                }
            }
            None => {
                if !self.notes.is_empty() {
                    let _ = writeln!(out, "\n-- ");
                    out.push_str(&self.notes);
                }
            }
        }
        out
    }

    /// The prose lines that count against [`Mail::limit`]: not blank, not
    /// quoted.
    pub fn prose_lines(&self) -> usize {
        self.body
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('>'))
            .count()
    }

    /// The diff's text, if it was made.
    pub fn diff_text(&self) -> Option<String> {
        match &self.diff {
            Some(Diff::Made { edits, .. }) => Some(edits.iter().map(Edit::diff).collect()),
            _ => None,
        }
    }
}

/// Paragraphs, each wrapped to [`PROSE`] columns, separated by blank
/// lines; a paragraph starting with two spaces is kept as it is
/// (a table), one starting with `> ` is a quote.
pub fn prose(paragraphs: &[String]) -> String {
    let mut out = String::new();
    for (i, p) in paragraphs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if p.starts_with("  ") || p.starts_with('>') {
            out.push_str(p.trim_end_matches('\n'));
            out.push('\n');
            continue;
        }
        for l in words(p, PROSE) {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}

/// `text` wrapped greedily at spaces to `width` columns, as a mail client
/// fills a paragraph.
pub fn words(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `Signed-off-by:` of `ctx`, or the line to fill in.
pub fn signed_off_by(ctx: &Ctx) -> String {
    format!(
        "Signed-off-by: {}",
        ctx.signed_off_by
            .as_deref()
            .unwrap_or("Your Name <you@example.org>")
    )
}

/// The mail of finding `f`.
pub fn for_finding(f: &Finding, ctx: &Ctx) -> Result<Mail, String> {
    match f.id {
        "c12-lost-flush" => c12::mail(f, ctx),
        "death-lost-page" => death::mail(f, ctx),
        "c1-bound" => comment::mail(f, ctx),
        _ => notes::mail(f, ctx),
    }
}

/// Write one mail per finding into `dir` (`ID.txt`).
pub fn write_all(findings: &[Finding], dir: &Path, ctx: &Ctx) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for f in findings {
        let text = for_finding(f, ctx)?.render();
        let path = dir.join(format!("{}.txt", f.id));
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// The diff of `series` made by `make` from the tree `ctx` points at (or
/// [`crate::publish::kdiff::Tree::find`] finds); [`Diff::Missing`] when
/// there is no tree, an error when the tree does not have what `make`
/// looks for.
pub fn diff_from(
    ctx: &Ctx,
    series: &Series,
    make: impl Fn(&crate::publish::kdiff::Tree) -> Result<Vec<Edit>, String>,
) -> Result<Diff, String> {
    match crate::publish::kdiff::Tree::find(ctx.source.as_deref(), series) {
        Ok(tree) => Ok(Diff::Made {
            release: tree.release.clone(),
            edits: make(&tree)
                .map_err(|e| format!("{} ({}): {e}", tree.root.display(), tree.release))?,
        }),
        Err(why) => Ok(Diff::Missing {
            series: *series,
            why,
        }),
    }
}
