//! The checked-in litmus corpus, docs/litmus/ (`flushcheck litmus --out
//! DIR` regenerates it).
//!
//! Two groups:
//! - **Findings**: a test for every weak-memory finding of
//!   docs/findings.md and one for each fix of it. A finding's test is its
//!   loom witness, sliced by [`crate::report::litmus::program`]; a fix is that test
//!   with the barrier the fix adds, where the fixed variant (`-mb`) puts
//!   it. Each states the result LKMM gives (`Result:`, checked with herd7
//!   where available, `flushcheck litmus --check`) and, beside it, the
//!   model's verdicts, measured while generating: what loom finds in the
//!   variant, and the test itself run under loom and the SC DFS through the
//!   kernel-idiom layer.
//! - **Shapes**: the classic shapes of [`crate::report::litmus::shapes`], with
//!   loom's and the DFS's outcomes (docs/weak-memory.md).
//!
//! Every figure in a header is measured when the corpus is generated; the
//! searches are deterministic, so the same code writes the same files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::explore::Backend;

use crate::report::litmus::prog::{Observation, Program};
use crate::report::litmus::run::{measure, measure_spawned, Measured};
use crate::report::litmus::shapes as litmus_shapes;

use Observation::Sometimes;

/// One file of the corpus.
pub struct Entry {
    /// The test (its `expected` is LKMM's result).
    pub prog: Program,
    /// The README's group.
    pub group: &'static str,
    /// The README's line about it.
    pub summary: String,
    /// The test under loom (unbounded, bound 2) and the DFS.
    pub measured: Vec<Measured>,
}

/// The loom searches a corpus test is measured with: unbounded, and at
/// preemption bound 2.
pub fn loom_searches() -> [Backend; 2] {
    [
        Backend::Loom {
            preemption_bound: None,
        },
        Backend::Loom {
            preemption_bound: Some(2),
        },
    ]
}

/// Every sequentially consistent interleaving.
pub fn dfs() -> Backend {
    Backend::ShuttleDfs {
        max_schedules: 1_000_000,
        sleep_sets: true,
        stateful: false,
        symmetry: false,
        workers: 1,
    }
}

/// `prog` under loom (unbounded, bound 2) and the DFS, its last thread on
/// the execution's main thread.
pub fn measure_all(prog: &Program, budget: Duration) -> Result<Vec<Measured>, String> {
    measure_searches(prog, budget, false)
}

/// [`measure_all`] with every thread spawned and main only joining them:
/// with the last thread on main, loom's search misses executions in which
/// that thread's load reads a later RMW of another (tokio-rs/loom#166,
/// tests/suite/loom_gap.rs), which a reader's gate followed by an `if` is.
pub fn measure_all_spawned(prog: &Program, budget: Duration) -> Result<Vec<Measured>, String> {
    measure_searches(prog, budget, true)
}

fn measure_searches(
    prog: &Program,
    budget: Duration,
    spawned: bool,
) -> Result<Vec<Measured>, String> {
    let mut out = Vec::new();
    for b in loom_searches().into_iter().chain([dfs()]) {
        let m = if spawned {
            measure_spawned(prog, &b, budget)?
        } else {
            measure(prog, &b, budget)?
        };
        if !m.finished {
            return Err(format!(
                "litmus test {}: the {} search did not finish",
                prog.name,
                b.search()
            ));
        }
        out.push(m);
    }
    Ok(out)
}

/// One line per search: `loom, unbounded: Sometimes (30 executions)`.
pub fn verdict_lines(prog: &Program, ms: &[Measured]) -> Vec<String> {
    let target = prog.target();
    ms.iter()
        .map(|m| {
            let what = match &m.backend {
                Backend::Loom {
                    preemption_bound: None,
                } => "loom, unbounded".to_string(),
                Backend::Loom {
                    preemption_bound: Some(b),
                } => format!("loom, preemption bound {b}"),
                _ => "every SC interleaving (DFS)".to_string(),
            };
            format!(
                "{what}: {} ({} executions, {} outcomes)",
                m.observation(&target),
                m.executions,
                m.outcomes.len()
            )
        })
        .collect()
}

/// The entry for every classic shape.
pub fn shapes(budget: Duration) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for s in litmus_shapes::all() {
        let mut p = s.prog.clone();
        let ms = measure_all(&p, budget)?;
        let expected = p.expected.unwrap_or(Sometimes);
        let mut doc = wrapped(&format!("{}.", capitalise(s.what)));
        doc.push(if s.catalogue {
            "LKMM's result: the kernel's tools/memory-model/litmus-tests file of this name.".into()
        } else {
            "LKMM's result: herd7 with the kernel's tools/memory-model (not in its catalogue)."
                .into()
        });
        doc.push(String::new());
        doc.push("Through the kernel-idiom layer (flushcheck):".into());
        doc.extend(verdict_lines(&p, &ms).into_iter().map(|l| format!("  {l}")));
        p.doc = doc;
        let summary = format!(
            "LKMM {expected}; loom {} (bound 2: {}); SC {}",
            ms[0].observation(&p.target()),
            ms[1].observation(&p.target()),
            ms[2].observation(&p.target())
        );
        out.push(Entry {
            prog: p,
            group: "shapes",
            summary,
            measured: ms,
        });
    }
    Ok(out)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The README of the corpus, its counts taken from `entries`.
pub fn readme(entries: &[Entry]) -> String {
    let mut out = String::new();
    let count = |g: &str| entries.iter().filter(|e| e.group == g).count();
    let racy = entries.iter().filter(|e| e.prog.datarace).count();
    let _ = writeln!(
        out,
        "Litmus tests of flushcheck, for herd7 with the Linux-kernel memory model\n\
         (tools/memory-model): {} tests, {} for the weak-memory findings and their\n\
         fixes, {} classic shapes; {} expect herd7 to flag a data race. Generated\n\
         by `flushcheck litmus --out docs/litmus`; `cargo test --release --test\n\
         suite litmus_corpus` checks that these files are what the code generates.\n\n\
         Each file follows tools/memory-model/scripts/judgelitmus.sh: its\n\
         `Result:` line states herd7's answer and ends in DATARACE if and only if\n\
         herd7 is expected to print `Flag data-race`, so the corpus runs under\n\
         the kernel's scripts (checklitmus.sh) as it is. `flushcheck litmus\n\
         --check --lkmm DIR` runs herd7 on each file and judges its output by\n\
         the same rules: the Observation against the `Result:` word, herd7's\n\
         Flag lines against DATARACE (and any ` * Flag:` lines), and the test\n\
         name against the file name.\n\n\
         Each access is marked as the kernel release marks it (plain,\n\
         data_race(), READ_ONCE(), WRITE_ONCE(), a per-CPU operation, an\n\
         atomic); LKMM sees data_race() and the per-CPU operations as plain, and\n\
         a comment after each plain access gives the kernel's spelling.\n\n\
         Names follow tools/memory-model/litmus-tests: the shape, one descriptor\n\
         per thread (po = program order, once = READ_ONCE/WRITE_ONCE, plain = a\n\
         plain C access, fencemb = smp_mb() between, atomicadd, atomicread,\n\
         cmpxchg, acquire, release, lock), then for the findings the kernel site\n\
         (rstat-tree: the v5.7-v6.14 updated tree; rstat-llist: the v6.17-v7.1\n\
         llist; trigger: the threshold-triggered flush). Each header states\n\
         LKMM's result and, beside it, the model's verdicts.",
        entries.len(),
        count("findings"),
        count("shapes"),
        racy
    );
    let mut groups: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        groups.entry(e.group).or_default().push(e);
    }
    for (g, title) in [
        (
            "findings",
            "Weak-memory findings (docs/findings.md sections 13 and 15) and their fixes",
        ),
        (
            "shapes",
            "Classic shapes, measured against loom (docs/weak-memory.md)",
        ),
    ] {
        let _ = writeln!(out, "\n{title}:\n");
        for e in groups.get(g).into_iter().flatten() {
            let _ = writeln!(out, "{}.litmus", e.prog.name);
            let _ = writeln!(out, "\t{}", e.summary);
        }
    }
    out
}

/// Write `entries` and the README into `dir`.
pub fn write(dir: &Path, entries: &[Entry]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let path = dir.join(format!("{}.litmus", e.prog.name));
        std::fs::write(&path, e.prog.render()?).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let path = dir.join("README");
    std::fs::write(&path, readme(entries)).map_err(|e| format!("{}: {e}", path.display()))
}

pub(super) fn wrapped(text: &str) -> Vec<String> {
    crate::observe::record::wrap(text, 70)
}
