//! The words of a finding's mail: verdicts, configurations and checks said
//! in the kernel's terms, and the model's own names taken out of the
//! searches' messages, so that a report reads as a bug report to linux-mm
//! rather than as the tool's output.

use crate::config::Config;
use crate::drive::findings::Check;
use crate::observe::listing::wrap_outside_parens;
use crate::observe::Property;
use crate::protocol::findings::Expected;
use crate::protocol::Variant;

/// Text width of a report's paragraphs (two columns of indent: 78).
pub const TEXT: usize = 76;

/// `text` as lines of at most `width`, broken at spaces outside
/// parentheses.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    wrap_outside_parens(text, width)
}

/// A search's verdict on a finding, in words.
pub fn verdict_words(c: &Check) -> &'static str {
    match c.verdict() {
        "shows" => "shown",
        "holds*" => "not shown in any interleaving",
        "holds" => "not shown within the search's preemption bound",
        _ => "not decided (the search was cut short)",
    }
}

/// A configuration in a few words: CPUs, batch, updates, tree, readers,
/// the periodic flush.
pub fn cfg_words(cfg: &Config) -> String {
    let vals: Vec<String> = cfg.vals.iter().map(|v| v.to_string()).collect();
    let mut s = format!(
        "{} CPU{}, batch {}, {} update{} per CPU of {} page{}",
        cfg.cpus,
        if cfg.cpus == 1 { "" } else { "s" },
        cfg.batch,
        cfg.updates,
        if cfg.updates == 1 { "" } else { "s" },
        vals.join("/"),
        if vals.len() == 1 && cfg.vals[0] == 1 {
            ""
        } else {
            "s"
        }
    );
    if !cfg.tree.is_empty() {
        let n = cfg.tree.len();
        s.push_str(&format!(
            ", {n} memcg{} below the root",
            if n == 1 { "" } else { "s" }
        ));
    }
    if cfg.death.is_some() {
        s.push_str(", the memcg dying");
    }
    if cfg.readers > 0 {
        s.push_str(&format!(
            ", {} reader{}",
            cfg.readers,
            if cfg.readers == 1 { "" } else { "s" }
        ));
    }
    s.push_str(if cfg.periodic {
        ", periodic flush on"
    } else {
        ", periodic flush off"
    });
    s
}

/// One check of a fix candidate in one line.
pub fn check_words(c: &Check) -> String {
    format!(
        "{} on {} ({} executions{}){}",
        verdict_words(c),
        cfg_words(&c.cfg),
        c.executions,
        if c.exhaustive {
            ", every interleaving"
        } else {
            ""
        },
        if c.broken.is_empty() {
            String::new()
        } else {
            let b: Vec<&str> = c.broken.iter().map(|p| p.def().claim).collect();
            format!("; but it breaks: {}", b.join("; "))
        },
    )
}

/// A candidate's checks in a sentence.
pub fn candidate_words(expected: Expected, checks: &[Check]) -> &'static str {
    let holds = checks
        .iter()
        .all(|c| !c.shows && c.finished && c.broken.is_empty());
    match (holds, checks.iter().any(|c| c.shows), expected) {
        (true, _, _) => "removes the loss on every configuration checked",
        (false, true, Expected::Refuted) => "does not remove it (compared, not proposed)",
        (false, true, Expected::Fixes) => "FAILS: the loss still shows",
        (false, false, _) => "undecided, or breaks something else",
    }
}

/// `text` with the model's own names replaced by what they stand for: a
/// property's name by nothing (the sentence says what failed), a
/// no-skip form's gate by the counting it stands for, variant names by
/// the release they model.
pub fn scrub(text: &str, registry: &[Variant]) -> String {
    let mut s = text.to_string();
    // Longest names first: `conservation` is the tail of
    // `eventual_conservation`.
    let mut props: Vec<Property> = Property::all().collect();
    props.sort_by_key(|p| std::cmp::Reverse(p.name().len()));
    for p in props {
        s = s.replace(&format!("{}: ", p.name()), "");
    }
    // Longest names first, so that `v6.17-no-break` goes before `v6.17`.
    let mut names: Vec<&Variant> = registry.iter().collect();
    names.sort_by_key(|v| std::cmp::Reverse(v.name.len()));
    for v in names {
        let gate = format!("{}'s gate over the same history", v.name);
        if s.contains(&gate) {
            s = s.replace(
                &gate,
                "the same gate, had every update been counted at every level,",
            );
        }
    }
    s.replace("main of memcg", "the final read of memcg")
}

/// Words a report must not use: the model's names for its own things.
pub fn internal_words(text: &str, finding_ids: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '*' || c == '-' || c == '_')) {
        let numbered = |p: char| {
            word.len() >= 2
                && word.len() <= 3
                && word.starts_with(p)
                && word[1..].chars().all(|c| c.is_ascii_digit())
        };
        // C11 is the language's memory model, not a claim.
        if numbered('C') && word != "C11"
            || numbered('B')
            || word.eq_ignore_ascii_case("twin")
            || word.eq_ignore_ascii_case("twins")
            || word == "holds*"
            || word == "violated*"
            || finding_ids.contains(&word)
            || Property::all().any(|p| p.name() == word)
        {
            bad.push(word.to_string());
        }
    }
    bad
}
