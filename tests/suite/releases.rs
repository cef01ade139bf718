//! Versions from one source: every finding's release fields come from
//! model/protocol/findings/releases.rs; every release the docs give for a
//! finding, marked `<!-- releases: ID FIELD -->` just before it, equals that
//! data, and no finding id stands beside a range without such a mark; no
//! release text says `[I]` where the data is `[V]`; the table of
//! docs/releases.md is the data's; every finding still open is read up to
//! the newest source (Debian's linux-source-7.3, v7.3.4) and every finding
//! says, from the sources, whether v7.2 and v7.3 changed its code; and no
//! sentence about the early break gives it a first release other than the
//! data's without a mark.

use std::fs;
use std::path::PathBuf;

use memcg_flush_model::protocol::findings::all;
use memcg_flush_model::protocol::findings::releases::{
    self, Releases, Tag, C12, SRC_7_2, SRC_7_3, TREES,
};

const ANCHOR: &str = "<!-- releases: ";
const BEGIN: &str = "<!-- begin: generated from model/protocol/findings/releases.rs -->";
const END: &str = "<!-- end: generated -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, CITATION.cff and docs/*.md: (path from the root, text).
fn docs() -> Vec<(String, String)> {
    let mut paths = vec!["README.md".to_string(), "CITATION.cff".to_string()];
    let mut md: Vec<String> = fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    md.sort();
    paths.extend(md);
    paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(root().join(&p)).unwrap_or_else(|e| panic!("{p}: {e}"));
            (p, text)
        })
        .collect()
}

/// The release at the start of `s` (`v6.16`, `v7.1.5`).
fn version(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    if b.first() != Some(&b'v') {
        return None;
    }
    let (mut i, mut dots, mut digit) = (1, 0, false);
    while i < b.len() {
        if b[i].is_ascii_digit() {
            digit = true;
        } else if b[i] == b'.' && digit && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            dots += 1;
            digit = false;
        } else {
            break;
        }
        i += 1;
    }
    (dots >= 1 && digit).then(|| &s[..i])
}

/// The release text at the start of `s`: a release, or a range `vA-vB`
/// (also written `vA to vB`), as `vA-vB`.
fn release_text(s: &str) -> Option<String> {
    let a = version(s)?;
    let rest = &s[a.len()..];
    for sep in ["-", " to ", "–"] {
        if let Some(b) = rest.strip_prefix(sep).and_then(version) {
            return Some(format!("{a}-{b}"));
        }
    }
    Some(a.to_string())
}

/// Whether `line` holds a range `vA-vB` or `vA to vB`.
fn has_range(line: &str) -> bool {
    line.char_indices()
        .filter(|&(_, c)| c == 'v')
        .any(|(i, _)| release_text(&line[i..]).is_some_and(|r| r.contains('-')))
}

/// The value of `field` in `r`, as the docs write it.
fn field(r: &Releases, field: &str) -> Result<String, String> {
    match field {
        "range" => Ok(r.range()),
        "first" => Ok(r.first.to_string()),
        "last" => Ok(r.last.to_string()),
        "read" => Ok(r.last_read.to_string()),
        "closed" => r
            .closed
            .map(str::to_string)
            .ok_or_else(|| "no closing release in the data".to_string()),
        other => Err(format!(
            "unknown field {other:?}: expected range, first, last, read or closed"
        )),
    }
}

/// Every mark: (file, line number, finding id, field, the text after it).
fn anchors() -> Vec<(String, usize, String, String, String)> {
    let mut out = Vec::new();
    for (file, text) in docs() {
        let mut fenced = false;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                fenced = !fenced;
            }
            if fenced && line.contains(ANCHOR) {
                // Inside a code block the mark would show as text.
                out.push((
                    file.clone(),
                    n + 1,
                    String::new(),
                    "fenced".into(),
                    line.into(),
                ));
                continue;
            }
            let mut rest = line;
            while let Some(at) = rest.find(ANCHOR) {
                let after = &rest[at + ANCHOR.len()..];
                // A mark quoted as code (docs/releases.md shows its form) is no mark.
                if rest[..at].ends_with('`') {
                    rest = after;
                    continue;
                }
                let Some(close) = after.find("-->") else {
                    out.push((
                        file.clone(),
                        n + 1,
                        String::new(),
                        String::new(),
                        after.into(),
                    ));
                    break;
                };
                let mut words = after[..close].split_whitespace();
                let id = words.next().unwrap_or("").to_string();
                let f = words.next().unwrap_or("").to_string();
                let tail = after[close + 3..].to_string();
                out.push((file.clone(), n + 1, id, f, tail));
                rest = &after[close + 3..];
            }
        }
    }
    out
}

#[test]
fn every_release_the_docs_mark_equals_the_finding_data() {
    let marks = anchors();
    assert!(
        marks.len() >= 20,
        "only {} marks found in README.md and docs/",
        marks.len()
    );
    let mut wrong = Vec::new();
    for (file, line, id, f, tail) in &marks {
        if f == "fenced" {
            wrong.push(format!(
                "{file}:{line}: a releases mark inside a code block"
            ));
            continue;
        }
        let Some(r) = releases::of(id) else {
            wrong.push(format!(
                "{file}:{line}: unknown finding {id:?} in a releases mark"
            ));
            continue;
        };
        let want = match field(r, f) {
            Ok(w) => w,
            Err(e) => {
                wrong.push(format!("{file}:{line}: {id} {f}: {e}"));
                continue;
            }
        };
        let want = if f == "range" {
            want
        } else {
            want.split('-').next().unwrap_or("").to_string()
        };
        let got = release_text(tail.trim_start_matches(['*', '`'])).map(|g| {
            if f == "range" {
                g
            } else {
                g.split('-').next().unwrap_or("").into()
            }
        });
        match got {
            Some(g) if g == want => {}
            Some(g) => wrong.push(format!(
                "{file}:{line}: {id} {f}: the doc says {g}, the data {want}"
            )),
            None => wrong.push(format!(
                "{file}:{line}: {id} {f}: no release after the mark (the data: {want})"
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_finding_stands_beside_a_range_without_a_mark() {
    let ids: Vec<&str> = all().iter().map(|f| f.id).collect();
    let mut bare = Vec::new();
    for (file, text) in docs() {
        if file == "docs/releases.md" {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            let named = ids.iter().find(|id| line.contains(**id));
            if let Some(id) = named {
                if has_range(line) && !line.contains(ANCHOR) {
                    bare.push(format!(
                        "{file}:{}: {id} beside a range without a mark",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(bare.is_empty(), "{}", bare.join("\n"));
}

/// `v7.1.5` as numbers, for ordering.
fn numbers(v: &str) -> Vec<u32> {
    let mut n: Vec<u32> = v
        .trim_start_matches('v')
        .split('.')
        .map(|x| x.parse().unwrap_or_else(|_| panic!("release {v:?}")))
        .collect();
    n.resize(3, 0);
    n
}

#[test]
fn every_finding_takes_its_releases_from_the_data() {
    for f in all() {
        let r = releases::of(f.id).unwrap_or_else(|| panic!("{}: no releases data", f.id));
        let id = f.id;
        assert_eq!(f.first, r.first, "{id}: first");
        assert_eq!(f.last, r.last, "{id}: last");
        assert_eq!(f.affected, r.affected, "{id}: affected");
        assert_eq!(f.introduced, r.introduced_text, "{id}: introduced");
        assert_eq!(f.closed_by, r.closed_by, "{id}: closed_by");
        if r.first == "none" {
            assert!(
                r.introduced.is_none() && r.closed.is_none(),
                "{id}: unmerged"
            );
            continue;
        }
        let range = format!("{} to {}", r.first, r.last);
        assert!(r.affected.starts_with(&range), "{id}: {:?}", r.affected);
        let c = r.introduced.expect("introducing commit");
        assert_eq!(c.release, r.first, "{id}: the introducing commit's release");
        assert_eq!(c.id.len(), 12, "{id}: {} is 12 hex digits", c.id);
        assert!(r.introduced_text.starts_with(c.id), "{id}");
        assert!(r.introduced_text.contains(c.release), "{id}");
        assert_eq!(
            r.fixes_tag,
            Some(format!("{} (\"{}\")", c.id, c.subject).as_str()),
            "{id}: the Fixes: tag"
        );
        assert!(
            numbers(r.first) <= numbers(r.last),
            "{id}: first after last"
        );
        assert!(
            numbers(r.last_read) <= numbers(r.last),
            "{id}: read after last"
        );
        assert_eq!(
            r.closed.is_some(),
            r.closed_fact.is_some(),
            "{id}: closed fact"
        );
        assert_eq!(r.closed.is_some(), r.closed_by.is_some(), "{id}: closed_by");
        if let (Some(closed), Some(by)) = (r.closed, r.closed_by) {
            assert!(
                numbers(r.last) < numbers(closed),
                "{id}: closed before last"
            );
            assert!(by.starts_with(&format!("{closed}: ")), "{id}: {by:?}");
            if let Some(k) = r.closing {
                assert_eq!(k.release, closed, "{id}: the closing commit's release");
                assert!(by.contains(k.id), "{id}: {by:?} names {}", k.id);
            }
        }
    }
}

#[test]
fn no_release_text_says_inferred_where_the_data_is_verified() {
    let trees: Vec<&str> = TREES.iter().map(|t| t.1).collect();
    // Debian's source packages: named "linux-source-X (Debian VERSION)".
    let sources: Vec<&str> = trees
        .iter()
        .copied()
        .filter(|t| t.starts_with("linux-source-"))
        .collect();
    for f in all() {
        let r = releases::of(f.id).expect("releases");
        let inferred = |t: Tag| t == Tag::Inferred;
        let texts = [
            (
                "affected",
                f.affected,
                inferred(r.first_fact.tag) || inferred(r.last_fact.tag),
            ),
            ("introduced", f.introduced, inferred(r.first_fact.tag)),
            (
                "closed_by",
                f.closed_by.unwrap_or(""),
                r.closed_fact.is_some_and(|c| inferred(c.tag)),
            ),
        ];
        for (what, text, may) in texts {
            assert!(
                may || !text.contains("[I"),
                "{}: {what} says [I] where the data is verified: {text:?}",
                f.id
            );
        }
        for (what, fact) in r.facts() {
            assert!(!fact.source.is_empty(), "{}: {what} has no source", f.id);
            match fact.tag {
                Tag::Verified => {
                    assert!(
                        !fact.source.contains("[I]"),
                        "{}: {what} is [V] but its source says [I]",
                        f.id
                    );
                    assert!(
                        fact.source.contains('@')
                            || fact.source.contains("lore ")
                            || sources.iter().any(|p| fact.source.contains(p)),
                        "{}: {what} is [V] but names no tree or mail: {}",
                        f.id,
                        fact.source
                    );
                }
                _ => assert!(
                    fact.source.contains("no "),
                    "{}: {what} is {} but does not say what is missing: {}",
                    f.id,
                    fact.tag.mark(),
                    fact.source
                ),
            }
            // Every Debian source package cited is one of the trees read,
            // named with its version as TREES names it.
            for (at, _) in fact.source.match_indices("linux-source-") {
                let cited = &fact.source[at..];
                assert!(
                    sources.iter().any(|p| cited.starts_with(p)),
                    "{}: {what} cites {:?}, which TREES does not list",
                    f.id,
                    &cited[..cited.len().min(44)]
                );
            }
            // Every tree cited is one of the trees read.
            for (at, _) in fact.source.match_indices('@') {
                let start = fact.source[..at]
                    .rfind(|c: char| c.is_whitespace() || c == '(')
                    .map_or(0, |s| s + 1);
                let tree = &fact.source[start..(at + 13).min(fact.source.len())];
                if !fact.source[start..at].contains('/') {
                    continue; // a Message-ID, not a tree
                }
                assert!(
                    trees.contains(&tree),
                    "{}: {what} cites {tree}, which TREES does not list",
                    f.id
                );
            }
        }
    }
}

/// docs/releases.md's table and evidence, from the data.
fn render() -> String {
    let mut groups: Vec<(Vec<&str>, &Releases)> = Vec::new();
    for f in all() {
        let r = releases::of(f.id).expect("releases");
        match groups.iter_mut().find(|(_, g)| std::ptr::eq(*g, r)) {
            Some((ids, _)) => ids.push(f.id),
            None => groups.push((vec![f.id], r)),
        }
    }
    let name = |ids: &[&str]| {
        ids.iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::from("## The trees read\n\n| release | tree |\n|---|---|\n");
    for (release, tree) in TREES {
        out.push_str(&format!("| {release} | {tree} |\n"));
    }
    out.push_str(
        "\n## The data\n\n\
         | finding | first | last | newest read | closed | introduced by | ended by |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (ids, r) in &groups {
        let closed = r
            .closed
            .zip(r.closed_fact)
            .map_or("-".to_string(), |(c, f)| format!("{c} {}", f.tag.mark()));
        out.push_str(&format!(
            "| {} | {} {} | {} {} | {} | {} | {} | {} |\n",
            name(ids),
            r.first,
            r.first_fact.tag.mark(),
            r.last,
            r.last_fact.tag.mark(),
            r.last_read,
            closed,
            r.introduced_text,
            r.closed_by.unwrap_or("-"),
        ));
    }
    for (ids, r) in &groups {
        out.push_str(&format!("\n### {}\n\n", name(ids)));
        for (what, fact) in r.facts() {
            out.push_str(&format!("- {what}, {}: {}\n", fact.tag.mark(), fact.source));
        }
    }
    out
}

#[test]
fn the_releases_table_is_the_data() {
    let path = root().join("docs/releases.md");
    let text = fs::read_to_string(&path).expect("docs/releases.md");
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        panic!("docs/releases.md: no {BEGIN} ... {END} block");
    };
    let have = text[b + BEGIN.len()..e].trim();
    let want = render();
    if have != want.trim() {
        let out = std::env::temp_dir().join("releases.md.expected");
        let _ = fs::write(&out, &want);
        panic!(
            "docs/releases.md's generated block differs from the data; the expected \
             block is in {}",
            out.display()
        );
    }
}

#[test]
fn the_release_parser_reads_ranges_and_releases() {
    assert_eq!(
        release_text("v5.13-v6.15 lose").as_deref(),
        Some("v5.13-v6.15")
    );
    assert_eq!(
        release_text("v6.16 to v7.1.5 (").as_deref(),
        Some("v6.16-v7.1.5")
    );
    assert_eq!(release_text("v6.16.").as_deref(), Some("v6.16"));
    assert_eq!(release_text("v6 and"), None);
    assert!(has_range("a finding for v6.0-v6.14 (`v6.8-life`)"));
    assert!(!has_range("`v6.8-life` on v6.8.0"));
}

/// The newest release the project reads: the last entry of TREES.
fn newest_tree() -> (&'static str, &'static str) {
    *TREES.last().expect("TREES")
}

#[test]
fn every_open_finding_is_read_up_to_the_newest_source() {
    let (newest, tree) = newest_tree();
    assert_eq!((newest, tree), ("v7.3.4", SRC_7_3), "the newest tree read");
    for f in all() {
        let r = releases::of(f.id).expect("releases");
        let id = f.id;
        // Whether v7.2 and v7.3 changed the code is read, not assumed.
        assert_eq!(r.newest.tag, Tag::Verified, "{id}: v7.2/v7.3 unread");
        for src in [SRC_7_2, SRC_7_3] {
            assert!(
                r.newest.source.contains(&format!("{src}:")),
                "{id}: the v7.2/v7.3 fact cites no path in {src}: {}",
                r.newest.source
            );
        }
        if r.first == "none" {
            // Unmerged: read in the newest tree too, and said so.
            assert_eq!(r.last_read, newest, "{id}: newest read");
            assert!(r.affected.contains(newest), "{id}: {:?}", r.affected);
            continue;
        }
        if r.closed.is_some() {
            // Ended upstream: the last affected release is older.
            assert!(
                numbers(r.last) < numbers(newest),
                "{id}: closed, last {}",
                r.last
            );
            continue;
        }
        assert_eq!(r.last, newest, "{id}: last affected release");
        assert_eq!(r.last_read, newest, "{id}: newest read");
        assert!(
            r.last_fact.source.contains(&format!("{tree}:")),
            "{id}: the last release's fact cites no path:line in {tree}: {}",
            r.last_fact.source
        );
        assert!(
            r.affected.starts_with(&format!("{} to {newest}", r.first)),
            "{id}"
        );
    }
    // The early break: v6.16 to v7.3.4, read at its line in 7.3.4.
    assert_eq!(C12.range(), "v6.16-v7.3.4");
    assert!(C12
        .last_fact
        .source
        .contains("linux-source-7.3 (Debian 7.3.4-1~bpo13+1):mm/memcontrol.c:745-751"));
}

/// The release a phrase at the end of `before` gives as a start ("from",
/// "since", "first in", "in by"), if `before` ends with one.
fn start_phrase(before: &str) -> bool {
    let b = before.trim_end_matches(['`', '*', '(']).to_lowercase();
    ["from", "since", "first in", "in by", "introduced in"]
        .iter()
        .any(|p| b.ends_with(&format!("{p} ")))
}

/// Lines that give the early break a first release: (file, line, release).
fn break_starts() -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    for (file, text) in docs() {
        if file == "docs/releases.md" {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            // Clause by clause: "the break is in from v6.16; `READ_ONCE` from
            // v6.12" gives the break one start, not two.
            for clause in line.split([';']).flat_map(|c| c.split(". ")) {
                let about = ["break", "C12", "c12-", "ancestor walk"]
                    .iter()
                    .any(|k| clause.contains(k));
                if !about {
                    continue;
                }
                for (i, _) in clause.char_indices().filter(|&(_, c)| c == 'v') {
                    let Some(v) = version(&clause[i..]) else {
                        continue;
                    };
                    let before = &clause[..i];
                    if before.ends_with("-->") || !start_phrase(before) {
                        continue;
                    }
                    out.push((file.clone(), n + 1, v.to_string()));
                }
            }
        }
    }
    out
}

#[test]
fn no_sentence_gives_the_break_another_first_release() {
    let wrong: Vec<String> = break_starts()
        .into_iter()
        .filter(|(_, _, v)| *v != C12.first)
        .map(|(f, n, v)| {
            format!(
                "{f}:{n}: the break from {v}, the data's first release is {} (mark it \
                 <!-- releases: c12 first -->)",
                C12.first
            )
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_break_start_check_reads_the_stray_forms() {
    assert!(start_phrase("the break is in by "));
    assert!(start_phrase("From "));
    assert!(start_phrase("(the break is in from `"));
    assert!(!start_phrase("a model of "));
}
