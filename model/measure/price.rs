//! The price of a finding's fix candidates on the hot path, measured side
//! by side in one run with the unfixed version and its no-skip twin:
//! updates per second on real threads (noisy: compare only within one
//! run) and threshold RMWs per update on the deterministic schedule
//! ([`bench::rmws_per_update`], the same on every machine). A per-memcg
//! version charges a grandchild of the root, so that its walk climbs three
//! levels; the reader reads the root.
//!
//! [`costs`] prices them in kernel terms instead ([`cost`]): per update and
//! per level of the walk, the `this_cpu_*` operations, atomics and cache
//! lines, beside the unfixed version and the version before the patch
//! that introduced the finding.

pub mod cost;

use serde::Serialize;

use crate::measure::bench::{self, HotPath};
use crate::protocol::findings::{Expected, Finding};
use crate::protocol::{catalogue, Family, Variant};

use cost::{Cost, Ops};

/// What a measured variant is to the finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Role {
    /// The version the finding is shown on.
    Unfixed,
    /// Its no-skip twin.
    Twin,
    /// A fix candidate.
    Fix,
    /// The release before the patch that introduced the finding.
    Before,
    /// A candidate the model refutes (compared, not proposed).
    Refuted,
}

impl Role {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Role::Unfixed => "unfixed",
            Role::Twin => "twin",
            Role::Fix => "fix",
            Role::Before => "before",
            Role::Refuted => "refuted",
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

/// The version before the patch that introduced `f`: the catalogue's form
/// for the release before `f.first` ([`catalogue::for_release`]), in the
/// witness's wing (`-tree` when the witness is a tree form); `None` where
/// the catalogue models no earlier release or names the unfixed version
/// itself.
pub fn before_patch(f: &Finding, registry: &[Variant]) -> Option<Variant> {
    let (major, minor) = f.first.strip_prefix('v')?.split_once('.')?;
    let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
    let base = catalogue::for_release(major, minor.checked_sub(1)?).ok()?;
    let suffix = f
        .witness
        .variant
        .split_once('-')
        .map_or(String::new(), |(_, s)| format!("-{s}"));
    let v = Variant::find(registry, &format!("{}{suffix}", base.name))
        .ok()
        .unwrap_or(base);
    (v.name != f.witness.variant).then_some(v)
}

/// The variants `f`'s cost table prices: the unfixed version, the version
/// before the patch, and every candidate on the hot path.
pub fn cost_subjects(f: &Finding, registry: &[Variant]) -> Result<Vec<(Variant, Role)>, String> {
    let unfixed = Variant::find(registry, f.witness.variant)?;
    if unfixed.family == Family::Lifetime {
        return Ok(Vec::new());
    }
    let mut out = vec![(unfixed, Role::Unfixed)];
    if let Some(b) = before_patch(f, registry) {
        out.push((b, Role::Before));
    }
    for c in f.fixes {
        let v = Variant::find(registry, c.variant)?;
        let role = match c.expected {
            Expected::Fixes => Role::Fix,
            Expected::Refuted => Role::Refuted,
        };
        if v.family != Family::Lifetime && out.iter().all(|(o, _)| o.name != v.name) {
            out.push((v, role));
        }
    }
    Ok(out)
}

/// One variant's cost at one CPU count.
#[derive(Clone, Debug, Serialize)]
pub struct CostRow {
    /// The finding.
    pub finding: String,
    /// Its role.
    pub role: Role,
    /// The cost per update.
    pub cost: Cost,
}

/// The hot path a variant is priced on: a grandchild of the root (depth 3)
/// for per-memcg versions, the root for the global threshold's, which
/// have no walk.
pub fn priced_path(v: &Variant, cpus: usize) -> HotPath {
    if v.family == Family::PerMemcg {
        HotPath::deep(cpus, 1)
    } else {
        HotPath::new(cpus, 1)
    }
}

/// Price `f`'s cost subjects in kernel terms at each CPU count.
pub fn costs(f: &Finding, registry: &[Variant], cpus: &[usize]) -> Result<Vec<CostRow>, String> {
    let mut rows = Vec::new();
    for (v, role) in cost_subjects(f, registry)? {
        for &n in cpus {
            rows.push(CostRow {
                finding: f.id.to_string(),
                role,
                cost: cost::cost(&v, &priced_path(&v, n)),
            });
        }
    }
    Ok(rows)
}

/// The rows of one variant that differ from the previous CPU count's,
/// each with the CPU counts it stands for (`1-3` when the count does not
/// change it).
fn collapsed(rows: &[CostRow]) -> Vec<(String, &CostRow)> {
    let mut out: Vec<(Vec<usize>, &CostRow)> = Vec::new();
    for r in rows {
        match out.last_mut() {
            Some((ns, last))
                if last.cost.variant == r.cost.variant && same(&last.cost, &r.cost) =>
            {
                ns.push(r.cost.cpus)
            }
            _ => out.push((vec![r.cost.cpus], r)),
        }
    }
    out.into_iter()
        .map(|(ns, r)| {
            let label = match (ns.first(), ns.last()) {
                (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
                _ => ns[0].to_string(),
            };
            (label, r)
        })
        .collect()
}

fn same(a: &Cost, b: &Cost) -> bool {
    let close = |x: &Ops, y: &Ops| {
        let (x, y) = (ops_vec(x), ops_vec(y));
        x.iter().zip(&y).all(|(p, q)| (p - q).abs() < 5e-4)
    };
    a.levels.len() == b.levels.len()
        && a.levels.iter().zip(&b.levels).all(|(x, y)| close(x, y))
        && close(&a.global, &b.global)
}

fn ops_vec(o: &Ops) -> [f64; 8] {
    [
        o.this_cpu,
        o.percpu_plain,
        o.atomic_reads,
        o.atomic_rmws,
        o.locks,
        o.barriers,
        o.local_lines,
        o.shared_lines,
    ]
}

/// A figure in at most 6 characters: 3 decimals from 0.01 to 10, fewer
/// above, two significant digits below.
fn fig(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x < 0.01 {
        format!("{x:.1e}")
    } else if x < 10.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.1}")
    }
}

/// One column's per-level figures, the charged memcg first: `a / b / c`,
/// with the accesses to no memcg's data as `+ g` when there are any.
fn per_level(c: &Cost, pick: Pick) -> String {
    let mut s: Vec<String> = c.levels.iter().map(|o| fig(pick(o))).collect();
    if c.levels.len() > 1 {
        s = vec![s.join(" / ")];
    }
    let g = pick(&c.global);
    if g != 0.0 {
        s.push(format!("+ {}", fig(g)));
    }
    s.join(" ")
}

/// One figure of [`Ops`].
type Pick = fn(&Ops) -> f64;

const COLUMNS: [(&str, Pick); 8] = [
    ("this_cpu_*", |o| o.this_cpu),
    ("per-CPU ONCE/plain", |o| o.percpu_plain),
    ("atomic reads", |o| o.atomic_reads),
    ("atomic RMWs", |o| o.atomic_rmws),
    ("lock ops", |o| o.locks),
    ("barriers", |o| o.barriers),
    ("local lines", |o| o.local_lines),
    ("shared lines", |o| o.shared_lines),
];

/// `f`'s cost table as Markdown: one row per variant and CPU count that
/// changes it, every column per level (charged memcg / parent / root) with
/// the global part after `+`.
pub fn cost_markdown(rows: &[CostRow]) -> String {
    let mut out = String::from("| variant | role | CPUs |");
    for (name, _) in COLUMNS {
        out.push_str(&format!(" {name} |"));
    }
    out.push_str("\n|---|---|---|");
    out.push_str(&"---|".repeat(COLUMNS.len()));
    out.push('\n');
    for (cpus, r) in collapsed(rows) {
        out.push_str(&format!(
            "| {} | {} | {cpus} |",
            r.cost.variant,
            r.role.name()
        ));
        for (_, pick) in COLUMNS {
            out.push_str(&format!(" {} |", per_level(&r.cost, pick)));
        }
        out.push('\n');
    }
    out
}

/// `f`'s cost table as text within 80 columns: per variant and CPU count
/// that changes it, a heading, then one line per level of the walk (the
/// charged memcg, its parent, the root), the words of no memcg and the
/// total per update.
pub fn cost_text(rows: &[CostRow]) -> String {
    let mut out = format!("{:<8}", "");
    for h in [
        "this_cpu", "ONCE", "a.read", "a.RMW", "lock", "mb", "local", "shared",
    ] {
        out.push_str(&format!(" {h:>8}"));
    }
    out.push('\n');
    let line = |label: &str, o: &Ops| {
        let mut l = format!("  {label:<6}");
        for (_, pick) in COLUMNS {
            l.push_str(&format!(" {:>8}", fig(pick(o))));
        }
        l.push('\n');
        l
    };
    for (cpus, r) in collapsed(rows) {
        let c = &r.cost;
        out.push_str(&format!("{} ({}), CPUs {cpus}\n", c.variant, r.role.name()));
        let n = c.levels.len();
        if n > 1 {
            for (i, o) in c.levels.iter().enumerate() {
                let label = match (i, n - 1 - i) {
                    (0, _) => "memcg",
                    (_, 0) => "root",
                    _ => "parent",
                };
                out.push_str(&line(label, o));
            }
            if c.global != Ops::default() {
                out.push_str(&line("global", &c.global));
            }
        }
        out.push_str(&line("total", &c.total));
    }
    out
}
