//! Every finding's report (`flushcheck report --finding ID`) in a form a
//! maintainer would not bounce: a one-line `Subject:` with the usual
//! prefix, `To:` and `Cc:` from the MAINTAINERS entries, `Fixes:` where the
//! introducing commit is known, no line over 80 columns, no short
//! parenthesis or identifier broken across lines, none of the model's own
//! vocabulary (claim and bug numbers, "twin", finding identifiers, holds*,
//! property names) outside the command lines; and the trace as the
//! kernel's statements unless `--model-names` asks for the diagram.

use std::time::Duration;

use memcg_flush_model::cli::mail::{long_lines, mail_at, Depth};
use memcg_flush_model::cli::mail_text::internal_words;
use memcg_flush_model::cli::reply::THREAD_SUBJECT;
use memcg_flush_model::protocol::catalogue;
use memcg_flush_model::protocol::findings::{all, by_id, maintainers};

const BUDGET: Duration = Duration::from_secs(120);

/// The lines of a report that are prose: command blocks (`$ ` and their
/// `\` continuations) and litmus tests are code, judged by width only.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut in_cmd = false;
    let mut in_litmus = false;
    let mut in_exists = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("$ ") {
            in_cmd = line.ends_with('\\');
            continue;
        }
        if in_cmd {
            in_cmd = line.ends_with('\\');
            continue;
        }
        if line.starts_with("C ") {
            in_litmus = true;
        }
        if in_litmus {
            // The exists clause may go on over lines; it ends at ')'.
            in_exists |= line.starts_with("exists");
            in_litmus = !(in_exists && line.trim_end().ends_with(')'));
            in_exists &= in_litmus;
            continue;
        }
        out.push((i + 1, line));
    }
    out
}

/// Parenthesised groups of at most `max` characters that a line break
/// splits, and lines that end just after an opening parenthesis.
fn broken_parens(lines: &[(usize, &str)], max: usize) -> Vec<String> {
    let mut bad = Vec::new();
    let mut depth = 0i32;
    let mut open: Option<(usize, String)> = None;
    for (n, line) in lines {
        if line.trim_end().ends_with('(') {
            bad.push(format!("line {n} ends with '(': {line:?}"));
        }
        for ch in line.chars() {
            match ch {
                '(' => {
                    if depth == 0 {
                        open = Some((*n, String::new()));
                    }
                    depth += 1;
                }
                ')' => depth = (depth - 1).max(0),
                _ => {}
            }
            if let Some((_, g)) = open.as_mut() {
                g.push(ch);
            }
            if depth == 0 {
                if let Some((start, g)) = open.take() {
                    if start != *n && g.chars().count() <= max {
                        bad.push(format!("line {start}: {g:?} split across lines"));
                    }
                }
            }
        }
        if let Some((_, g)) = open.as_mut() {
            g.push(' ');
        }
        // A blank line ends any parenthesis a paragraph left open.
        if line.trim().is_empty() {
            depth = 0;
            open = None;
        }
    }
    bad
}

#[test]
fn every_report_is_in_mail_form() {
    memcg_flush_model::explore::quiet_panics();
    let reg = catalogue::with_bounds();
    let ids: Vec<&str> = all().iter().map(|f| f.id).collect();
    let mut failures = Vec::new();
    for f in all() {
        let text = mail_at(&f, &reg, BUDGET, false, false, Depth::Form).expect("report");
        let id = f.id;
        let mut lines: Vec<&str> = text.lines().collect();
        let subject = lines[0];
        // A reply keeps the thread's subject, folded where it is too long;
        // a continuation is never blank.
        if subject.starts_with("Subject: Re: ") && lines[1].starts_with(' ') {
            assert_eq!(
                format!("{} {}", &subject[9..], lines[1].trim()),
                THREAD_SUBJECT,
                "{id}: the thread's subject"
            );
            lines.remove(1);
            while !lines[1].starts_with("To: ") && !lines[1].is_empty() {
                lines.remove(1);
            }
        } else if lines[1].starts_with(' ') {
            failures.push(format!("{id}: a folded subject: {:?}", lines[1]));
        }
        if ![
            "Subject: [BUG] ",
            "Subject: [RFC] ",
            "Subject: [PATCH",
            "Subject: Re: ",
        ]
        .iter()
        .any(|p| subject.starts_with(p))
        {
            failures.push(format!("{id}: subject without a prefix: {subject:?}"));
        }
        if !lines[1].starts_with("To: ") {
            failures.push(format!("{id}: line 2 is not To: but {:?}", lines[1]));
        }
        if !text.contains("\nCc: ") {
            failures.push(format!("{id}: no Cc:"));
        }
        match f.fixes_tag {
            Some(tag) => {
                if !text.contains(&format!("\nFixes: {tag}\n")) {
                    failures.push(format!("{id}: no Fixes: {tag}"));
                }
                let commit = tag.split(' ').next().unwrap_or("");
                if commit.len() != 12 || !f.introduced.contains(commit) {
                    failures.push(format!(
                        "{id}: Fixes: {commit} is not the introducing commit"
                    ));
                }
            }
            None => {
                if text.contains("\nFixes: ") {
                    failures.push(format!("{id}: a Fixes: line without a known commit"));
                }
            }
        }
        for (n, w) in long_lines(&text) {
            failures.push(format!("{id}: line {n} is {w} columns"));
        }
        let prose = prose(&text);
        for (n, line) in &prose {
            let words = internal_words(line, &ids);
            if !words.is_empty() {
                failures.push(format!("{id}: line {n} uses {words:?}: {line:?}"));
            }
        }
        for b in broken_parens(&prose, 60) {
            failures.push(format!("{id}: {b}"));
        }
        if f.witness.shown.backend().name() != "loom" && !text.contains("statement\n") {
            failures.push(format!("{id}: the trace is not the kernel's statements"));
        }
    }
    // The searches' panics were quiet; this one must not be.
    drop(std::panic::take_hook());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checker catches what it is for: the model's names, a split
/// parenthesis, a line ending in '('.
#[test]
fn the_form_checks_can_fail() {
    let ids = ["c1-bound"];
    assert_eq!(internal_words("as C12 says", &ids), vec!["C12"]);
    assert_eq!(internal_words("the twin flushes", &ids), vec!["twin"]);
    assert_eq!(internal_words("holds* on 2 CPUs", &ids), vec!["holds*"]);
    assert_eq!(internal_words("see c1-bound", &ids), vec!["c1-bound"]);
    assert_eq!(
        internal_words("no_lost_flush: main", &ids),
        vec!["no_lost_flush"]
    );
    assert!(internal_words("loom's C11 model, v6.17, 8d59d2214c23", &ids).is_empty());
    let split = [(1, "interrupts on (get_cpu()"), (2, "and more) here")];
    assert_eq!(broken_parens(&split, 60).len(), 1);
    let opened = [(1, "interrupts on ("), (2, "get_cpu())")];
    assert_eq!(broken_parens(&opened, 60).len(), 2);
    assert!(broken_parens(&[(1, "fine (whole) here")], 60).is_empty());
}

/// `To:` comes from the MAINTAINERS entries of the files a fix touches.
#[test]
fn recipients_follow_the_files() {
    let (to, cc, titles) = maintainers::recipients(&["mm/memcontrol.c"]);
    assert_eq!(
        titles,
        vec!["CONTROL GROUP - MEMORY RESOURCE CONTROLLER (MEMCG)"]
    );
    assert!(to.iter().any(|t| t.contains("shakeel.butt@linux.dev")));
    assert!(cc.iter().any(|c| c == "linux-mm@kvack.org"));
    let (to, _, titles) = maintainers::recipients(&["kernel/cgroup/rstat.c"]);
    assert_eq!(titles, vec!["CONTROL GROUP (CGROUP)"]);
    assert!(to.iter().any(|t| t.contains("tj@kernel.org")));
    let f = by_id("tree-sb-lost-update").expect("finding");
    assert!(f.files.iter().any(|p| p.starts_with("kernel/cgroup/")));
}

/// With `--model-names` the trace is the model's column diagram.
#[test]
fn model_names_give_the_diagram() {
    let reg = catalogue::with_bounds();
    let f = by_id("quiescent-read-zero").expect("finding");
    let kernel = mail_at(&f, &reg, BUDGET, false, false, Depth::Form).expect("report");
    let model = mail_at(&f, &reg, BUDGET, true, false, Depth::Form).expect("report");
    assert!(kernel.contains("atomic_read(&vmstats->stats_updates) = 65"));
    assert!(model.contains("atomic_read(thr.2)=65"), "{model}");
}

/// The per-memcg margin's report gives its witness one figure: every
/// "N pages missing" in it is the same N.
#[test]
fn c10_names_one_figure() {
    memcg_flush_model::explore::quiet_panics();
    let reg = catalogue::with_bounds();
    let f = by_id("c10-bound").expect("finding");
    let text = mail_at(&f, &reg, BUDGET, false, false, Depth::Form).expect("report");
    drop(std::panic::take_hook());
    let flat = text.split_whitespace().collect::<Vec<_>>();
    let figures: Vec<&str> = flat
        .windows(3)
        .filter(|w| w[1] == "pages" && w[2].starts_with("missing"))
        .map(|w| w[0])
        .collect();
    assert!(figures.len() >= 3, "{figures:?}");
    assert!(figures.iter().all(|n| *n == figures[0]), "{figures:?}");
}
