//! Two variants written from docs/extending.md alone (section 9): an
//! updated-tree variant and a lifetime variant that reorders steps.
//!
//! - `v6.8-tree-mb-restated`: v6.8's updated tree with the barrier pair,
//!   its updater and flusher restated from `per_memcg::rstat_tree`'s
//!   functions; it must hold what `v6.8-tree-mb` holds against its twin
//!   `v6.8-tree-mb-no-skip`.
//! - `v7.1-life-flush-after-gp`: v7.1's release work with its flush moved
//!   after the grace period (`synchronize_rcu()`, then the flush, then the
//!   free); it must hold every lifetime property.
//!
//! ```sh
//! cargo run --release --example tree_and_lifetime -- --variant v6.8-tree-mb-restated --entry memcg-pair
//! cargo run --release --example tree_and_lifetime -- lifetime --variant v7.1-life-flush-after-gp
//! ```

use std::process::ExitCode;

use memcg_flush_model::kernel::rcu::{synchronize_rcu, RcuThread};
use memcg_flush_model::protocol::lifetime::forms::{emit, Life, Lifetime, WorkQueue};
use memcg_flush_model::protocol::lifetime::model as lifetime_model;
use memcg_flush_model::protocol::per_memcg::rstat_tree;
use memcg_flush_model::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use memcg_flush_model::protocol::variant::batch_times_cpus;
use memcg_flush_model::protocol::{Kind, Variant};
use memcg_flush_model::vocab::{LifeEvent, Platform};

/// v6.8-tree-mb, restated.
#[derive(Clone, Copy)]
struct TreeRestated;

impl Memcontrol for TreeRestated {
    fn rstat_tree(&self) -> bool {
        true
    }

    fn __mod_memcg_state<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        rstat_tree::mod_memcg_state_tree(self, mm, memcg, val, true);
    }

    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        rstat_tree::cgroup_rstat_flush_locked(self, mm, root, true, &|_| true);
    }
}

/// v7.1's death, with the release flush moved after the grace period:
/// every charge made under RCU to the memcg has reached its per-CPU
/// counters by then, so the flush still finds it before the free.
#[derive(Clone, Copy)]
struct FlushAfterGracePeriod;

impl Lifetime for FlushAfterGracePeriod {
    fn css_release_work_fn<P: Platform>(
        &self,
        life: &Life<P>,
        th: &RcuThread,
        wq: &mut WorkQueue,
        memcg: u8,
    ) {
        // The change: synchronize_rcu() first, then the flush.
        synchronize_rcu(&life.rcu, th);
        self.css_release_flush(life, memcg);
        emit::<P>(LifeEvent::Released { memcg });
        self.css_free_rwork_fn(life, wq, memcg);
    }
}

fn main() -> ExitCode {
    memcg_flush_model::main_with(vec![
        Variant::new(
            "v6.8-tree-mb-restated",
            Kind::Candidate,
            "v6.8-tree-mb restated from docs/extending.md",
            v6_8::model(TreeRestated),
        )
        .per_memcg(batch_times_cpus)
        .updated_tree(true)
        .twin("v6.8-tree-mb-no-skip"),
        Variant::lifetime(
            "v7.1-life-flush-after-gp",
            Kind::Candidate,
            "v7.1 with the release flush after the grace period, not before",
            lifetime_model(FlushAfterGracePeriod),
        ),
    ])
}
