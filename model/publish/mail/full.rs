//! `flushcheck report --finding ID --model-report`: the model's whole report on
//! finding, as plain text of at most 80 columns (the mail itself is
//! [`super::for_finding`]'s). Every verdict in it comes from a search run
//! while the text is written: the witness replayed, its shortest trace, the
//! LKMM litmus test of a weak-memory trace, each fix candidate checked on
//! the witness, a larger configuration and, when asked, the default suite,
//! and what a reader of the candidate observes
//! ([`crate::drive::findings::reader_check`]).

use std::fmt::Write as _;
use std::time::Duration;

use crate::drive::findings::{candidate_configs, check_candidates_on, replay};
use crate::drive::forms::{as_form, replay_also};
use crate::protocol::findings::{Expected, Finding};
use crate::protocol::Variant;

use super::scaled::{self, Scope};
use super::text::{candidate_words, cfg_words, check_words, scrub, verdict_words, wrap, TEXT};

/// The widest line a report may have.
pub const WIDTH: usize = 80;

/// `text` wrapped to [`TEXT`] columns, each line indented by `indent`.
fn para(out: &mut String, indent: &str, text: &str) {
    for line in wrap(text, TEXT + 2 - indent.len()) {
        let _ = writeln!(out, "{indent}{line}");
    }
}

/// `text` as a list item: `first` before its first line, its other
/// lines indented to match.
fn item(out: &mut String, first: &str, text: &str) {
    let hang = " ".repeat(first.len());
    for (i, line) in wrap(text, TEXT + 2 - first.len()).into_iter().enumerate() {
        let _ = writeln!(out, "{}{line}", if i == 0 { first } else { &hang });
    }
}

/// A heading line and its paragraph.
fn section(out: &mut String, title: &str, text: &str) {
    let _ = writeln!(out, "\n{title}");
    para(out, "  ", text);
}

/// A shell command split over lines ending in ` \` so that every line
/// fits; it pastes into a shell as it is.
pub fn shell_lines(cmd: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = indent.to_string();
    let mut first = true;
    for word in cmd.split_whitespace() {
        // An option starts a new line once the line is half full, so that
        // `--flag value` pairs stay together.
        let wide = line.len() + 1 + word.len() > WIDTH - 2;
        if !first && wide {
            let _ = writeln!(out, "{line} \\");
            line = format!("{indent}  ");
        } else if !first {
            line.push(' ');
        }
        line.push_str(word);
        first = false;
    }
    let _ = writeln!(out, "{line}");
    out
}

/// Litmus text with every line over [`WIDTH`] broken after a comma (the
/// C parser herd7 uses ignores the line breaks).
fn fit_litmus(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut rest = line.to_string();
        while rest.len() > WIDTH {
            let cut = rest[..WIDTH].rfind(", ").map(|i| i + 1);
            let Some(cut) = cut else { break };
            let _ = writeln!(out, "{}", &rest[..cut]);
            rest = format!("\t{}", rest[cut..].trim_start());
        }
        let _ = writeln!(out, "{rest}");
    }
    out
}

/// The line a candidate's default suite run gives: whether every cell of
/// `cells` is as the catalogue expects.
pub fn suite_line(cells: &[crate::drive::cells::Cell], elapsed: std::time::Duration) -> String {
    let bad: Vec<String> = cells
        .iter()
        .filter(|c| !c.ok)
        .map(|c| {
            format!(
                "{} on {}: {:?}",
                c.property.name(),
                c.backend.name(),
                c.verdict
            )
        })
        .collect();
    if bad.is_empty() {
        format!(
            "the model's standard configurations: all {} checks as expected ({:.0} s)",
            cells.len(),
            elapsed.as_secs_f64()
        )
    } else {
        format!(
            "the model's standard configurations: NOT as expected: {}",
            bad.join("; ")
        )
    }
}

/// What a full report runs besides the witnesses.
pub struct Full<'a> {
    /// The trace as the model's column diagram (`U.1[0] += 2`) instead of
    /// the kernel's statements.
    pub model_names: bool,
    /// How much it searches.
    pub depth: Depth,
    /// Runs a candidate's default suite (`flushcheck --variant NAME`) and
    /// says how it went in a line, if asked (`--suite`).
    pub suite: Option<SuiteFn<'a>>,
}

/// How much a report searches: everything it states ([`Depth::Full`]),
/// or the witnesses only ([`Depth::Form`]: the candidates on the minimal
/// witness, the 2026 reply on [`Scope::quick`]), for checking its form in
/// seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Every check the report states.
    Full,
    /// The same text from the cheapest searches.
    Form,
    /// Every search but the fix candidates', which are listed unchecked
    /// (`report --finding ID --model-report --no-check`).
    NoCheck,
}

/// The model's full report on `f`.
pub fn full(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
    o: &Full,
) -> Result<String, String> {
    let (model_names, depth) = (o.model_names, o.depth);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "memcg-flush-model: the model's report on {}\n({})",
        f.id, f.subject
    );
    section(&mut out, "Kind", f.class.name());
    section(
        &mut out,
        "Affected releases",
        &format!(
            "{} (first {}, last {}). Introduced by {}.{}",
            f.affected,
            f.first,
            f.last,
            f.introduced,
            f.closed_by
                .map(|c| format!(" Ended upstream by {c}."))
                .unwrap_or_default()
        ),
    );
    let _ = writeln!(out, "\nThe claim");
    para(&mut out, "  ", &format!("\"{}\"", f.claim.quote));
    item(&mut out, "    -- ", f.claim.source);

    eprintln!("report {}: replaying the witness ...", f.id);
    let r = replay(f, registry, budget)?;
    // The trace's own figures where there is one: the deciding search may
    // stop at another interleaving with other numbers.
    let shown = match &r.trace {
        Some(c) => format!("{} In the trace below: {}", what_search(&r), c.violation),
        None => format!(
            "{} {}",
            what_search(&r),
            r.check.note.lines().next().unwrap_or("")
        ),
    };
    if !f.also.is_empty() {
        eprintln!(
            "report {}: replaying {} further forms ...",
            f.id,
            f.also.len()
        );
    }
    let forms = replay_also(f, registry, budget)?;
    let numbered = !forms.is_empty();
    let label = |k: usize| {
        if numbered {
            format!("Form ({k}): ")
        } else {
            String::new()
        }
    };
    let _ = writeln!(out, "\nWhat the model shows");
    para(
        &mut out,
        "  ",
        &format!("{}{}", label(1), sentence(&scrub(&shown, registry))),
    );
    for (k, g) in forms.iter().enumerate() {
        let text = match &g.trace {
            Some(c) => format!("{} In its trace: {}", what_search(g), c.violation),
            None => what_search(g),
        };
        para(
            &mut out,
            "  ",
            &format!("{}{}", label(k + 2), scrub(&text, registry)),
        );
    }
    section(&mut out, "Mechanism", f.mechanism);
    section(&mut out, "Impact", f.impact);
    section(&mut out, "Magnitude", f.magnitude);
    section(&mut out, "Likelihood", f.likelihood);
    section(&mut out, "Preconditions", f.preconditions);

    let heading = |k: usize| {
        if numbered {
            format!("Shortest witness found, form ({k})")
        } else {
            "Shortest witness found".to_string()
        }
    };
    let _ = writeln!(out, "\n{}", heading(1));
    witness(&mut out, f, &r, registry, model_names);
    let _ = writeln!(out, "\nReproduce");
    out.push_str(&shell_lines(&format!("$ {}", f.witness.command), "  "));
    for (k, (w, g)) in f.also.iter().zip(&forms).enumerate() {
        let _ = writeln!(out, "\n{}", heading(k + 2));
        witness(&mut out, &as_form(f, w), g, registry, model_names);
        let _ = writeln!(out, "\nReproduce");
        out.push_str(&shell_lines(&format!("$ {}", w.command), "  "));
    }

    if !f.fixes.is_empty() {
        candidates(&mut out, f, registry, budget, o.suite, depth)?;
    }
    if let Some(b) = &f.bound {
        section(&mut out, "Corrected comment", b.comment);
        section(&mut out, "Derivation", b.derivation);
        let _ = writeln!(out, "\nConfirmed by");
        out.push_str(&shell_lines(&format!("$ {}", b.confirm), "  "));
    }
    if f.id == scaled::FINDING {
        let scope = match depth {
            Depth::Full | Depth::NoCheck => Scope::full(),
            Depth::Form => Scope::quick(),
        };
        out.push_str(&scaled::reply(registry, &scope)?);
    }
    section(&mut out, "What the model abstracts away", f.abstractions);
    let _ = writeln!(
        out,
        "\n-- \nflushcheck {} (memcg-flush-model); the text says what the model\nshowed and nothing more.",
        env!("CARGO_PKG_VERSION")
    );
    Ok(out)
}

/// The witness's trace: the kernel's statements (or the model's diagram),
/// and for a weak-memory finding its LKMM litmus test.
fn witness(
    out: &mut String,
    f: &Finding,
    r: &crate::drive::findings::Replayed,
    registry: &[Variant],
    model_names: bool,
) {
    let Some(c) = &r.trace else {
        para(out, "  ", &format!("no trace: {}", r.how));
        return;
    };
    para(out, "  ", &format!("found by {}", r.how));
    out.push('\n');
    let conclusion = scrub(&c.violation, registry);
    let text = if model_names {
        // A column may run a few characters over its share of the width
        // rather than cut a step: ask for less until it fits.
        (48..=WIDTH)
            .rev()
            .map(|w| c.diagram(w))
            .find(|d| long_lines(d).is_empty())
            .unwrap_or_else(|| c.diagram(WIDTH))
    } else {
        c.listing(
            WIDTH,
            &format!("Result: {}", sentence(&conclusion)),
            &crate::protocol::dialect::dialect_of(&c.variant),
        )
    };
    out.push_str(&text);
    if f.weak_memory {
        let _ = writeln!(out, "\nLKMM litmus test of the witness (herd7)\n");
        match c.litmus_named(&litmus_name(f)) {
            Ok(t) => out.push_str(&fit_litmus(&t)),
            Err(e) => para(out, "  ", &format!("not exported: {e}")),
        }
    }
}

/// The deciding search and its verdict in a sentence.
fn what_search(r: &crate::drive::findings::Replayed) -> String {
    format!(
        "A model of this code, run on {} ({}, {} executions): {}.",
        cfg_words(&r.check.cfg),
        r.check.search,
        r.check.executions,
        verdict_words(&r.check),
    )
}

/// `text` with its first letter capitalised.
fn sentence(text: &str) -> String {
    let mut c = text.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A litmus test's name: the subject's subsystem prefix (the C parser
/// takes letters, digits and underscores).
fn litmus_name(f: &Finding) -> String {
    let area = f.subject.split(':').next().unwrap_or("memcg");
    format!(
        "{}_witness",
        area.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    )
}

/// A candidate's default suite, run by the caller (`--suite`): a line.
pub type SuiteFn<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// Each fix candidate with the model's verdicts on the witness, the larger
/// configuration and the configurations at scale; then what a reader
/// observes under each ([`crate::drive::findings::reader_check`]); then the
/// price.
fn candidates(
    out: &mut String,
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
    suite: Option<SuiteFn>,
    depth: Depth,
) -> Result<(), String> {
    let _ = writeln!(
        out,
        "\nFix candidates (each checked in the model; not patches)"
    );
    let cfgs = match depth {
        Depth::Full => candidate_configs(f),
        Depth::Form => vec![(f.witness.cfg)()],
        Depth::NoCheck => {
            for (i, c) in f.fixes.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "\n  {}. {} (not checked: --no-check)",
                    i + 1,
                    c.variant
                );
                para(out, "     ", c.change);
            }
            return Ok(());
        }
    };
    for (i, (name, checks)) in check_candidates_on(f, &cfgs, registry, budget)?
        .into_iter()
        .enumerate()
    {
        let c = f.fixes.iter().find(|c| c.variant == name);
        let expected = c.map_or(Expected::Fixes, |c| c.expected);
        let _ = writeln!(out, "\n  {}. {}", i + 1, candidate_words(expected, &checks));
        if let Some(c) = c {
            para(out, "     ", c.change);
        }
        for ch in &checks {
            item(out, "     - ", &check_words(ch));
        }
        if let (Some(run), Expected::Fixes) = (suite, expected) {
            item(out, "     - ", &run(&name)?);
        }
    }
    reader_section(out, f, registry, budget, depth)?;
    if depth == Depth::Full {
        let _ = writeln!(
            out,
            "\nPrice on the charge path (per __mod_memcg_state(), counted in the model)\n"
        );
        // The table names candidates as the list above numbers them.
        let mut price = crate::publish::price::price_text(f, registry)?;
        for (i, c) in f.fixes.iter().enumerate() {
            price = price.replace(
                &format!("{} (", c.variant),
                &format!("candidate {} (", i + 1),
            );
        }
        out.push_str(&price);
    }
    Ok(())
}

/// What a reader of the root observes under the unfixed version and each
/// candidate, judged without the walk the candidates restore.
fn reader_section(
    out: &mut String,
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
    depth: Depth,
) -> Result<(), String> {
    let mut cfgs = crate::drive::findings::reader_configs(f, registry);
    if cfgs.is_empty() {
        return Ok(());
    }
    if depth == Depth::Form {
        cfgs.truncate(1);
    }
    let _ = writeln!(out, "\nWhat a reader observes");
    para(
        out,
        "  ",
        "Judged without the walk the candidates restore: on each configuration below more \
         pages are charged than the trigger plus what every CPU can hold below the batch \
         (T + nr_cpus * (MEMCG_CHARGE_BATCH - 1)), and nothing flushes before the final \
         read, so a walk that counts every update leaves the reader of the root over its \
         trigger, and a read after every charge returned must show every page.",
    );
    let rows = crate::drive::findings::reader_check(f, &cfgs, registry, budget)?;
    for (name, checks) in rows {
        let label = match f.fixes.iter().position(|c| c.variant == name) {
            Some(i) => format!("candidate {}", i + 1),
            None => "the unfixed code".to_string(),
        };
        let all = checks.iter().all(|c| !c.shows && c.exhaustive);
        let any = checks.iter().any(|c| c.shows);
        let verdict = match (all, any) {
            (true, _) => "reads every page on every interleaving",
            (_, true) => "a read misses pages",
            _ => "undecided (a search was cut short)",
        };
        item(out, "  - ", &format!("{label}: {verdict}"));
        for ch in &checks {
            item(out, "      ", &check_words(ch));
        }
    }
    Ok(())
}

/// Every line of `text` over [`WIDTH`] columns, with its number.
pub fn long_lines(text: &str) -> Vec<(usize, usize)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() > WIDTH)
        .map(|(i, l)| (i + 1, l.chars().count()))
        .collect()
}
