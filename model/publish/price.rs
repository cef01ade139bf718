//! A finding's price in kernel terms as text (`flushcheck findings
//! --price`, and the candidates' section of a full report): the table of
//! [`crate::measure::price::cost_text`] with its legend.

use crate::measure::bench::{FLUSH_EVERY, HUGE_EVERY, HUGE_VAL, READ_EVERY};
use crate::measure::price::cost::{KERNEL_BATCH, TOTAL_UPDATES};
use crate::measure::price::{before_patch, cost_text, costs};
use crate::protocol::findings::Finding;
use crate::protocol::Variant;

/// The CPU counts the price tables are counted at.
pub const PRICE_CPUS: [usize; 3] = [1, 2, 3];

/// `f`'s price in kernel terms as 80-column text (for a report): the table
/// of [`crate::measure::price::cost_text`] with its legend, or why there
/// is none.
pub fn price_text(f: &Finding, registry: &[Variant]) -> Result<String, String> {
    let rows = costs(f, registry, &PRICE_CPUS)?;
    if rows.is_empty() {
        return Ok(
            "No hot-path change to price: the candidates change the release and \
                   free path.\n"
                .into(),
        );
    }
    let mut out = String::new();
    for line in crate::observe::record::wrap(&price_legend(f, registry), 80) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&cost_text(&rows));
    Ok(out)
}

fn price_legend(f: &Finding, registry: &[Variant]) -> String {
    let before = before_patch(f, registry).map_or(
        "the catalogue models no separate version before the introducing patch".into(),
        |v| format!("{} stands for the releases before it", v.name),
    );
    format!(
        "Per __mod_memcg_state() on a deterministic round-robin schedule of {TOTAL_UPDATES} \
         updates at MEMCG_CHARGE_BATCH {KERNEL_BATCH} (every {HUGE_EVERY}th a {HUGE_VAL}-page \
         folio, a reader of the root every {READ_EVERY} updates, a periodic flush every \
         {FLUSH_EVERY}); per-memcg versions charge a grandchild of the root (levels: the \
         memcg, its parent, the root; global: words of no memcg), global-threshold versions \
         the root; {before}. Counted from the model's own observations: this_cpu_* \
         operations, other per-CPU accesses, atomic reads and RMWs, lock operations, \
         barriers, and distinct cache lines CPU-local and shared between CPUs."
    )
}
