//! Plans the model makes for a real kernel before it boots: the C
//! reproducer's `-k` for a release and CPU count, and what the reproducer
//! will then print (docs/real-kernels.md, section 5).
//!
//! The reproducer (docs/reproducers/test_c12_skew.c) is the `c12-skew`
//! scenario as a standalone program: child `p/b` one 64 KiB folio, child
//! `p/a` k1 4 KiB pages, `p/b` 8 pages, `p/a` a 64 KiB folio and 4 pages,
//! then the parent's and the child's memory.stat. Which k1 makes the child
//! flushable while its parent is not depends on every update the kernel
//! makes on the way (the LRU add batch, the objcg stock, what a move
//! between memcgs costs), so the model derives it per release and CPU
//! count ([`super::charge`], [`super::predict`]) rather than reading it
//! from one table.

use super::charge::Kernel;
use super::predict::{predict, reads_of, Setup};
use super::spec::{scenarios, Op, Scenario};

/// The scenario the reproducer runs.
pub const REPRODUCER_SCENARIO: &str = "c12-skew";

/// What the model expects the reproducer to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Forecast {
    /// The `-k` it runs with.
    pub k1: usize,
    /// The `-m` it runs with (256 per CPU).
    pub m: usize,
    /// The parent's `anon` in pages right after the skew.
    pub p1: i64,
    /// The parent's after the child's `m` more pages.
    pub p: i64,
    /// The child's then.
    pub a: i64,
}

impl Forecast {
    /// The reproducer's verdict for these values: FAIL when the parent
    /// shows less than its child.
    pub fn verdict(self) -> &'static str {
        if self.p < self.a {
            "FAIL"
        } else {
            "PASS"
        }
    }
}

/// The reproducer's sequence as a scenario: `c12-skew` with k1 pages in
/// its first charge of `p/a` (whatever the CPU count), the parent read
/// (not the child: its read would flush it), `m` more pages of the child,
/// the parent read, then the child.
pub fn reproducer_scenario(k1: usize, m: usize) -> Result<Scenario, String> {
    let mut s = c12_with_k1(k1)?;
    let last = s.ops.pop();
    if last
        != Some(Op::Read {
            cg: "p/a".into(),
            reopen: false,
        })
    {
        return Err("c12-skew no longer ends with a read of p/a".into());
    }
    s.ops.extend([
        Op::Charge {
            kind: super::spec::Unit::Anon4k,
            n: m,
            n_by_cpus: Vec::new(),
            read: None,
            every: 0,
            reopen: false,
            trace: 0,
        },
        Op::Read {
            cg: "p".into(),
            reopen: false,
        },
        Op::Read {
            cg: "p/a".into(),
            reopen: false,
        },
    ]);
    Ok(s)
}

/// The `c12-skew` scenario with k1 pages in its first charge of `p/a`
/// (whatever the CPU count).
pub fn c12_with_k1(k1: usize) -> Result<Scenario, String> {
    let mut s = scenarios()
        .into_iter()
        .find(|s| s.name == REPRODUCER_SCENARIO)
        .ok_or_else(|| format!("no scenario {REPRODUCER_SCENARIO} in the scenario file"))?;
    let first = s
        .ops
        .iter_mut()
        .find(|op| matches!(op, Op::Charge { .. }) && charges_child_a(op))
        .ok_or("c12-skew has no 4 KiB charge of p/a")?;
    if let Op::Charge { n, n_by_cpus, .. } = first {
        *n = k1;
        n_by_cpus.clear();
    }
    Ok(s)
}

fn charges_child_a(op: &Op) -> bool {
    matches!(
        op,
        Op::Charge {
            kind: super::spec::Unit::Anon4k,
            ..
        }
    )
}

/// What the reproducer prints with `-k k1` on `release` at `cpus`, by the
/// model (from a flushed start, the LRU add batch empty: the reproducer
/// drains it before it charges).
pub fn forecast(release: &str, cpus: usize, k1: usize) -> Result<Forecast, String> {
    let kernel = Kernel::from_release(release)?;
    forecast_with(kernel, cpus, k1)
}

fn forecast_with(kernel: Kernel, cpus: usize, k1: usize) -> Result<Forecast, String> {
    let m = 256 * cpus;
    let s = reproducer_scenario(k1, m)?;
    let reads = reads_of(&s, cpus, 0);
    let p = predict(&s, kernel, cpus, Setup::default(), &reads, (0, 0))?;
    match p.as_slice() {
        [p1, p2, a2] => Ok(Forecast {
            k1,
            m,
            p1: p1.anon,
            p: p2.anon,
            a: a2.anon,
        }),
        _ => Err(format!(
            "the reproducer: {} reads predicted, 3 expected",
            p.len()
        )),
    }
}

/// The k1 the reproducer runs with on `release` at `cpus`: of the k1
/// (0 to 160) for which the model predicts the loss on the early break's
/// lineage with this release's updates, the middle of the longest run (the
/// value farthest from a k1 that would not show it). `None` if no k1
/// shows it.
pub fn reproducer_k1(release: &str, cpus: usize) -> Result<Option<usize>, String> {
    let kernel = Kernel::from_release(release)?.with_break();
    let mut best: Option<(usize, usize)> = None;
    let mut run: Option<usize> = None;
    for k1 in 0..=161usize {
        let loses = k1 <= 160 && forecast_with(kernel, cpus, k1)?.verdict() == "FAIL";
        match (loses, run) {
            (true, None) => run = Some(k1),
            (false, Some(from)) => {
                if best.is_none_or(|(f, t)| t - f < k1 - from) {
                    best = Some((from, k1));
                }
                run = None;
            }
            _ => {}
        }
    }
    Ok(best.map(|(from, to)| from + (to - from - 1) / 2))
}

/// The releases and CPU counts the C reproducer's own table covers: every
/// kernel of the project's `all` set with anonymous mTHP (6.12 on), 1 to 4
/// CPUs.
pub const TABLE_RELEASES: [&str; 9] = [
    "6.12", "6.16", "6.17", "6.18", "6.19", "7.0", "7.1", "7.2", "7.3",
];

/// The C reproducer's `k1_table` as the model computes it (the lines
/// between its `BEGIN k1_table` and `END k1_table` markers).
pub fn c_table() -> Result<String, String> {
    let mut out = String::new();
    for r in TABLE_RELEASES {
        let mut cells = Vec::new();
        for cpus in 1..=4 {
            let k1 = reproducer_k1(r, cpus)?
                .ok_or_else(|| format!("no k1 shows the loss for {r} at {cpus} CPUs"))?;
            cells.push(format!("{{ \"{r}\", {cpus}, {k1} }}"));
        }
        out.push_str(&format!("\t{},\n", cells.join(", ")));
    }
    Ok(out)
}
