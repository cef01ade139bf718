//! What a reviewer adds without editing the crate, beyond a v6.0 variant
//! (examples/scaled_trigger.rs): a patch to v6.17's per-memcg updater and
//! a change to how a memcg dies (a property of one's own and its mutant:
//! examples/own_property.rs).
//!
//! - `v6.17-count-every-level`: drop the early `break` out of the ancestor
//!   walk of `memcg_rstat_updated()`, so that every level counts every
//!   update (what C12's finding suggests). It must hold everything v6.17's
//!   no-break twin holds.
//! - `v7.1-life-free-early`: the release work frees the memcg without
//!   waiting for a grace period: an updater that found the memcg under
//!   `rcu_read_lock()` may still charge it. It must fail
//!   `no_use_after_free`.
//!
//! Both run in the default run and in every subcommand, like the
//! catalogue's variants (docs/extending.md):
//!
//! ```sh
//! cargo run --release --example own_additions -- --variant v6.17-count-every-level
//! cargo run --release --example own_additions -- lifetime --variant v7.1-life-free-early
//! ```

use std::process::ExitCode;

use memcg_flush_model::kernel::rcu::RcuThread;
use memcg_flush_model::kernel::{atomic64_add, this_cpu_add_return_shared, this_cpu_xchg_shared};
use memcg_flush_model::protocol::lifetime::forms::{Life, Lifetime, WorkQueue};
use memcg_flush_model::protocol::lifetime::model as lifetime_model;
use memcg_flush_model::protocol::per_memcg::v6_17;
use memcg_flush_model::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use memcg_flush_model::protocol::variant::batch_times_cpus;
use memcg_flush_model::protocol::{Kind, Variant};
use memcg_flush_model::vocab::{LifeEvent, Obs, Platform};

/// v6.17 without the `break`: count at every level, fold at the batch.
#[derive(Clone, Copy)]
struct CountEveryLevel;

impl Memcontrol for CountEveryLevel {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        if val == 0 {
            return;
        }
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
            // The change: no memcg_vmstats_needs_flush() test, no break.
            let s = this_cpu_add_return_shared(&statc.stats_updates, val.abs());
            if s < mm.MEMCG_CHARGE_BATCH() {
                continue;
            }
            let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
            atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
        }
    }

    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        v6_17::css_rstat_flush(self, mm, root);
    }
}

/// v7.1's death, with the free queued without a grace period.
#[derive(Clone, Copy)]
struct FreeEarly;

impl Lifetime for FreeEarly {
    fn css_release_work_fn<P: Platform>(
        &self,
        life: &Life<P>,
        _th: &RcuThread,
        wq: &mut WorkQueue,
        memcg: u8,
    ) {
        self.css_release_flush(life, memcg);
        P::emit(|| Obs::Life(LifeEvent::Released { memcg }));
        // The change: no synchronize_rcu() before the free.
        self.css_free_rwork_fn(life, wq, memcg);
    }
}

fn main() -> ExitCode {
    memcg_flush_model::cli::main_with(vec![
        Variant::new(
            "v6.17-count-every-level",
            Kind::Candidate,
            "v6.17 without the early break: every level counts every update",
            v6_8::model(CountEveryLevel),
        )
        .per_memcg(batch_times_cpus)
        .twin("v6.17-no-break"),
        Variant::lifetime(
            "v7.1-life-free-early",
            Kind::Candidate,
            "v7.1 freeing a dying memcg without waiting for a grace period",
            lifetime_model(FreeEarly),
        ),
    ])
}
