//! A finding's further forms ([`crate::protocol::findings::Finding::also`]):
//! each replayed as the first witness is, by [`super::findings::replay`]
//! on the finding with that form as its witness, so that a form is decided
//! by the same search (its backend, the DFS's cap, loom's bound) and gets
//! its shortest trace the same way.

use std::time::Duration;

use crate::protocol::findings::{Finding, Witness};
use crate::protocol::Variant;

use super::findings::{replay, Replayed};

/// `f` with `w` as its witness: what the searches of a form run on.
pub fn as_form(f: &Finding, w: &Witness) -> Finding {
    Finding { witness: *w, ..*f }
}

/// Replay every further form of `f`, in order: the deciding search of its
/// variant on its configuration and the shortest trace found.
pub fn replay_also(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
) -> Result<Vec<Replayed>, String> {
    f.also
        .iter()
        .map(|w| replay(&as_form(f, w), registry, budget))
        .collect()
}

/// Whether every further form of `f` shows, and the forms that do not,
/// named by their variant and configuration (for `flushcheck findings
/// --check`).
pub fn also_show(
    f: &Finding,
    registry: &[Variant],
    budget: Duration,
) -> Result<Vec<String>, String> {
    let mut missing = Vec::new();
    for w in f.also {
        let g = as_form(f, w);
        let v = Variant::find(registry, w.variant)?;
        let c = super::findings::check(&g, &v, &(w.cfg)(), registry, budget)?;
        if !c.shows {
            missing.push(format!("{} on {}: {}", w.variant, c.cfg, c.verdict()));
        }
    }
    Ok(missing)
}
