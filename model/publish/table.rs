//! The matrix as text: one line per variant (the default), the cell table
//! (`--cells`), one line per run (`--runs`), markdown (the summary lines
//! are [`super::summary`]'s).

use std::fmt::Write as _;
use std::time::Duration;

use crate::check::run::{RunResult, Verdict};
use crate::config::Config;
use crate::drive::{Cell, Expect, Plan};
use crate::observe::property::Property;
use crate::protocol::findings::Shown;
use crate::protocol::{Kind, Variant};
use crate::vocab::BackendName;

use super::summary::summary;

/// One line per variant: its kind, whether it held every property it must
/// (or which it did not, where, and the command that explains it), which
/// designated killers killed a mutant, which findings and refuted claims a
/// kernel version shows. `custom`: the run's configuration is the user's,
/// where no kill or finding is pinned.
pub fn variant_lines(plan: &Plan, cells: &[Cell], custom: bool) -> String {
    let w = plan
        .variants
        .iter()
        .map(|v| v.name.len())
        .max()
        .unwrap_or(8);
    let mut out = String::from(
        "\nVerdicts, one line per variant (--cells: every cell; --suite-table: the entries):\n",
    );
    for v in &plan.variants {
        let mine: Vec<&Cell> = cells.iter().filter(|c| c.variant == v.name).collect();
        if mine.is_empty() {
            continue;
        }
        let list = |pick: &dyn Fn(&Cell) -> bool| -> Vec<String> {
            let mut by: Vec<(Property, Vec<&str>)> = Vec::new();
            for c in mine.iter().filter(|c| pick(c)) {
                match by.iter_mut().find(|(p, _)| *p == c.property) {
                    Some((_, bs)) => bs.push(c.backend.name()),
                    None => by.push((c.property, vec![c.backend.name()])),
                }
            }
            by.iter()
                .map(|(p, bs)| format!("{p} ({})", bs.join(", ")))
                .collect()
        };
        let violated = list(&|c| c.verdict == Verdict::Violated);
        let violated = if violated.is_empty() {
            "nothing".to_string()
        } else {
            violated.join("; ")
        };
        let bad: Vec<&Cell> = mine.iter().copied().filter(|c| !c.ok).collect();
        let text = match v.kind {
            Kind::Mutant if custom => format!(
                "its kills are pinned on the suite: not checked on this configuration; violated here: {violated}"
            ),
            Kind::Mutant => {
                let killed = list(&|c| c.expect == Expect::Killed && c.ok && c.not_checked.is_none());
                let unchecked = list(&|c| c.expect == Expect::Killed && c.not_checked.is_some());
                let why = not_checked_why(&mine);
                if !unchecked.is_empty() && bad.is_empty() {
                    let mut t = String::new();
                    if !killed.is_empty() {
                        let _ = write!(t, "killed by {}; ", killed.join("; "));
                    }
                    let _ = write!(
                        t,
                        "not checked here: {} ({why}); violated here: {violated}",
                        unchecked.join("; ")
                    );
                    t
                } else if killed.is_empty() && bad.is_empty() {
                    format!("no designated killer searched here; violated: {violated}")
                } else if bad.is_empty() {
                    format!("killed by {}", killed.join("; "))
                } else {
                    format!(
                        "SURVIVED {}",
                        list(&|c| c.expect == Expect::Killed && !c.ok).join("; ")
                    )
                }
            }
            _ => must_hold_line(plan, v, &mine, &bad, &list, custom),
        };
        let _ = writeln!(out, "  {:<9} {:<w$}  {text}", v.kind.name(), v.name);
    }
    out
}

/// Why the kills or findings of `cells` are not checked here, in a few
/// words.
fn not_checked_why(cells: &[&Cell]) -> String {
    let mut why: Vec<&str> = cells
        .iter()
        .filter_map(|c| c.not_checked)
        .map(|n| n.why())
        .collect();
    why.dedup();
    why.join("; ")
}

/// A variant's cells picked by a predicate, as `property (backends)`.
type Lister<'a> = dyn Fn(&dyn Fn(&Cell) -> bool) -> Vec<String> + 'a;

/// The line of a variant that must hold: what failed (with the command
/// that explains it), else that it holds; the findings it shows; the
/// refutable claims it violates.
fn must_hold_line(
    plan: &Plan,
    v: &Variant,
    mine: &[&Cell],
    bad: &[&Cell],
    list: &Lister,
    custom: bool,
) -> String {
    let pinned = |c: &Cell| v.findings.iter().any(|d| d.property == c.property);
    let mut parts: Vec<String> = Vec::new();
    // A cell that should hold and whose search was cut short (or could not
    // decide) is inconclusive, not a failure of the variant: said in the
    // same words as `testing::Verdicts::assert_holds` (the run still exits 1).
    let cut = |c: &Cell| crate::drive::cells::cut_short(c);
    if let Some(c) = bad.iter().find(|c| !cut(c)) {
        parts.push(format!(
            "NOT AS EXPECTED: {}; {}",
            list(&|c| !c.ok && !cut(c)).join("; "),
            hint(plan, v, c)
        ));
    }
    if let Some(first) = bad.iter().find(|c| cut(c)) {
        let line = crate::drive::cells::inconclusive_line(mine, plan.budget);
        parts.push(format!("{line}; {}", hint(plan, v, first)));
    }
    let showing = |c: &Cell| {
        c.verdict == Verdict::Violated && (c.expect == Expect::Finding || (custom && pinned(c)))
    };
    let shown = list(&showing);
    if !shown.is_empty() {
        let props: Vec<Property> = mine
            .iter()
            .filter(|c| showing(c))
            .map(|c| c.property)
            .collect();
        let ids = finding_ids(&v.name, &props);
        parts.push(match ids.len() {
            0 => format!("SHOWS PINNED FINDINGS: {}", shown.join("; ")),
            n => format!(
                "SHOWS FINDING{} {}: {}",
                if n == 1 { "" } else { "S" },
                ids.join(", "),
                shown.join("; ")
            ),
        });
    }
    let unchecked = list(&|c| c.expect == Expect::Finding && c.not_checked.is_some());
    if !unchecked.is_empty() {
        parts.push(format!(
            "findings not checked here: {} ({})",
            unchecked.join("; "),
            not_checked_why(mine)
        ));
    }
    if custom && shown.is_empty() && mine.iter().any(|c| pinned(c)) {
        parts.push("findings: not checked on this configuration (pinned on the suite)".into());
    }
    if bad.is_empty() {
        parts.push(if shown.is_empty() {
            "every property it must hold holds".into()
        } else {
            "every other property it must hold holds".into()
        });
    }
    let mut refuted: Vec<String> = mine
        .iter()
        .filter(|c| {
            c.property.refutable_claim()
                && !pinned(c)
                && c.expect != Expect::Finding
                && c.verdict == Verdict::Violated
        })
        .map(|c| match finding_of(&v.name, c.property) {
            Some(id) => format!("{} (finding {id})", c.property.name()),
            None => c.property.name().to_string(),
        })
        .collect();
    refuted.dedup();
    if !refuted.is_empty() {
        parts.push(format!("refutes the claims {}", refuted.join(", ")));
    }
    parts.join("; ")
}

/// The identifiers of the findings `variant`'s violations of `props`
/// show: the finding whose witness is that violation, else the one
/// finding any of whose witnesses violates the property.
fn finding_ids(variant: &str, props: &[Property]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for p in props {
        let Some(id) = finding_of(variant, *p).or_else(|| only_finding_of(*p)) else {
            continue;
        };
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The finding, if exactly one, some witness of which violates `property`.
fn only_finding_of(property: Property) -> Option<String> {
    let all = crate::protocol::findings::all();
    let mut hits = all.iter().filter(|f| {
        std::iter::once(&f.witness)
            .chain(f.also.iter())
            .any(|w| matches!(w.shown, Shown::Property { property: p, .. } if p == property))
    });
    match (hits.next(), hits.next()) {
        (Some(f), None) => Some(f.id.to_string()),
        _ => None,
    }
}

/// The finding whose witness (or further form) is `variant` violating
/// `property`.
fn finding_of(variant: &str, property: Property) -> Option<String> {
    crate::protocol::findings::all()
        .iter()
        .find(|f| {
            std::iter::once(&f.witness).chain(f.also.iter()).any(|w| {
                w.variant == variant
                    && matches!(w.shown, Shown::Property { property: p, .. } if p == property)
            })
        })
        .map(|f| f.id.to_string())
}

/// The command that explains a cell not as expected: a finding not shown,
/// its witness's replay; otherwise `explain` on the
/// entry where it failed (or, for a finding not shown, the entry the
/// finding names, else the first), with a configuration of the user's own
/// given as its flags.
pub fn hint(plan: &Plan, v: &Variant, c: &Cell) -> String {
    if c.expect == Expect::Finding {
        if let Some(id) = finding_of(&v.name, c.property) {
            return format!(
                "its witness: {} findings --replay {id}",
                crate::report::program::program()
            );
        }
    }
    let entry = c
        .configs
        .iter()
        .find(|x| match c.expect {
            Expect::Holds | Expect::Any => x.verdict != Verdict::Holds,
            _ => x.verdict != Verdict::Violated,
        })
        .or_else(|| c.configs.first())
        .map_or("", |x| x.entry.as_str());
    // explain searches with loom or shuttle's samplers.
    let by = match c.backend {
        BackendName::Loom | BackendName::ShuttleRandom => c.backend,
        _ => BackendName::ShuttlePct,
    };
    let cfg = match plan.suite.entry(entry) {
        Some(e) if e.name == CUSTOM => flags(&e.cfg),
        _ => format!("--entry {entry}"),
    };
    format!(
        "explain: {} explain --variant {} --property {} --backend {by} {cfg}",
        crate::report::program::program(),
        v.name,
        c.property
    )
}

/// The name of the entry a configuration given by flags runs as.
pub const CUSTOM: &str = "custom";

/// The suite, one line per entry.
pub fn suite_text(plan: &Plan) -> String {
    let mut out = String::from("flushcheck: the scenario suite\n");
    let w = plan
        .suite
        .entries
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(4);
    for e in &plan.suite.entries {
        if !plan.variants.iter().any(|v| e.applies_to(v.family)) {
            continue;
        }
        let backends: Vec<&str> = e
            .backends
            .iter()
            .filter(|b| plan.runs_backend(b))
            .map(|b| b.name())
            .collect();
        let _ = writeln!(out, "  {:<w$}  {}  [{}]", e.name, e.cfg, backends.join(" "));
    }
    out
}

/// The matrix as a table; `notes` adds the note column (text output).
pub fn table(plan: &Plan, cells: &[Cell], notes: bool) -> String {
    let mut out = cell_rows(cells, notes);
    let _ = writeln!(out, "searches:");
    let mut seen = std::collections::BTreeSet::new();
    for e in &plan.suite.entries {
        if !plan.variants.iter().any(|v| e.applies_to(v.family)) {
            continue;
        }
        for b in e.backends.iter().filter(|b| plan.runs_backend(b)) {
            if seen.insert(b.search()) {
                let _ = writeln!(out, "  {:<15} {}", b.name(), b.search());
            }
        }
    }
    if plan.variants.iter().any(|v| plan.reduced(v)) {
        let _ = writeln!(
            out,
            "  (kernel versions, benign rewrites and fix candidates: 1/{} of each random or PCT search's schedules,\n   and loom at bound 0 for a fix of an SC behaviour; --full for all)",
            plan.catalogue_share
        );
    }
    let _ = writeln!(
        out,
        "  * = exhaustive on every configuration. configs = configurations with this verdict / run.\n  coverage = times the property's race happened; epoch2 = times a CPU accounted a batch\n  again after a skip and a reset (recross_after_reset). Races:"
    );
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<28} {}", p.name(), p.coverage_event().name());
    }
    let _ = writeln!(out, "  who decides what:");
    for p in &plan.properties {
        let _ = writeln!(out, "    {:<28} {}", p.name(), p.decided_by());
    }
    out
}

/// The matrix's rows: a header, one line per cell, a blank line.
pub fn cell_rows(cells: &[Cell], notes: bool) -> String {
    let vw = cells
        .iter()
        .map(|c| c.variant.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let pw = cells
        .iter()
        .map(|c| c.property.name().len())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<vw$} {:<pw$} {:<14} {:<13} {:>7} {:>10} {:>7} {:>8} {:>6}{}",
        "variant",
        "property",
        "backend",
        "verdict",
        "configs",
        "executions",
        "seconds",
        "coverage",
        "epoch2",
        if notes { "  note" } else { "" }
    );
    for c in cells {
        let mark = match (c.expect, c.ok) {
            (_, false) => " !!",
            (Expect::Killed, true) => " (killed)",
            (Expect::Finding, true) => " (finding)",
            _ => "",
        };
        let verdict = format!(
            "{}{}",
            c.verdict.name(),
            if c.exhaustive { "*" } else { "" }
        );
        let held = c.configs.iter().filter(|x| x.verdict == c.verdict).count();
        let mut row = format!(
            "{:<vw$} {:<pw$} {:<14} {:<13} {:>7} {:>10} {:>7.2} {:>8} {:>6}",
            c.variant,
            c.property.name(),
            c.backend,
            verdict,
            format!("{held}/{}", c.configs.len()),
            c.executions,
            c.seconds,
            c.coverage,
            c.later_epoch,
        );
        if notes {
            let _ = write!(
                row,
                "  {}{mark}",
                truncate(c.note.as_deref().unwrap_or(""), 100)
            );
        }
        let _ = writeln!(out, "{}", row.trim_end());
    }
    let _ = writeln!(out);
    out
}

/// One line per run.
pub fn runs_table(runs: &[RunResult]) -> String {
    let mut out = String::from("\nruns:\n");
    for r in runs {
        let violated: Vec<&str> = r
            .verdicts
            .iter()
            .filter(|v| v.verdict == Verdict::Violated)
            .map(|v| v.property.name())
            .collect();
        let _ = writeln!(
            out,
            "  {:<30} {:<12} {:<14} {:>9} {:>7.2}s {}{}",
            r.spec.variant,
            r.spec.entry,
            r.spec.backend.name(),
            r.executions,
            r.seconds,
            if r.exhaustive { "exhaustive " } else { "" },
            if violated.is_empty() {
                r.stopped.clone().unwrap_or_default()
            } else {
                format!("violated {}", violated.join(","))
            }
        );
    }
    out
}

/// The matrix as markdown for a review thread.
pub fn markdown(plan: &Plan, cells: &[Cell], elapsed: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Verdicts\n");
    let _ = writeln!(
        out,
        "```text\n{}{}{}```\n",
        suite_text(plan),
        table(plan, cells, false),
        summary(plan, cells, elapsed)
    );
    let noted: Vec<&Cell> = cells.iter().filter(|c| c.note.is_some()).collect();
    if !noted.is_empty() {
        let _ = writeln!(out, "Notes:\n");
        for c in noted {
            let line = format!(
                "- {} / {} / {}: {}",
                c.variant,
                c.property.name(),
                c.backend,
                c.note.as_deref().unwrap_or("")
            );
            for (i, l) in crate::observe::record::wrap(&line, 98)
                .into_iter()
                .enumerate()
            {
                let _ = writeln!(out, "{}{l}", if i == 0 { "" } else { "  " });
            }
        }
        let _ = writeln!(out);
    }
    out
}

/// `cfg` as the configuration flags that give it (`--cpus 2 --batch 1 ...`),
/// for a printed command: every flag, so that the command does not depend
/// on the defaults. A memcg's death has no flag and is left out.
pub fn flags(cfg: &Config) -> String {
    let list = |v: &[u8]| {
        v.iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let vals: Vec<String> = cfg.vals.iter().map(|v| v.to_string()).collect();
    let mut out = format!(
        "--cpus {} --batch {} --updates {} --val {} --readers {} --reads {} {}",
        cfg.cpus,
        cfg.batch,
        cfg.updates,
        vals.join(","),
        cfg.readers,
        cfg.reads,
        if cfg.periodic {
            "--periodic"
        } else {
            "--no-periodic"
        }
    );
    let mut add = |flag: &str, value: String| {
        out.push_str(&format!(" --{flag} {value}"));
    };
    if cfg.ticks > 0 {
        add("ticks", cfg.ticks.to_string());
        add("late", cfg.late.to_string());
    }
    if cfg.ratelimited > 0 {
        add("ratelimited", cfg.ratelimited.to_string());
    }
    if !cfg.tree.is_empty() {
        add("tree", list(&cfg.tree));
    }
    if !cfg.charges.is_empty() {
        add("charge", cfg.charges_text());
    } else if !cfg.charge.is_empty() {
        add("charge", list(&cfg.charge));
    }
    if !cfg.read.is_empty() {
        add("read", list(&cfg.read));
    }
    if cfg.settle > 0 {
        add("settle", cfg.settle.to_string());
    }
    if cfg.settle_update {
        out.push_str(" --settle-update");
    }
    out
}

/// `s` cut to `n` characters, with `...` if cut.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}
