//! Cells: one per (variant, property, backend), summing the runs of the
//! suite up, with what the matrix expected of it; and shard merging.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::check::run::{RunResult, Verdict};
use crate::check::Suite;
use crate::explore::Shard;
use crate::observe::coverage::Event;
use crate::observe::property::Property;
use crate::protocol::{Kind, Variant};
use crate::vocab::BackendName;

/// What the matrix expects of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// Kernel, benign or candidate: must hold.
    Holds,
    /// A mutant's designated killer: must be violated.
    Killed,
    /// A kernel version's pinned finding: must be violated.
    Finding,
    /// Anything goes (a mutant's other cells, refuted claims).
    Any,
}

/// Why a run did not check a kill or a finding a cell is designated for:
/// the selection holds only part of what pins it, and the run it is part
/// of (the default run, or the merge of every shard) checks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotChecked {
    /// `--entry` left out an entry the designation is pinned on.
    Entries,
    /// `--shard I/N`: this run searched one part of each search's
    /// schedules (`flushcheck merge` of every shard checks it).
    Shard,
}

impl NotChecked {
    /// Why, in a few words.
    pub fn why(self) -> &'static str {
        match self {
            NotChecked::Entries => "--entry left out suite entries that search it",
            NotChecked::Shard => "one shard of the schedules; merge every shard to check it",
        }
    }
}

/// One configuration's part of a cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConfigVerdict {
    /// Suite entry name.
    pub entry: String,
    /// Verdict on this entry.
    pub verdict: Verdict,
    /// Its note.
    pub note: Option<String>,
    /// Executions of this entry's search.
    pub executions: u64,
    /// Whether this entry's search was exhaustive.
    pub exhaustive: bool,
    /// How often the property's race happened here.
    pub coverage: u64,
    /// How often what the entry must be able to show for this property
    /// ([`must_show`]) happened here.
    #[serde(default)]
    pub shown: Option<u64>,
}

/// The result of one (variant, property, backend) cell over the suite.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    /// Variant name.
    pub variant: String,
    /// What the variant is.
    pub kind: Kind,
    /// Property.
    pub property: Property,
    /// Backend.
    pub backend: BackendName,
    /// holds / violated / inconclusive, over the suite.
    pub verdict: Verdict,
    /// Executions (loom), schedules (shuttle) or runs (std), summed.
    pub executions: u64,
    /// Seconds, summed.
    pub seconds: f64,
    /// The planned search of each entry.
    pub search: String,
    /// Whether every entry's search was exhaustive and finished.
    pub exhaustive: bool,
    /// The violation (naming the entry), or why the verdict is not holds,
    /// or a flag on a weak holds.
    pub note: Option<String>,
    /// The coverage event paired with the property.
    pub coverage_event: String,
    /// How often it occurred over the suite.
    pub coverage: u64,
    /// How often a CPU accounted a batch again after a skip and a reset
    /// (`recross_after_reset`) over the suite: the later epoch.
    pub later_epoch: u64,
    /// Each entry's verdict.
    pub configs: Vec<ConfigVerdict>,
    /// What the matrix expected.
    pub expect: Expect,
    /// Whether the verdict meets the expectation.
    pub ok: bool,
    /// Which part of a split shuttle search this is (0/1 when not split).
    #[serde(default)]
    pub shard: Shard,
    /// Set when the kill or finding this cell is designated for was not
    /// violated here and the selection holds only part of what pins it:
    /// then `ok` is true and the cell is "not checked here".
    #[serde(default)]
    pub not_checked: Option<NotChecked>,
}

impl Cell {
    /// Whether this holds although the property's race never happened.
    pub fn race_not_seen(&self) -> bool {
        self.note
            .as_deref()
            .is_some_and(|n| n.starts_with("race not seen"))
    }

    /// Whether this holds although no entry reached a later epoch.
    pub fn epoch_not_reached(&self) -> bool {
        self.note
            .as_deref()
            .is_some_and(|n| n.starts_with("later epoch not reached"))
    }
}

/// What an entry judging `p` must be able to show, or it is blind to
/// `p`'s failure: its premise ([`crate::observe::property::Def::premise`];
/// for `no_lost_flush` the no-skip twin flushing: an entry whose counts
/// never reach the twin's trigger cannot show a lost flush).
pub fn must_show(p: Property) -> Option<Event> {
    p.def().premise
}

/// The blind entries over `cells`, one line each: an entry on which, for
/// some variant that must hold, what it must show for a property it
/// judges ([`must_show`]) never happened under any of its searches.
pub fn blind(cells: &[Cell]) -> Vec<String> {
    blind_by_property(cells)
        .into_iter()
        .flat_map(|(_, lines)| lines)
        .collect()
}

/// [`blind`], per property: every property judged with a premise on a
/// must-hold variant is a key, with its blind entries (none: the empty
/// list), in report order of first appearance.
pub fn blind_by_property(cells: &[Cell]) -> Vec<(Property, Vec<String>)> {
    use std::collections::BTreeMap;
    let mut shown: BTreeMap<(&str, &str, &str), u64> = BTreeMap::new();
    let mut order: Vec<(Property, Event)> = Vec::new();
    for c in cells.iter().filter(|c| c.kind.must_hold()) {
        let Some(e) = must_show(c.property) else {
            continue;
        };
        if !order.iter().any(|(p, _)| *p == c.property) {
            order.push((c.property, e));
        }
        for k in &c.configs {
            *shown
                .entry((c.property.name(), &k.entry, &c.variant))
                .or_insert(0) += k.shown.unwrap_or(0);
        }
    }
    order
        .into_iter()
        .map(|(p, e)| {
            let mut by_entry: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for ((_, entry, variant), n) in shown.iter().filter(|((q, ..), _)| *q == p.name()) {
                if *n == 0 {
                    by_entry.entry(entry).or_default().push(variant);
                }
            }
            let lines = by_entry
                .into_iter()
                .map(|(entry, vs)| {
                    format!(
                        "{} on {entry}: {} never happened for {}",
                        p.name(),
                        e.name(),
                        vs.join(", ")
                    )
                })
                .collect();
            (p, lines)
        })
        .collect()
}

/// What the matrix expects of `variant`'s `property` on `backend` on
/// `entry`.
fn expectation(variant: &Variant, property: Property, backend: BackendName, entry: &str) -> Expect {
    if variant.pinned(property, backend, Some(entry)) {
        return Expect::Finding;
    }
    // A pinned finding's property may be violated elsewhere too.
    if variant.findings.iter().any(|d| d.property == property) {
        return Expect::Any;
    }
    match variant.kind {
        k if k.must_hold() && property.refutable_claim() => Expect::Any,
        k if k.must_hold() => Expect::Holds,
        Kind::Mutant if variant.killer(property, backend, Some(entry)) => Expect::Killed,
        _ => Expect::Any,
    }
}

/// One cell per (variant, property, backend) over the suite's runs: each
/// run says which properties it judged.
pub fn cells(variants: &[Variant], properties: &[Property], runs: &[RunResult]) -> Vec<Cell> {
    let mut out = Vec::new();
    for v in variants {
        for p in properties {
            for b in BackendName::ALL {
                let mine: Vec<&RunResult> = runs
                    .iter()
                    .filter(|r| r.spec.variant == v.name && r.spec.backend.id() == b)
                    .filter(|r| r.judged(*p))
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                out.push(cell(v, *p, b, &mine));
            }
        }
    }
    out
}

fn cell(v: &Variant, p: Property, backend: BackendName, runs: &[&RunResult]) -> Cell {
    let event = p.coverage_event();
    let configs: Vec<ConfigVerdict> = runs
        .iter()
        .map(|r| {
            let pv = r.verdict(p);
            ConfigVerdict {
                entry: r.spec.entry.clone(),
                verdict: pv.map_or(Verdict::Inconclusive, |x| x.verdict),
                note: pv.and_then(|x| x.note.clone()),
                executions: r.executions,
                exhaustive: r.exhaustive,
                coverage: r.count(event),
                shown: must_show(p).map(|e| r.count(e)),
            }
        })
        .collect();
    let violated = configs.iter().find(|c| c.verdict == Verdict::Violated);
    let inconclusive = configs.iter().find(|c| c.verdict == Verdict::Inconclusive);
    let (verdict, mut note) = match (violated, inconclusive) {
        (Some(c), _) => (
            Verdict::Violated,
            c.note.as_ref().map(|n| format!("{} [{}]", n, c.entry)),
        ),
        (None, Some(c)) => (
            Verdict::Inconclusive,
            Some(format!(
                "{}: {}",
                c.entry,
                c.note.clone().unwrap_or_default()
            )),
        ),
        (None, None) => (Verdict::Holds, None),
    };
    let coverage: u64 = configs.iter().map(|c| c.coverage).sum();
    let later_epoch: u64 = runs.iter().map(|r| r.count(Event::RecrossAfterReset)).sum();
    let skips: u64 = runs.iter().map(|r| r.count(Event::Skip)).sum();
    if verdict == Verdict::Holds {
        let race_possible = !(p.def().race_needs_skip && skips == 0);
        if coverage == 0 && race_possible {
            note = Some(format!(
                "race not seen: {} never happened in this suite, so this holds says little",
                event.name()
            ));
        } else if later_epoch == 0 && skips > 0 {
            note = Some(
                "later epoch not reached: no CPU accounted a batch again after a skip and a reset"
                    .into(),
            );
        }
    }
    // A cell's expectation is the strongest of its entries'; a designation
    // naming an entry must be violated there.
    let expects: Vec<Expect> = configs
        .iter()
        .map(|c| expectation(v, p, backend, &c.entry))
        .collect();
    let expect = if expects.contains(&Expect::Killed) {
        Expect::Killed
    } else if expects.contains(&Expect::Finding) {
        Expect::Finding
    } else if !expects.is_empty() && expects.iter().all(|e| *e == Expect::Holds) {
        Expect::Holds
    } else {
        Expect::Any
    };
    let designations = match expect {
        Expect::Killed => &v.killed_by,
        _ => &v.findings,
    };
    let entry_bound = designations
        .iter()
        .any(|d| d.property == p && d.backends.contains(&backend) && d.entry.is_some());
    let designated_violated = configs
        .iter()
        .zip(&expects)
        .filter(|(_, e)| **e == expect)
        .all(|(c, _)| c.verdict == Verdict::Violated);
    let ok = match expect {
        Expect::Holds => verdict == Verdict::Holds,
        Expect::Killed | Expect::Finding if entry_bound => designated_violated,
        Expect::Killed | Expect::Finding => verdict == Verdict::Violated,
        Expect::Any => true,
    };
    let mut searches: Vec<String> = runs.iter().map(|r| r.search.clone()).collect();
    searches.dedup();
    Cell {
        variant: v.name.clone(),
        kind: v.kind,
        property: p,
        backend,
        verdict,
        executions: runs.iter().map(|r| r.executions).sum(),
        seconds: runs.iter().map(|r| r.seconds).sum(),
        search: searches.join("; "),
        exhaustive: runs.iter().all(|r| r.exhaustive),
        note,
        coverage_event: event.name().to_string(),
        coverage,
        later_epoch,
        configs,
        expect,
        ok,
        shard: runs.first().map_or_else(Shard::default, |r| r.spec.shard),
        not_checked: None,
    }
}

/// Mark the kills and findings a selection cannot check: a designated
/// cell not violated here whose designation is pinned on an entry of
/// `whole` (the suite the selection was taken from) that `selected` lacks,
/// or that searched one shard of the schedules. They read "not checked
/// here" and do not fail the run: what is selected is judged, what is
/// not is left to the run that has it.
pub fn mark_not_checked(
    cells: &mut [Cell],
    variants: &[Variant],
    selected: &Suite,
    whole: &Suite,
    shard: Shard,
) {
    for c in cells.iter_mut() {
        if c.ok || !matches!(c.expect, Expect::Killed | Expect::Finding) {
            continue;
        }
        let Some(v) = variants.iter().find(|v| v.name == c.variant) else {
            continue;
        };
        let designations = match c.expect {
            Expect::Killed => &v.killed_by,
            _ => &v.findings,
        };
        let searched_by = |s: &Suite| -> Vec<String> {
            s.entries
                .iter()
                .filter(|e| {
                    e.applies_to(v.family) && e.backends.iter().any(|b| b.id() == c.backend)
                })
                .map(|e| e.name.clone())
                .collect()
        };
        let have = searched_by(selected);
        let named: Vec<String> = designations
            .iter()
            .filter(|d| d.property == c.property && d.backends.contains(&c.backend))
            .filter_map(|d| d.entry.clone())
            .collect();
        let needed = if named.is_empty() {
            searched_by(whole)
        } else {
            named
        };
        let why = if needed.iter().any(|e| !have.contains(e)) {
            Some(NotChecked::Entries)
        } else if shard.count > 1 {
            Some(NotChecked::Shard)
        } else {
            None
        };
        if why.is_some() {
            c.not_checked = why;
            c.ok = true;
        }
    }
}

/// Whether `c` should hold and is inconclusive: a search cut short (or a
/// property its configuration cannot decide), not a failure of the
/// variant; the default run says so in the same words as
/// `testing::Verdicts::assert_holds` (and still exits 1).
pub fn cut_short(c: &Cell) -> bool {
    !c.ok && c.expect == Expect::Holds && c.verdict == Verdict::Inconclusive
}

/// A variant line's part for its [`cut_short`] cells among `mine`:
/// `INCONCLUSIVE: property (backend) [entry: why]; ...` and how to raise
/// the budget.
pub fn inconclusive_line(mine: &[&Cell], budget: std::time::Duration) -> String {
    let why: Vec<String> = mine
        .iter()
        .filter(|c| cut_short(c))
        .map(|c| {
            let note = c.note.as_deref().unwrap_or("");
            format!("{} ({}) [{note}]", c.property, c.backend.name())
        })
        .collect();
    format!(
        "INCONCLUSIVE: {}; {}",
        why.join("; "),
        cut_short_advice(budget, "--budget N", "read the other verdicts alone")
    )
}

/// What a verdict cut short says after "inconclusive", the same in the
/// default run and in `testing::Verdicts::assert_holds`: it proves nothing,
/// and how to raise the budget (`raise`, now `budget`) or accept it
/// (`accept`).
pub fn cut_short_advice(budget: std::time::Duration, raise: &str, accept: &str) -> String {
    format!(
        "an inconclusive verdict proves nothing either way: for a search cut short, raise the \
         budget per search with {raise} (now {} s) or the cap its note names, or narrow the \
         selection; or {accept}",
        budget.as_secs()
    )
}

/// Whether a finished matrix passes: every must-hold cell holds, every
/// designated kill happened.
pub fn matrix_ok(cells: &[Cell]) -> bool {
    cells.iter().all(|c| c.ok)
}

/// Combine the cells of shard runs (`flushcheck --shard I/N --json`, one
/// file per shard) into one cell per (variant, property, backend).
///
/// A combined cell is violated if any shard found a violation; it holds only
/// if every shard `0..N` is present and held; otherwise it is inconclusive
/// and says which shards are missing or cut short. Executions and seconds
/// are summed (seconds are total machine time, not wall time).
pub fn merge_shards(cells: &[Cell]) -> Vec<Cell> {
    let mut groups: Vec<(String, Property, BackendName, Vec<&Cell>)> = Vec::new();
    for c in cells {
        match groups
            .iter_mut()
            .find(|g| g.0 == c.variant && g.1 == c.property && g.2 == c.backend)
        {
            Some(g) => g.3.push(c),
            None => groups.push((c.variant.clone(), c.property, c.backend, vec![c])),
        }
    }
    groups
        .into_iter()
        .map(|(_, _, _, parts)| {
            let first = parts[0];
            let count = first.shard.count;
            let mut merged = first.clone();
            merged.executions = parts.iter().map(|c| c.executions).sum();
            merged.seconds = parts.iter().map(|c| c.seconds).sum();
            merged.coverage = parts.iter().map(|c| c.coverage).sum();
            merged.later_epoch = parts.iter().map(|c| c.later_epoch).sum();
            merged.shard = Shard::default();
            merged.search = first
                .search
                .split(", shard ")
                .next()
                .unwrap_or("")
                .to_string()
                + &format!(" (merged from {} of {count} shards)", parts.len());
            let present: BTreeSet<u64> = parts.iter().map(|c| c.shard.index).collect();
            let missing: Vec<u64> = (0..count).filter(|i| !present.contains(i)).collect();
            if let Some(v) = parts.iter().find(|c| c.verdict == Verdict::Violated) {
                merged.verdict = Verdict::Violated;
                merged.note = v.note.clone();
            } else if !missing.is_empty() || parts.iter().any(|c| c.shard.count != count) {
                merged.verdict = Verdict::Inconclusive;
                merged.note = Some(format!("shards missing: {missing:?} of {count}"));
            } else if let Some(c) = parts.iter().find(|c| c.verdict == Verdict::Inconclusive) {
                merged.verdict = Verdict::Inconclusive;
                merged.note = c.note.clone();
            } else {
                merged.verdict = Verdict::Holds;
                merged.note = None;
            }
            merged.ok = match merged.expect {
                Expect::Holds => merged.verdict == Verdict::Holds,
                Expect::Killed | Expect::Finding => merged.verdict == Verdict::Violated,
                Expect::Any => true,
            };
            // Every shard together checks what one shard could not; an
            // entry left out by the selection stays left out.
            merged.not_checked = None;
            if parts
                .iter()
                .any(|c| c.not_checked == Some(NotChecked::Entries))
                && !merged.ok
            {
                merged.not_checked = Some(NotChecked::Entries);
                merged.ok = true;
            }
            merged
        })
        .collect()
}
