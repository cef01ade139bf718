//! The price of a finding's fix candidates on the hot path, measured side
//! by side in one run with the unfixed version and its no-skip twin:
//! updates per second on real threads (noisy: compare only within one
//! run) and threshold RMWs per update on the deterministic schedule
//! ([`bench::rmws_per_update`], the same on every machine). A per-memcg
//! version charges a grandchild of the root, so that its walk climbs three
//! levels; the reader reads the root.

use serde::Serialize;

use crate::measure::bench::{self, HotPath};
use crate::protocol::findings::Finding;
use crate::protocol::{Family, Variant};

/// What a measured variant is to the finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Role {
    /// The version the finding is shown on.
    Unfixed,
    /// Its no-skip twin.
    Twin,
    /// A fix candidate.
    Fix,
}

impl Role {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Role::Unfixed => "unfixed",
            Role::Twin => "twin",
            Role::Fix => "fix",
        }
    }
}

/// One variant at one thread count.
#[derive(Clone, Debug, Serialize)]
pub struct PriceRow {
    /// The finding.
    pub finding: String,
    /// The variant.
    pub variant: String,
    /// Its role.
    pub role: Role,
    /// Updater threads.
    pub threads: usize,
    /// Median updates per second.
    pub updates_per_sec: f64,
    /// Over the unfixed version's median of the same run.
    pub ratio_to_unfixed: f64,
    /// Threshold RMWs per update, deterministic schedule.
    pub rmws_per_update: f64,
}

/// The variants priced for `f`: the unfixed version, its twin and its fix
/// candidates, without lifetime forms (their fixes are off the hot path).
pub fn subjects(f: &Finding, registry: &[Variant]) -> Result<Vec<(Variant, Role)>, String> {
    let unfixed = Variant::find(registry, f.witness.variant)?;
    if unfixed.family == Family::Lifetime {
        return Ok(Vec::new());
    }
    let mut out = vec![(unfixed.clone(), Role::Unfixed)];
    if let Some(t) = &unfixed.twin {
        out.push((Variant::find(registry, t)?, Role::Twin));
    }
    for c in f.fixes {
        let v = Variant::find(registry, c.variant)?;
        if v.family != Family::Lifetime && out.iter().all(|(o, _)| o.name != v.name) {
            out.push((v, Role::Fix));
        }
    }
    Ok(out)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Price `f`'s candidates: `reps` rounds per thread count, each running
/// every subject back to back.
pub fn price(
    f: &Finding,
    registry: &[Variant],
    threads: &[usize],
    updates: usize,
    reps: usize,
    progress: &dyn Fn(&str),
) -> Result<Vec<PriceRow>, String> {
    let subjects = subjects(f, registry)?;
    let mut rows = Vec::new();
    for &t in threads {
        let hp = |v: &Variant| {
            if v.family == Family::PerMemcg {
                HotPath::deep(t, updates)
            } else {
                HotPath::new(t, updates)
            }
        };
        let mut samples = vec![Vec::new(); subjects.len()];
        for r in 0..reps.max(1) {
            for (i, (v, _)) in subjects.iter().enumerate() {
                let m = bench::run(v, &hp(v));
                progress(&format!(
                    "{} threads {t} rep {r}: {} {:.1} M updates/s",
                    f.id,
                    v.name,
                    m.updates_per_sec / 1e6
                ));
                samples[i].push(m.updates_per_sec);
            }
        }
        let medians: Vec<f64> = samples.into_iter().map(median).collect();
        for (i, (v, role)) in subjects.iter().enumerate() {
            rows.push(PriceRow {
                finding: f.id.to_string(),
                variant: v.name.clone(),
                role: *role,
                threads: t,
                updates_per_sec: medians[i],
                ratio_to_unfixed: medians[i] / medians[0],
                rmws_per_update: bench::rmws_per_update(v, &hp(v)),
            });
        }
    }
    Ok(rows)
}
