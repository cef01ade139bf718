//! The matrix's summary lines: the counts of the flush protocol's cells
//! and the lifetime wing's, what was not as expected, what the selection
//! could not check, the blind entries, the configurations per property.

use std::fmt::Write as _;
use std::time::Duration;

use crate::check::run::{judged, Verdict};
use crate::drive::{Cell, Expect, Plan};
use crate::protocol::{Kind, Variant};
use crate::vocab::Family;

/// The summary lines: one for the flush protocol's cells and, when the
/// run has any, one for the lifetime wing's; each with its counts and
/// what was not as expected; then the configurations per property.
pub fn summary(plan: &Plan, cells: &[Cell], elapsed: Duration) -> String {
    let life = |c: &&Cell| plan_family(plan, &c.variant) == Some(Family::Lifetime);
    let flush: Vec<Cell> = cells.iter().filter(|c| !life(c)).cloned().collect();
    let lifetime: Vec<Cell> = cells.iter().filter(life).cloned().collect();
    let mut out = String::new();
    if !flush.is_empty() || lifetime.is_empty() {
        out += &family_summary(
            plan,
            &flush,
            &format!("{} cells in {:.1} s", flush.len(), elapsed.as_secs_f64()),
            true,
        );
    }
    if !lifetime.is_empty() {
        out += &family_summary(
            plan,
            &lifetime,
            &format!("lifetime: {} cells", lifetime.len()),
            false,
        );
    }
    if cells
        .iter()
        .any(|c| crate::drive::cells::must_show(c.property).is_some())
    {
        let per = crate::drive::cells::blind_by_property(cells);
        let total: usize = per.iter().map(|(_, b)| b.len()).sum();
        let counts: Vec<String> = per
            .iter()
            .map(|(p, b)| format!("{} {}", p.name(), b.len()))
            .collect();
        let _ = writeln!(
            out,
            "blind entries {total} (an entry where a property's premise never happened under its searches): {}",
            counts.join(", ")
        );
        for (_, b) in per {
            for line in b {
                let _ = writeln!(out, "  blind: {line}");
            }
        }
    }
    let mut per: Vec<String> = Vec::new();
    for p in &plan.properties {
        let n = plan
            .suite
            .entries
            .iter()
            .filter(|e| {
                e.backends.iter().filter(|b| plan.runs_backend(b)).any(|b| {
                    plan.variants
                        .iter()
                        .any(|v| e.applies_to(v.family) && judged(v, &e.cfg, b).contains(p))
                })
            })
            .count();
        if n > 0 {
            per.push(format!("{} {n}", p.name()));
        }
    }
    let _ = writeln!(out, "configurations per property: {}", per.join(", "));
    out
}

fn plan_family(plan: &Plan, variant: &str) -> Option<Family> {
    plan.variants
        .iter()
        .find(|v| v.name == variant)
        .map(|v| v.family)
}

/// One summary line over `cells`, starting with `head`, and a line per
/// cell not as expected. `weak` adds the weak-holds counts.
fn family_summary(plan: &Plan, cells: &[Cell], head: &str, weak: bool) -> String {
    let must_hold_bad: Vec<String> = cells
        .iter()
        .filter(|c| c.expect == Expect::Holds && !c.ok)
        .map(|c| {
            format!(
                "{} {} ({} on {}): {}",
                c.kind.name(),
                c.variant,
                c.property.name(),
                c.backend,
                c.verdict.name()
            )
        })
        .collect();
    let inconclusive = cells
        .iter()
        .filter(|c| c.verdict == Verdict::Inconclusive)
        .count();
    let survived: Vec<String> = cells
        .iter()
        .filter(|c| c.expect == Expect::Killed && !c.ok)
        .map(|c| format!("{} ({} on {})", c.variant, c.property.name(), c.backend))
        .collect();
    let findings_missed: Vec<String> = cells
        .iter()
        .filter(|c| c.expect == Expect::Finding && !c.ok)
        .map(|c| format!("{} ({} on {})", c.variant, c.property.name(), c.backend))
        .collect();
    let findings_shown = cells
        .iter()
        .filter(|c| c.expect == Expect::Finding && c.ok && c.not_checked.is_none())
        .count();
    let not_checked: Vec<String> = cells
        .iter()
        .filter(|c| c.not_checked.is_some())
        .map(|c| {
            format!(
                "{} {} ({} on {}): {}",
                if c.expect == Expect::Killed {
                    "kill of"
                } else {
                    "finding of"
                },
                c.variant,
                c.property.name(),
                c.backend,
                c.not_checked.map_or("", |n| n.why())
            )
        })
        .collect();
    let mutants: Vec<&Variant> = plan
        .variants
        .iter()
        .filter(|v| v.kind == Kind::Mutant && cells.iter().any(|c| c.variant == v.name))
        .collect();
    let designated = |v: &Variant| {
        cells
            .iter()
            .filter(|c| c.variant == v.name && c.expect == Expect::Killed)
            .collect::<Vec<_>>()
    };
    // A mutant one of whose kills this selection cannot check is neither
    // killed nor survived here.
    let unchecked = |v: &Variant| {
        let d = designated(v);
        d.iter().all(|c| c.ok) && d.iter().any(|c| c.not_checked.is_some())
    };
    let killed = mutants
        .iter()
        .filter(|v| designated(v).iter().all(|c| c.ok) && !unchecked(v))
        .count();
    let mutants_checked = mutants.iter().filter(|v| !unchecked(v)).count();
    // A must-hold cell cut short is counted as inconclusive, not as a
    // violation (it is still listed as not held).
    let violations = cells
        .iter()
        .filter(|c| c.expect == Expect::Holds && !c.ok && c.verdict != Verdict::Inconclusive)
        .count();
    let mut out = format!(
        "{head}: must-hold violations {violations}, mutants killed {killed}/{}, \
         mutant survivals {}, findings shown {findings_shown}, findings missed {}, \
         inconclusive {inconclusive}",
        mutants_checked,
        survived.len(),
        findings_missed.len(),
    );
    if weak {
        let unseen = cells.iter().filter(|c| c.race_not_seen()).count();
        let epoch = cells.iter().filter(|c| c.epoch_not_reached()).count();
        let _ = write!(
            out,
            ", race not seen {unseen}, later epoch not reached {epoch}"
        );
        if unseen + epoch > 0 {
            out.push('\n');
            let _ = write!(
                out,
                "  (weak holds, nothing failed: race not seen = held though the property's race never happened; \
             later epoch not reached = held though no CPU crossed the batch again after a skip and a reset; \
             `flushcheck --help` explains every count)"
        );
        }
    }
    out.push('\n');
    for s in must_hold_bad {
        let _ = writeln!(out, "  not held: {s}");
    }
    for s in survived {
        let _ = writeln!(out, "  survived: {s}");
    }
    for s in findings_missed {
        let _ = writeln!(out, "  finding not shown: {s}");
    }
    if !not_checked.is_empty() {
        let _ = writeln!(
            out,
            "not checked here {} (the selection holds part of what pins them; the default run checks them):",
            not_checked.len()
        );
        for s in not_checked {
            let _ = writeln!(out, "  not checked: {s}");
        }
    }
    out
}
