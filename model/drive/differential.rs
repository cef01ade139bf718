//! The loom form of `no_lost_flush`: every reader outcome of a variant
//! must be dominated by an outcome of its no-skip twin (docs/model.md,
//! section 7.4). Split out of the matrix, which calls `differential`
//! once every run has finished.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::explore::{Backend, Outcome, Shard};
use crate::observe::plan::{fmt_outcome, ReaderOutcome};
use crate::observe::property::Property;
use crate::protocol::Variant;

use crate::check::run::{explore_variant, judged, monitor_plan, RunResult, RunSpec, Verdict};

/// Whether twin outcome `t` dominates variant outcome `o`: at every read
/// the twin flushes no more and reads no more (it is no fresher).
fn dominated(o: &ReaderOutcome, t: &ReaderOutcome) -> bool {
    o.len() == t.len()
        && o.iter()
            .zip(t)
            .all(|((of, ov), (tf, tv))| (!tf || *of) && ov >= tv)
}

/// The first outcome in `mine` that no outcome in `twin` dominates.
pub fn undominated<'a>(
    mine: &'a [ReaderOutcome],
    twin: &BTreeSet<ReaderOutcome>,
) -> Option<&'a ReaderOutcome> {
    mine.iter().find(|o| !twin.iter().any(|t| dominated(o, t)))
}

/// The loom form of `no_lost_flush`: every reader outcome of the variant
/// must be dominated by an outcome of its twin (the twin flushes no more
/// often and reads no fresher values at every read). The twin's outcomes
/// come from its search at the same bound; an outcome not dominated there
/// is confirmed against an unbounded search of the twin.
pub(super) fn differential(
    registry: &[Variant],
    budget: Duration,
    results: &mut [(usize, RunResult, bool)],
) {
    let twin_outcomes: BTreeMap<(String, String), (bool, BTreeSet<ReaderOutcome>)> = results
        .iter()
        .filter(|(_, r, _)| matches!(r.spec.backend, Backend::Loom { .. }))
        .map(|(_, r, _)| {
            (
                (r.spec.variant.clone(), r.spec.entry.clone()),
                (
                    r.finished,
                    r.outcomes.clone().unwrap_or_default().into_iter().collect(),
                ),
            )
        })
        .collect();
    // Unbounded runs first: a violation they show needs no confirmation,
    // and spares the variant's bounded runs the unbounded search of the
    // twin that confirming theirs would take.
    let mut order: Vec<usize> = (0..results.len()).collect();
    order.sort_by_key(|&i| {
        !matches!(
            results[i].1.spec.backend,
            Backend::Loom {
                preemption_bound: None
            }
        )
    });
    let mut shown: BTreeMap<String, String> = BTreeMap::new();
    for i in order {
        let (_, r, hidden) = &mut results[i];
        if *hidden || !matches!(r.spec.backend, Backend::Loom { .. }) {
            continue;
        }
        let Ok(variant) = Variant::find(registry, &r.spec.variant) else {
            continue;
        };
        let Some(twin) = variant.twin.clone() else {
            continue;
        };
        let Some(slot) = r
            .verdicts
            .iter_mut()
            .find(|v| v.property == Property::NoLostFlush)
        else {
            continue;
        };
        if slot.verdict != Verdict::Holds {
            continue;
        }
        let bound = match r.spec.backend {
            Backend::Loom { preemption_bound } => preemption_bound,
            _ => None,
        };
        let search = Backend::Loom {
            preemption_bound: bound,
        }
        .search();
        if twin == variant.name {
            slot.note = Some(format!(
                "differential: the variant is its own twin ({twin}); outcomes agree by construction"
            ));
            continue;
        }
        let Some((finished, base)) = twin_outcomes.get(&(twin.clone(), r.spec.entry.clone()))
        else {
            slot.verdict = Verdict::Inconclusive;
            slot.note = Some(format!("no loom search of the twin {twin} on this entry"));
            continue;
        };
        if !finished {
            slot.verdict = Verdict::Inconclusive;
            slot.note = Some(format!("the twin {twin}'s search ({search}) was cut short"));
            continue;
        }
        let mine = r.outcomes.clone().unwrap_or_default();
        let Some(o) = undominated(&mine, base).cloned() else {
            continue;
        };
        // Confirm against every execution of the twin.
        let (confirmed, note) = match bound {
            None => (true, format!("{} twin outcomes, exhaustive", base.len())),
            Some(_) if shown.contains_key(&variant.name) => {
                slot.verdict = Verdict::Inconclusive;
                slot.note = Some(format!(
                    "readers observed {} which {twin} did not dominate within the bound; not confirmed \
                     here, the violation is already shown on {}",
                    fmt_outcome(&o),
                    shown[&variant.name]
                ));
                continue;
            }
            Some(_) => {
                let spent = r.seconds;
                let rest = budget
                    .saturating_sub(Duration::from_secs_f64(spent))
                    .max(Duration::from_secs(1));
                match exhaustive_outcomes(registry, &twin, &r.spec, rest) {
                    // loom's unbounded search can miss executions its
                    // bounded one finds (loom#166): compare with both.
                    Ok(mut all) => {
                        all.extend(base.iter().cloned());
                        match undominated(std::slice::from_ref(&o), &all) {
                            Some(_) => (
                                true,
                                format!(
                                    "{} twin outcomes, loom unbounded and at the bound",
                                    all.len()
                                ),
                            ),
                            None => (false, String::new()),
                        }
                    }
                    Err(why) => {
                        slot.verdict = Verdict::Inconclusive;
                        slot.note = Some(format!(
                            "readers observed {} which {twin} did not dominate within the bound; {why}",
                            fmt_outcome(&o)
                        ));
                        continue;
                    }
                }
            }
        };
        if confirmed {
            shown
                .entry(variant.name.clone())
                .or_insert_with(|| r.spec.entry.clone());
            slot.verdict = Verdict::Violated;
            slot.note = Some(format!(
                "no_lost_flush: readers observed {} under {}, which no execution of {twin} dominates ({note})",
                fmt_outcome(&o),
                variant.name
            ));
        }
    }
}

/// Every reader outcome of `twin` on the spec's configuration, by an
/// unbounded loom search within `budget`.
fn exhaustive_outcomes(
    registry: &[Variant],
    twin: &str,
    spec: &RunSpec,
    budget: Duration,
) -> Result<BTreeSet<ReaderOutcome>, String> {
    let t = Variant::find(registry, twin)?;
    let backend = Backend::Loom {
        preemption_bound: None,
    };
    let checks = judged(&t, &spec.cfg, &backend);
    let mut mp = monitor_plan(&t, registry, &spec.cfg, &backend, checks)?;
    mp.collect_outcomes = true;
    let (e, shared) = explore_variant(&t, mp, &backend, Shard::default(), budget, None, None);
    match e.outcome {
        Outcome::Finished => Ok(shared.outcomes()),
        Outcome::CutShort(why) => Err(format!(
            "the unbounded search of {twin} was cut short: {why}"
        )),
        Outcome::Failed(msg) => Err(format!(
            "the unbounded search of {twin} failed: {}",
            msg.lines().next().unwrap_or("")
        )),
    }
}
