//! The catalogue: every variant the default run checks, gathered from the
//! lineages' own lists (each lineage's `mod.rs`, each mutants file's
//! `variants()`), and the name lookups.
//!
//! A kernel version is added to its lineage's list, a mutant beside its
//! code; nothing here changes. Names the tool itself needs (the variant a
//! measurement runs on by default) are the constants below.

use crate::protocol::variant::Variant;
use crate::protocol::{global, lifetime, per_memcg};

/// The variant `flushcheck perf` and `flushcheck exhaustive --growth`
/// measure by default: v6.0, the skip that started the project.
pub const MEASURED: &str = "v6.0";

/// The variant whose question the default run answers first: does v6.0's
/// skip lose a flush a reader needed (`no_lost_flush`)?
pub const SEED: &str = MEASURED;

/// The mutants `flushcheck bounds` measures beside the kernel versions when
/// no variant is named: the off-by-one skip, which leaves more stale than
/// v5.19 can.
pub const BOUNDS_MUTANTS: [&str; 1] = ["mutant-skip-off-by-one"];

/// The updated tree with 9a9e97b2f1f2's smp_mb() pair, on v6.8's and
/// v6.17's forms: the fixes the litmus corpus checks under loom.
pub const TREE_MB: [&str; 2] = ["v6.8-tree-mb", "v6.17-tree-mb"];

/// Every variant the default run checks: kernel versions, mutants, benign
/// rewrites and twins of both lineages, and the lifetime forms.
pub fn all() -> Vec<Variant> {
    let mut all = global::catalogue();
    all.extend(per_memcg::catalogue());
    all.extend(lifetime::catalogue());
    all
}

/// [`all`] and the benchmark's bound ([`global::no_global`]).
pub fn with_bounds() -> Vec<Variant> {
    let mut all = all();
    all.push(global::no_global());
    all
}

/// Every variant a run knows: the catalogue, the benchmark bound, and
/// `extra` (variants of the caller's own), each registration checked
/// ([`check_registration`]). The error is one line naming the variant.
pub fn registry(extra: Vec<Variant>) -> Result<Vec<Variant>, String> {
    let mut all = with_bounds();
    let ours = all.len();
    for v in extra {
        if let Some(i) = all.iter().position(|w| w.name == v.name) {
            return Err(format!(
                "variant {:?} is {}: give it another name",
                v.name,
                if i < ours {
                    "already in the catalogue"
                } else {
                    "registered twice"
                }
            ));
        }
        all.push(v);
    }
    for v in &all {
        check_registration(v, &all)?;
    }
    Ok(all)
}

/// What a registration must say, checked before anything runs, so that a
/// variant is never silently left out: a name that can be given to
/// `--variant`; for a mutant, the properties that kill it, each on at
/// least one backend; a twin that is registered and has a gate.
pub fn check_registration(v: &Variant, registry: &[Variant]) -> Result<(), String> {
    if v.name.trim().is_empty() || v.name.contains([',', ' ']) {
        return Err(format!(
            "variant name {:?}: a variant's name must be non-empty, without spaces or commas (it is given to --variant)",
            v.name
        ));
    }
    if v.kind == crate::protocol::Kind::Mutant && v.killed_by.is_empty() {
        return Err(format!(
            "mutant {:?} has no killed_by: a mutant must name the properties that must kill it (.killed_by(property, backends)), or it is never searched",
            v.name
        ));
    }
    for d in &v.killed_by {
        if d.backends.is_empty() {
            return Err(format!(
                "mutant {:?}: killed_by({}) names no backend: give at least one",
                v.name, d.property
            ));
        }
    }
    if let Some(t) = &v.twin {
        let gated: Vec<&str> = registry
            .iter()
            .filter(|w| w.gate.is_some())
            .map(|w| w.name.as_str())
            .collect();
        match registry.iter().find(|w| &w.name == t) {
            None => {
                return Err(format!(
                    "variant {:?} names the twin {t:?}, which is not registered: twins are {}",
                    v.name,
                    gated.join(", ")
                ))
            }
            Some(w) if w.gate.is_none() => {
                return Err(format!(
                "variant {:?} names the twin {t:?}, which has no gate (.gate(..)): twins are {}",
                v.name,
                gated.join(", ")
            ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Look a variant up in the catalogue (and the benchmark bound).
pub fn by_name(name: &str) -> Result<Variant, String> {
    Variant::find(&with_bounds(), name)
}

/// The kernel version whose protocol a Linux release runs, for the
/// real-kernel scenarios (docs/real-kernels.md): v6.0's global threshold
/// for 6.1 to 6.7 (873f64b791a2 is in 6.0), v6.8's per-memcg thresholds
/// for 6.8 to 6.15, and v6.17's early `break` from 6.16.
pub fn for_release(major: u32, minor: u32) -> Result<Variant, String> {
    let name = match (major, minor) {
        (6, 0..=7) => "v6.0",
        (6, 8..=15) => "v6.8",
        (6, 16..) | (7, _) => "v6.17",
        _ => {
            return Err(format!(
                "Linux {major}.{minor}: no modelled version runs its protocol (6.0 to 7.x are)"
            ))
        }
    };
    by_name(name)
}

/// What `flushcheck bench` runs side by side: the baseline (v5.19), the
/// measured version (v6.0) and the benchmark's bound.
pub fn bench_subjects() -> [Variant; 3] {
    let all = all();
    let baseline = all.iter().find(|v| v.baseline).cloned();
    let measured = Variant::find(&all, MEASURED).ok();
    [
        baseline.expect("the catalogue has a baseline"),
        measured.expect("the catalogue has the measured variant"),
        global::no_global(),
    ]
}
