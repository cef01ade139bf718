//! The properties, each one named definition ([`crate::observe::property::
//! Def`]) beside the hook points and state its check reads, as LKMM keeps
//! its axioms in `linux-kernel.cat` next to the relations they use.
//!
//! | file | properties |
//! |---|---|
//! | [`flush`] | what a flush must do: `no_lost_flush` (and its same-schedule form), `conservation`, `eventual_conservation`, `monotonic_reads`, `flush_exclusion`, `quiescent_read_exact` |
//! | [`bounds`] | the documented staleness bounds: `documented_error_bound`, `no_worse_than_baseline`, `flush_time_bound` |
//! | [`claims`] | the per-memcg lineage's claims: `per_memcg_error_bound`, `ancestors_flushable`, `stats_updates_bound`; v6.4's `ratelimited_skip_justified` |
//! | [`contract`] | the reader's contract without a walk: `quiescent_reader_flushes` |
//! | [`lifetime`] | a memcg's death: `no_use_after_free`, `stats_survive_death`, `no_leak` |
//!
//! A new property is a `static` [`Def`] in one of these files, added to
//! that file's `DEFS` (docs/extending.md, section 6).

pub mod bounds;
pub mod claims;
pub mod contract;
pub mod flush;
pub mod hooks;
pub mod lifetime;

use crate::observe::property::{Check, Def, Property};
use crate::vocab::Family;

pub use hooks::{At, Ctx, LifeAt, LifeCtx};

/// Every property, file by file, in report order.
pub static ALL: &[&[&Def]] = &[
    flush::DEFS,
    bounds::DEFS,
    claims::DEFS,
    contract::DEFS,
    lifetime::DEFS,
];

/// Properties defined outside the crate ([`register`]), after the crate's
/// own, in the order registered.
static EXTRA: std::sync::RwLock<Vec<&'static Def>> = std::sync::RwLock::new(Vec::new());

/// The properties registered so far from outside the crate.
fn extra() -> Vec<&'static Def> {
    EXTRA.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Add `defs` to the registry, so that every run from now on judges them
/// like the crate's own: a researcher's properties
/// (`cli::main_with_properties`, `testing::Check::property`).
/// Idempotent: a definition already registered (the same `static`) is
/// left as it is, so each `#[test]` of a crate may register what it
/// uses. The error names a definition whose name is empty, or is taken by
/// another property (the crate's, or another definition registered
/// before).
pub fn register(defs: Vec<&'static Def>) -> Result<(), String> {
    let mut extra = EXTRA.write().unwrap_or_else(|e| e.into_inner());
    for d in defs {
        if d.name.trim().is_empty() || d.name.contains([',', ' ']) {
            return Err(format!(
                "property {:?}: a property's name must be non-empty, without spaces or commas (it is given to --property)",
                d.name
            ));
        }
        let known = ALL.iter().flat_map(|f| f.iter()).chain(extra.iter());
        if known.into_iter().any(|x| std::ptr::eq(*x, d)) {
            continue;
        }
        let builtin = ALL.iter().flat_map(|f| f.iter()).any(|x| x.name == d.name);
        if builtin || extra.iter().any(|x| x.name == d.name) {
            return Err(format!(
                "property {:?} is already defined{}: give it another name",
                d.name,
                if builtin { " by the crate" } else { "" }
            ));
        }
        extra.push(d);
    }
    Ok(())
}

/// The registry: every property, looked up by name.
impl Property {
    /// Every property, in report order.
    pub fn all() -> impl Iterator<Item = Property> {
        ALL.iter()
            .flat_map(|file| file.iter().copied())
            .chain(extra())
            .map(Property::of)
    }

    /// The properties of `family`'s monitor.
    pub fn of_family(family: Family) -> impl Iterator<Item = Property> {
        Property::all().filter(move |p| match p.def().check {
            Check::Life(_) => family == Family::Lifetime,
            Check::Flush(_) => family != Family::Lifetime,
        })
    }

    /// Look a property up by name; the error lists the names allowed.
    pub fn by_name(name: &str) -> Result<Property, String> {
        Property::all().find(|p| p.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Property::all().map(|p| p.name()).collect();
            format!(
                "unknown property {name:?}: expected one of {}",
                names.join(", ")
            )
        })
    }
}

impl<'de> serde::Deserialize<'de> for Property {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Property::by_name(&name).map_err(serde::de::Error::custom)
    }
}

/// The property a panic message reports, if any. A data race loom reports
/// on a flusher's lock-protected field counts as `flush_exclusion`: the
/// lock failed to order two flush sections.
pub fn attribute(message: &str) -> Option<Property> {
    let line = crate::observe::property::first_line(message);
    if let Some(p) = Property::all().find(|p| line.starts_with(&format!("{}:", p.name()))) {
        return Some(p);
    }
    if line.starts_with("data race on ") {
        let flusher_field = ["P[", "P.", "pend", "agg", "flush_time"]
            .iter()
            .any(|f| line["data race on ".len()..].starts_with(f));
        if flusher_field {
            return Some(Property::FlushExclusion);
        }
    }
    None
}

/// The catalogue's names for the properties defined here.
#[allow(non_upper_case_globals)]
impl Property {
    /// [`flush::NO_LOST_FLUSH`].
    pub const NoLostFlush: Property = Property::of(&flush::NO_LOST_FLUSH);
    /// [`flush::NO_LOST_FLUSH_SAME_SCHEDULE`].
    pub const NoLostFlushSameSchedule: Property = Property::of(&flush::NO_LOST_FLUSH_SAME_SCHEDULE);
    /// [`flush::CONSERVATION`].
    pub const Conservation: Property = Property::of(&flush::CONSERVATION);
    /// [`flush::EVENTUAL_CONSERVATION`].
    pub const EventualConservation: Property = Property::of(&flush::EVENTUAL_CONSERVATION);
    /// [`flush::MONOTONIC_READS`].
    pub const MonotonicReads: Property = Property::of(&flush::MONOTONIC_READS);
    /// [`flush::FLUSH_EXCLUSION`].
    pub const FlushExclusion: Property = Property::of(&flush::FLUSH_EXCLUSION);
    /// [`flush::QUIESCENT_READ_EXACT`].
    pub const QuiescentReadExact: Property = Property::of(&flush::QUIESCENT_READ_EXACT);
    /// [`bounds::DOCUMENTED_ERROR_BOUND`].
    pub const DocumentedErrorBound: Property = Property::of(&bounds::DOCUMENTED_ERROR_BOUND);
    /// [`bounds::NO_WORSE_THAN_BASELINE`].
    pub const NoWorseThanBaseline: Property = Property::of(&bounds::NO_WORSE_THAN_BASELINE);
    /// [`bounds::FLUSH_TIME_BOUND`].
    pub const FlushTimeBound: Property = Property::of(&bounds::FLUSH_TIME_BOUND);
    /// [`claims::PER_MEMCG_ERROR_BOUND`].
    pub const PerMemcgErrorBound: Property = Property::of(&claims::PER_MEMCG_ERROR_BOUND);
    /// [`claims::ANCESTORS_FLUSHABLE`].
    pub const AncestorsFlushable: Property = Property::of(&claims::ANCESTORS_FLUSHABLE);
    /// [`claims::STATS_UPDATES_BOUND`].
    pub const StatsUpdatesBound: Property = Property::of(&claims::STATS_UPDATES_BOUND);
    /// [`claims::RATELIMITED_SKIP_JUSTIFIED`].
    pub const RatelimitedSkipJustified: Property =
        Property::of(&claims::RATELIMITED_SKIP_JUSTIFIED);
    /// [`contract::QUIESCENT_READER_FLUSHES`].
    pub const QuiescentReaderFlushes: Property = Property::of(&contract::QUIESCENT_READER_FLUSHES);
    /// [`lifetime::NO_USE_AFTER_FREE`].
    pub const NoUseAfterFree: Property = Property::of(&lifetime::NO_USE_AFTER_FREE);
    /// [`lifetime::STATS_SURVIVE_DEATH`].
    pub const StatsSurviveDeath: Property = Property::of(&lifetime::STATS_SURVIVE_DEATH);
    /// [`lifetime::NO_LEAK`].
    pub const NoLeak: Property = Property::of(&lifetime::NO_LEAK);
}
