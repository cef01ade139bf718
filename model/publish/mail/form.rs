//! The checks every mail passes (tests/suite/mail_form.rs runs them):
//! its length, a diff where it proposes a change, `Fixes:` only on
//! patches, no `[RFC]`, `In-Reply-To:` on a reply, linux-mm among the
//! recipients of a memcg symptom, no line over [`super::WIDTH`] columns
//! outside the diff, none of the model's own words, and every kernel
//! function it names present in the release it speaks of
//! ([`super::names`]).

use super::{names, text::internal_words, Kind, Mail, WIDTH};

/// Every `name(` in `text`: an identifier right before a parenthesis
/// (functions and function-like macros).
pub fn functions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c != b'(' {
            continue;
        }
        let mut s = i;
        while s > 0 && (b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_') {
            s -= 1;
        }
        let name = &text[s..i];
        // `2)`-style list items and `(1)` are not calls; a name starts
        // with a letter or an underscore.
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// What is wrong with `m`'s form, one line each; `finding_ids` are the
/// identifiers the prose must not use.
pub fn problems(m: &Mail, finding_ids: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    let id = m.id;
    let text = m.render();
    let n = m.prose_lines();
    if n > m.limit {
        bad.push(format!("{id}: {n} lines of prose, more than {}", m.limit));
    }
    let patch = matches!(m.kind, Kind::Patch | Kind::StablePatch);
    if patch != m.diff.is_some() {
        bad.push(format!(
            "{id}: a {:?} {} a diff",
            m.kind,
            if patch { "without" } else { "with" }
        ));
    }
    let fixes = m.trailers.iter().any(|t| t.starts_with("Fixes:"));
    if fixes && !patch {
        bad.push(format!("{id}: Fixes: on a {:?}", m.kind));
    }
    if m.subject.contains("[RFC]") {
        bad.push(format!("{id}: [RFC] in the subject"));
    }
    match m.kind {
        Kind::Reply => {
            if m.in_reply_to.is_none() || !m.subject.starts_with("Re: ") {
                bad.push(format!("{id}: a reply without In-Reply-To: or Re:"));
            }
        }
        Kind::Patch => {
            if !m.subject.starts_with("[PATCH] ") {
                bad.push(format!("{id}: a patch whose subject is {:?}", m.subject));
            }
        }
        Kind::StablePatch => {
            if !m.subject.starts_with("[PATCH ") || !m.to.iter().any(|t| t.starts_with("stable@")) {
                bad.push(format!("{id}: a stable patch not [PATCH x.y] to stable@"));
            }
        }
        Kind::NoMail => {}
    }
    if m.kind != Kind::NoMail {
        let all: Vec<&String> = m.to.iter().chain(&m.cc).collect();
        if !all.iter().any(|p| p.as_str() == "linux-mm@kvack.org") {
            bad.push(format!("{id}: linux-mm is not among the recipients"));
        }
        if m.to.is_empty() {
            bad.push(format!("{id}: no To:"));
        }
    }
    let in_diff = text.find("\ndiff --git ").unwrap_or(text.len());
    for (k, l) in text[..in_diff].lines().enumerate() {
        if l.chars().count() > WIDTH {
            bad.push(format!(
                "{id}: line {} is {} columns",
                k + 1,
                l.chars().count()
            ));
        }
    }
    for l in m.body.lines().filter(|l| !l.starts_with('>')) {
        let words = internal_words(l, finding_ids);
        if !words.is_empty() {
            bad.push(format!("{id}: the prose uses {words:?}: {l:?}"));
        }
    }
    let prose: String = m
        .body
        .lines()
        .filter(|l| !l.starts_with('>'))
        .collect::<Vec<_>>()
        .join("\n");
    for f in functions(&format!("{}\n{prose}", m.subject)) {
        if !names::known(m.release, &f) {
            bad.push(format!("{id}: {f}() is not a function of {}", m.release));
        }
    }
    bad
}
