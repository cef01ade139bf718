//! Every output the docs quote from `flushcheck` is compared with what the
//! binary prints now, so a quoted trace, table or figure cannot drift from
//! the code.
//!
//! Convention (README.md and docs/*.md): a quote is a block fenced
//! ```` ```text ```` whose line right before is a marker naming the exact
//! command that prints it:
//!
//! ```text
//! <!-- output: flushcheck ARGS -->
//! ```
//!
//! The test runs `flushcheck ARGS` (arguments split at whitespace, no shell
//! quoting, from the repository root), requires exit code 0 or 1 (2 is bad
//! input, so a stale command fails), and requires every non-blank line of
//! the quote to appear in the output (standard output, then standard
//! error), in order; output lines between them may be left out of the
//! quote. Lines are compared after three normalisations, applied to both
//! sides:
//!
//! - runs of white space are one space, and leading and trailing space is
//!   dropped (a column may be narrowed in a quote);
//! - a decimal number (digits, one point, digits, not inside a word such
//!   as `v6.0` and not a dotted version such as 6.8.0) is `#`: these are
//!   the seconds, rates and ratios that vary from run to run, while
//!   integers (executions, schedules, states, counts, pages, steps) are
//!   deterministic for the seeded and exhaustive searches and are compared
//!   exactly;
//! - `...` in a quoted line matches any text, and a quoted line that is
//!   only `...` stands for any number of lines: the quote elides there what
//!   varies between runs (counts of the std backend, which runs on real
//!   threads) or what it shortens.
//!
//! A command too slow for this test is marked instead, with its cost and
//! why it is quoted anyway, and is not run:
//!
//! ```text
//! <!-- output (not checked: 5 min, the default run): flushcheck ARGS -->
//! ```
//!
//! These are the project's snapshot tests, with the docs as the snapshots:
//! a reader sees the output the test pins. insta or trycmd (considered for
//! issue 42) would keep a second copy of each output in snapshot files and
//! need filters for what varies between runs (times, the std backend's
//! counts), which the normalisations above are.
//!
//! Quoted commands must be cheap: together they run in well under a
//! minute on two cores. Each command's time is printed (run with
//! `--nocapture` to see it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One marker and the quote below it.
#[derive(Debug, Clone, PartialEq)]
struct Quote {
    /// The file, relative to the repository root.
    file: String,
    /// 1-based line of the marker.
    line: usize,
    /// The arguments after `flushcheck`.
    args: String,
    /// `Some(reason)` for a marker that is not checked.
    unchecked: Option<String>,
    /// The quoted block's lines.
    body: Vec<String>,
}

const MARK: &str = "<!-- output";

/// The markers of one markdown file and their quotes. A malformed marker
/// (no `flushcheck`, no `-->`, no ```` ```text ```` block right after it)
/// is an error naming its line.
fn quotes(file: &str, md: &str) -> Result<Vec<Quote>, String> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if !t.starts_with(MARK) {
            i += 1;
            continue;
        }
        let at = format!("{file}:{}", i + 1);
        let inner = t
            .strip_prefix(MARK)
            .and_then(|r| r.strip_suffix("-->"))
            .ok_or_else(|| format!("{at}: a marker is one line ending in -->"))?
            .trim();
        let (unchecked, rest) = if let Some(r) = inner.strip_prefix("(not checked:") {
            let (reason, rest) = r
                .split_once(')')
                .ok_or_else(|| format!("{at}: `(not checked: REASON)` is not closed"))?;
            (Some(reason.trim().to_string()), rest.trim())
        } else {
            (None, inner)
        };
        let args = rest
            .strip_prefix(':')
            .map(str::trim)
            .and_then(|r| r.strip_prefix("flushcheck"))
            .ok_or_else(|| format!("{at}: expected `: flushcheck ARGS` in the marker"))?
            .trim()
            .to_string();
        if unchecked.as_deref().is_some_and(str::is_empty) {
            return Err(format!("{at}: say why the quote is not checked"));
        }
        if lines.get(i + 1).map(|l| l.trim()) != Some("```text") {
            return Err(format!(
                "{at}: the marker must be followed at once by a ```text block"
            ));
        }
        let mut body = Vec::new();
        let mut j = i + 2;
        while j < lines.len() && lines[j].trim() != "```" {
            body.push(lines[j].to_string());
            j += 1;
        }
        if j == lines.len() {
            return Err(format!("{at}: the quoted block is not closed"));
        }
        out.push(Quote {
            file: file.to_string(),
            line: i + 1,
            args,
            unchecked,
            body,
        });
        i = j + 1;
    }
    Ok(out)
}

/// White space collapsed and standalone decimal numbers replaced by `#`.
fn normalise(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let s = words.join(" ");
    let b: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let starts_word = i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '.');
        if b[i].is_ascii_digit() && starts_word {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == '.') {
                j += 1;
            }
            let run: String = b[i..j].iter().collect();
            let run = run.trim_end_matches('.');
            let end = i + run.chars().count();
            if run.matches('.').count() == 1 {
                out.push('#');
            } else {
                out.push_str(run);
            }
            i = end;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Whether the normalised output line `have` matches the normalised quoted
/// line `want`, where `...` in `want` matches any text.
fn matches(want: &str, have: &str) -> bool {
    let parts: Vec<&str> = want.split("...").collect();
    if parts.len() == 1 {
        return want == have;
    }
    let (first, last) = (parts[0].trim_end(), parts[parts.len() - 1].trim_start());
    let Some(mut rest) = have.strip_prefix(first) else {
        return false;
    };
    for mid in &parts[1..parts.len() - 1] {
        let mid = mid.trim();
        match rest.find(mid) {
            Some(k) => rest = &rest[k + mid.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The first quoted line not found in `output`, in order; `None` when the
/// whole quote is there.
fn missing(body: &[String], output: &str) -> Option<String> {
    let have: Vec<String> = output.lines().map(normalise).collect();
    let mut at = 0;
    for line in body {
        let want = normalise(line);
        if want.is_empty() || want == "..." {
            continue;
        }
        match have[at..].iter().position(|h| matches(&want, h)) {
            Some(k) => at += k + 1,
            None => return Some(line.clone()),
        }
    }
    None
}

/// README.md and docs/*.md, relative to the repository root.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.insert(0, root.join("README.md"));
    files
}

fn all_quotes(root: &Path) -> Vec<Quote> {
    let mut out = Vec::new();
    for path in documents(root) {
        let md = std::fs::read_to_string(&path).expect("readable");
        let name = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        out.extend(quotes(&name, &md).unwrap_or_else(|e| panic!("{e}")));
    }
    out
}

#[test]
fn quoted_outputs_are_what_flushcheck_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = all_quotes(root);
    let checked: Vec<&Quote> = all.iter().filter(|q| q.unchecked.is_none()).collect();
    assert!(
        checked.len() >= 10,
        "expected the docs to quote at least 10 checked outputs, found {}",
        checked.len()
    );
    let mut runs: HashMap<&str, (i32, String)> = HashMap::new();
    let mut failures = Vec::new();
    for q in checked {
        let (code, output) = runs.entry(q.args.as_str()).or_insert_with(|| {
            let start = Instant::now();
            let out = crate::common::flushcheck_once(&q.args);
            eprintln!(
                "{:5.1} s  {}:{}: flushcheck {}",
                start.elapsed().as_secs_f64(),
                q.file,
                q.line,
                q.args
            );
            (out.code, format!("{}\n{}", out.stdout, out.stderr))
        });
        if !matches!(*code, 0 | 1) {
            failures.push(format!(
                "{}:{}: `flushcheck {}` exited {code}\n{output}",
                q.file, q.line, q.args
            ));
        } else if let Some(line) = missing(&q.body, output) {
            failures.push(format!(
                "{}:{}: `flushcheck {}` no longer prints (in this order):\n  {line}\n--- it printed:\n{output}",
                q.file, q.line, q.args
            ));
        }
    }
    for q in all.iter().filter(|q| q.unchecked.is_some()) {
        eprintln!(
            "  not checked  {}:{}: flushcheck {} ({})",
            q.file,
            q.line,
            q.args,
            q.unchecked.as_deref().unwrap_or_default()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_marker_parser_reads_markers_and_refuses_malformed_ones() {
    let md = "text\n<!-- output: flushcheck --entry pair -->\n```text\na  b\n\nc\n```\n\
              <!-- output (not checked: 5 min, the default run): flushcheck -->\n```text\nx\n```\n";
    let q = quotes("f.md", md).expect("well formed");
    assert_eq!(q.len(), 2);
    assert_eq!((q[0].line, q[0].args.as_str()), (2, "--entry pair"));
    assert_eq!(q[0].body, ["a  b", "", "c"]);
    assert_eq!(q[0].unchecked, None);
    assert_eq!(q[1].args, "");
    assert_eq!(q[1].unchecked.as_deref(), Some("5 min, the default run"));
    for bad in [
        "<!-- output: flushcheck x\n```text\n```\n",
        "<!-- output: x -->\n```text\n```\n",
        "<!-- output: flushcheck x -->\n\n```text\n```\n",
        "<!-- output: flushcheck x -->\n```\n```\n",
        "<!-- output: flushcheck x -->\n```text\nnot closed\n",
        "<!-- output (not checked: ): flushcheck x -->\n```text\n```\n",
    ] {
        assert!(quotes("f.md", bad).is_err(), "accepted: {bad:?}");
    }
}

#[test]
fn lines_compare_after_normalising_time_and_space() {
    assert_eq!(normalise("  22 cells in 1.8 s:  x "), "22 cells in # s: x");
    assert_eq!(normalise("v6.0 and v6.17 stay"), "v6.0 and v6.17 stay");
    assert_eq!(normalise("kernel 6.8.0 stays"), "kernel 6.8.0 stays");
    assert_eq!(normalise("(0.81) 5944 8,445"), "(#) 5944 8,445");
    assert_eq!(normalise("ratio 0.608. 4.9ms"), "ratio #. #ms");
    assert!(matches("a ... d", "a b c d"));
    assert!(matches("a ...", "a"));
    assert!(matches("... note (r...", "x note (rest"));
    assert!(!matches("a ... d", "a b c"));
    assert!(!matches("v6.0 holds", "v5.19 holds"));
    let out = "h\nv6.0  holds   12\nstd   holds  77\nsum 1.5 s\n";
    let body = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    assert_eq!(missing(&body("v6.0 holds 12\n...\nsum 9.9 s"), out), None);
    assert_eq!(missing(&body("std holds ...\nh"), out), Some("h".into()));
    assert_eq!(
        missing(&body("v6.0 holds 13"), out),
        Some("v6.0 holds 13".into())
    );
}
