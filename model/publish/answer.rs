//! The default run's first screen: the seed's question answered (v6.0's
//! `no_lost_flush`, and how it was searched), then the findings, one line
//! each, as `flushcheck findings` heads them.

use std::fmt::Write as _;

use crate::check::run::Verdict;
use crate::drive::{Cell, Plan};
use crate::observe::property::Property;
use crate::observe::record::wrap;
use crate::protocol::catalogue::SEED;
use crate::protocol::findings::{self, Finding, Shown};
use crate::vocab::BackendName;

use crate::publish::findings::headline;

/// The answer to the seed's question, if the run judged `no_lost_flush`
/// for the seed variant: its verdict and, per entry, how it was searched.
pub fn seed_answer(plan: &Plan, cells: &[Cell]) -> String {
    let mine: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.variant == SEED && c.property == Property::NoLostFlush)
        .collect();
    let Some(v) = plan.variants.iter().find(|v| v.name == SEED) else {
        return String::new();
    };
    if mine.is_empty() {
        return String::new();
    }
    let commit = v.summary.split(':').next().unwrap_or("");
    let verdict = if mine.iter().any(|c| c.verdict == Verdict::Violated) {
        "VIOLATED: a reader missed a flush its no-skip twin performs"
    } else if mine.iter().any(|c| c.verdict == Verdict::Inconclusive) {
        "INCONCLUSIVE: a search was cut short (--cells says which)"
    } else {
        "HOLDS: no reader missed a flush its no-skip twin (v5.19) performs"
    };
    let mut out = format!(
        "Does {SEED}'s skip ({commit}) lose a flush a reader needed?\n  no_lost_flush on {SEED}: {verdict}\n"
    );
    if verdict.starts_with("HOLDS") {
        // The claim has two senses; only the outcome sense holds.
        let same = cells.iter().any(|c| {
            c.variant == SEED
                && c.property == Property::NoLostFlushSameSchedule
                && c.verdict == Verdict::Violated
        });
        let _ = writeln!(
            out,
            "  (in the outcome sense; in the same-schedule sense {SEED} does lose one: no_lost_flush_same_schedule {}, docs/findings.md section 7)",
            if same { "VIOLATED here" } else { "is refuted" }
        );
    }
    // Per entry, the strongest search that judged it.
    let mut exhaustive: Vec<&str> = Vec::new();
    let mut loom: Vec<&str> = Vec::new();
    let mut sampled: Vec<&str> = Vec::new();
    for e in &plan.suite.entries {
        let on = |pick: &dyn Fn(&Cell) -> bool, exh: bool| {
            mine.iter().filter(|c| pick(c)).any(|c| {
                c.configs
                    .iter()
                    .any(|x| x.entry == e.name && (!exh || x.exhaustive))
            })
        };
        let name = e.name.as_str();
        if on(&|c| c.backend == BackendName::Loom, false) {
            loom.push(name);
        }
        if on(&|_| true, true) {
            exhaustive.push(name);
        } else if on(&|c| c.backend != BackendName::Loom, false) {
            sampled.push(name);
        }
    }
    let mut how = Vec::new();
    let mut part = |what: &str, list: &[&str]| {
        if !list.is_empty() {
            how.push(format!("{what} on {}", list.join(", ")));
        }
    };
    part("exhaustive (DFS, every SC interleaving)", &exhaustive);
    part("sampled only (shuttle random, PCT, std)", &sampled);
    part("also loom, weak memory within a preemption bound,", &loom);
    for line in wrap(&how.join("; "), 116) {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// The findings whose witness variant the plan ran, one line each as
/// `flushcheck findings` heads them, with the cells of this run that show
/// each (or that the run did not show it here); nothing for a
/// configuration of the user's own, where no finding is pinned.
pub fn findings_lines(plan: &Plan, cells: &[Cell], custom: bool) -> String {
    if custom {
        return String::new();
    }
    let ran = |name: &str| plan.variants.iter().any(|v| v.name == name);
    let list: Vec<Finding> = findings::all()
        .into_iter()
        .filter(|f| ran(f.witness.variant))
        .collect();
    if list.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "Findings ({}; `flushcheck findings` replays each witness, `flushcheck report --finding {}` writes one's report):\n",
        list.len(),
        list[0].id
    );
    for f in &list {
        let _ = writeln!(out, "  {}  {}", headline(f), shown_here(f, cells));
    }
    out
}

/// Which cell of this run shows `f`, in a few words.
fn shown_here(f: &Finding, cells: &[Cell]) -> String {
    let variant = f.witness.variant;
    match f.witness.shown {
        Shown::Property { property, .. } => {
            let hit = cells.iter().any(|c| {
                c.variant == variant && c.property == property && c.verdict == Verdict::Violated
            });
            let unchecked = cells
                .iter()
                .any(|c| c.variant == variant && c.property == property && c.not_checked.is_some());
            if hit {
                format!("shown here: {variant} violates {}", property.name())
            } else if unchecked {
                format!("not checked here ({variant}, {})", property.name())
            } else {
                format!("NOT shown here ({variant}, {})", property.name())
            }
        }
        _ => format!(
            "not a cell of this run ({}): `flushcheck findings` replays it",
            f.witness.shown.what()
        ),
    }
}

/// One line per summary count, for a run's text output and `--help`.
pub const COUNTS: &str = "\
The summary's counts, per (variant, property, backend) cell:
  must-hold violations: cells of a kernel version, benign rewrite, fix or candidate that were violated
  mutants killed: mutants every designated killer violated; mutant survivals: designated cells that held
  findings shown/missed: pinned findings the run showed, and did not show, where the catalogue pins them
  inconclusive: cells whose search was cut short (budget or cap) without a counterexample (a
    must-hold cell among them fails the run, as `Verdicts::assert_holds` fails; raise --budget)
  race not seen: cells that held although the property's race never happened in their searches
    (a weak holds: --cells lists them with the race; nothing failed)
  later epoch not reached: cells that held although no CPU accounted a batch again after a skip and
    a reset (the later epoch some bugs need; std varies between runs)
  configurations per property: the suite entries on which each property was judged";
