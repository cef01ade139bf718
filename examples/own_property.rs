//! A property of one's own, end to end (docs/extending.md, section 6): its
//! definition, a mutant that must fail it, and `#[test]` functions that
//! check both with `testing::Check`, as a crate of one's own would.
//!
//! - `no_phantom_pages`: a reader never reads more pages than were charged
//!   to the subtree it reads: rstat folds each per-CPU delta into the
//!   aggregate once.
//! - `mutant-whole-counter`: v5.19 whose rstat callback adds a CPU's whole
//!   counter to the aggregate instead of what it gained since the last
//!   flush; `no_phantom_pages` must kill it.
//!
//! The tests run from a crate of their own (tests/outside, whose
//! Cargo.toml takes this file as its `own_property` test; tests/suite/
//! outside.rs runs them); as a binary the file is the whole tool with the
//! property and the mutant added:
//!
//! ```sh
//! cargo test --release -p outside-variants --test own_property
//! cargo run --release --example own_property -- --variant mutant-whole-counter,v6.0 --property no_phantom_pages
//! ```

use std::process::ExitCode;

use memcg_flush_model::kernel::{read_once, write_once};
use memcg_flush_model::observe::coverage::Event;
use memcg_flush_model::observe::properties::{At, Ctx};
use memcg_flush_model::observe::property::{Check, Def, Property};
use memcg_flush_model::protocol::global::v5_19::{self, Memcontrol, State};
use memcg_flush_model::protocol::variant::SC;
use memcg_flush_model::protocol::{Kind, Variant};
use memcg_flush_model::vocab::Platform;

/// A reader never reads more pages than the updates charged to the subtree
/// it reads: the aggregate only ever receives deltas that were written.
pub static NO_PHANTOM_PAGES: Def = Def::new(
    "no_phantom_pages",
    "a reader never reads more pages than were charged to the memcg's subtree",
    Event::ReadDuringFlush,
    Check::Flush(no_phantom_pages),
)
.source("rstat folds each per-CPU delta into the aggregate once")
.decided_by(
    "all backends: the value read against every update written before it, in execution order",
)
// With nothing charged no read can exceed the charges: an entry where no
// update returned is blind to this property.
.premise(Event::Charged);

/// The check, called at every hook point; only reads matter to it. It
/// reads the ghost state's running sum of the updates, which is what
/// `Ctx::ghost` is for (its read side is stable: `observe::ghost`).
fn no_phantom_pages(ctx: &Ctx, at: &At) -> Option<String> {
    let At::Read {
        actor,
        memcg,
        value,
        ..
    } = *at
    else {
        return None;
    };
    let charged = ctx.ghost.written_total(memcg);
    // Under loom a read may return a value older than execution order
    // shows, never a newer one: the bound holds there too.
    (ctx.cfg.non_negative() && value > charged).then(|| {
        format!(
            "no_phantom_pages: {actor} read {value} pages of memcg {memcg}, but only {charged} were charged"
        )
    })
}

/// v5.19 whose rstat callback adds a CPU's whole counter to the aggregate
/// instead of the delta since the last flush (`state_prev` ignored).
#[derive(Clone, Copy)]
pub struct WholeCounter;

impl Memcontrol for WholeCounter {
    fn mem_cgroup_css_rstat_flush<P: Platform>(&self, mm: &State<P>, memcg: u8, cpu: usize) {
        let m = mm.memcg(memcg);
        let v = read_once(&m.vmstats_percpu.per_cpu(cpu).state);
        // MUTANT: v, not v - state_prev.
        write_once(&m.vmstats.state, read_once(&m.vmstats.state) + v);
    }
}

/// The mutant, registered with the property that must kill it.
pub fn whole_counter() -> Variant {
    Variant::new(
        "mutant-whole-counter",
        Kind::Mutant,
        "flusher: adds each CPU's whole counter, not what it gained since the last flush",
        v5_19::model(WholeCounter),
    )
    .twin("v5.19")
    .killed_by(Property::of(&NO_PHANTOM_PAGES), SC)
}

fn main() -> ExitCode {
    memcg_flush_model::cli::main_with_properties(vec![whole_counter()], vec![&NO_PHANTOM_PAGES])
}

#[cfg(test)]
mod tests {
    use super::*;
    use memcg_flush_model::protocol::global::v6_0::V6_0;
    use memcg_flush_model::testing::Check;
    use memcg_flush_model::vocab::BackendName;

    /// Two entries under the exhaustive DFS keep each test to seconds.
    fn small(c: Check) -> Check {
        c.property(&NO_PHANTOM_PAGES)
            .entries(&["pair", "epochs-reader"])
            .backends(&[BackendName::ShuttleDfs])
    }

    /// The mutant fails the property it was written for.
    #[test]
    fn the_mutant_reads_phantom_pages() {
        small(Check::new(whole_counter()))
            .run()
            .assert_violated(Property::of(&NO_PHANTOM_PAGES));
    }

    /// v6.0, restated as a candidate of one's own, holds it (and every
    /// other property it must hold).
    #[test]
    fn v6_0_reads_no_phantom_pages() {
        let v6_0 = Variant::new(
            "v6.0-as-a-candidate",
            Kind::Candidate,
            "v6.0, checked against a property of one's own",
            v5_19::model(V6_0),
        )
        .twin("v5.19");
        small(Check::new(v6_0))
            .properties(&[Property::of(&NO_PHANTOM_PAGES)])
            .run()
            .assert_holds();
    }
}
