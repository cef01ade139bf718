//! The focused plan: every mutant is still searched by each of its
//! designated killers; a sampled SC search is left out only where the
//! exhaustive DFS settled the entry; twins are searched under loom for the
//! variants that name them. And the default run, run once: it passes, fits
//! a screen, and names every variant.

use memcg_flush_model::check::{Sizes, Suite};
use memcg_flush_model::drive::plan::Then;
use memcg_flush_model::drive::{run_matrix, Executor, Plan};
use memcg_flush_model::protocol::{catalogue, Kind};
use memcg_flush_model::vocab::BackendName;

fn default_plan() -> Plan {
    let registry = memcg_flush_model::cli::registry(Vec::new()).expect("catalogue");
    Plan::new(Suite::standard(&Sizes::default()), registry)
}

/// For every mutant and each designated (property, backend), the plan
/// holds a search by that backend, armed with that property, on an entry
/// the designation allows.
#[test]
fn the_plan_searches_every_mutant_by_each_designated_killer() {
    let plan = default_plan();
    let tasks = plan.tasks();
    let mut missing = Vec::new();
    for v in plan.variants.iter().filter(|v| v.kind == Kind::Mutant) {
        for d in &v.killed_by {
            for b in &d.backends {
                let found = tasks.iter().any(|t| {
                    matches!(t.then, Then::UntilKilled(_))
                        && t.steps.iter().any(|s| {
                            s.variant.name == v.name
                                && s.spec.backend.id() == *b
                                && s.spec.arm.contains(&d.property)
                                && d.entry.as_ref().is_none_or(|e| *e == s.spec.entry)
                        })
                });
                if !found {
                    missing.push(format!("{} {} {}", v.name, d.property, b));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "designated killers not searched: {missing:#?}"
    );
}

/// A mutant is searched by no backend that does not kill it.
#[test]
fn the_plan_searches_mutants_by_their_killers_only() {
    let plan = default_plan();
    for t in plan.tasks() {
        for s in &t.steps {
            if s.variant.kind == Kind::Mutant {
                let b = s.spec.backend.id();
                assert!(
                    s.variant.killed_by.iter().any(|d| d.backends.contains(&b)),
                    "{} searched by {b}",
                    s.variant.name
                );
            }
        }
    }
}

/// Twins are no variants of the default plan; each is searched under loom
/// (hidden) on the entries of the variants that name it.
#[test]
fn twins_are_searched_under_loom_for_the_variants_that_name_them() {
    let plan = default_plan();
    assert!(plan.variants.iter().all(|v| v.kind != Kind::Twin));
    let tasks = plan.tasks();
    for t in ["v6.4-no-skip", "v6.8-no-skip", "v6.17-no-break"] {
        let runs: Vec<_> = tasks
            .iter()
            .flat_map(|x| &x.steps)
            .filter(|s| s.variant.name == t)
            .collect();
        assert!(!runs.is_empty(), "{t} not searched");
        assert!(
            runs.iter()
                .all(|s| s.hidden && s.spec.backend.id() == BackendName::Loom),
            "{t} searched otherwise"
        );
    }
}

/// On an entry the DFS settles (v6.0 on `pair`), the sampled searches are
/// left out and say why; the DFS's cell is exhaustive.
#[test]
fn a_settling_dfs_leaves_out_the_sampled_searches_of_its_entry() {
    let mut plan = default_plan();
    plan.variants = vec![catalogue::by_name("v6.0").expect("v6.0")];
    plan.suite.entries.retain(|e| e.name == "pair");
    plan.backends = vec![
        BackendName::ShuttleRandom,
        BackendName::ShuttlePct,
        BackendName::ShuttleDfs,
    ];
    let m = run_matrix(&plan, &Executor::InProcess, &|_, _, _| {});
    let left: Vec<_> = m
        .not_run
        .iter()
        .filter(|n| n.variant == "v6.0" && n.entry == "pair")
        .collect();
    assert_eq!(left.len(), 2, "{:?}", m.not_run);
    assert!(left
        .iter()
        .all(|n| n.why.contains("settled by the exhaustive DFS")));
    assert!(m
        .cells
        .iter()
        .all(|c| c.backend == BackendName::ShuttleDfs && c.exhaustive));
    // Unfocused, the same plan searches all three.
    plan.focused = false;
    let full = run_matrix(&plan, &Executor::InProcess, &|_, _, _| {});
    assert!(full.not_run.is_empty());
    assert!(full
        .cells
        .iter()
        .any(|c| c.backend == BackendName::ShuttleRandom));
}

/// The default run, once: exit 0, one screen, every variant named, both
/// summary lines with nothing out of place.
#[test]
fn the_default_run_passes_on_one_screen() {
    let r = super::common::flushcheck::<&str>(&[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines.len() <= 150, "{} lines", lines.len());
    // Blind entries per property (issue 41): every property with a premise
    // is counted, each at 0.
    let blind = lines
        .iter()
        .find(|l| l.starts_with("blind entries "))
        .expect("the blind entries line");
    assert!(blind.starts_with("blind entries 0 "), "{blind}");
    for p in memcg_flush_model::Property::all().filter(|p| p.def().premise.is_some()) {
        assert!(
            blind.contains(&format!(" {} 0", p.name())),
            "{}: {blind}",
            p.name()
        );
    }
    // The first screen answers the seed's question and lists the findings.
    // (17 lines: the answer, its same-schedule caveat, how it was
    // searched, and the findings.)
    let first = lines[..17.min(lines.len())].join("\n");
    assert!(first.contains("lose a flush a reader needed?"), "{first}");
    assert!(
        first.contains("no_lost_flush on v6.0: HOLDS")
            && first.contains("exhaustive (DFS, every SC interleaving) on pair"),
        "{first}"
    );
    // The HOLDS is the outcome sense's: the next line says v6.0 refutes
    // the same-schedule sense, as the cells show.
    assert!(
        first.contains(
            "(in the outcome sense; in the same-schedule sense v6.0 does lose one: no_lost_flush_same_schedule VIOLATED here"
        ),
        "{first}"
    );
    for f in memcg_flush_model::protocol::findings::all() {
        assert!(
            first.contains(&format!("  {} ", f.id)) && first.contains(f.class.name()),
            "{} not on the first screen:\n{first}",
            f.id
        );
    }
    assert!(
        crate::cli::every_command_parses(&r.stdout) >= 3,
        "{}",
        r.stdout
    );
    let registry = memcg_flush_model::cli::registry(Vec::new()).expect("catalogue");
    // Fix candidates are not in the default run (`--variant` and
    // `flushcheck findings --check` run them).
    for v in registry
        .iter()
        .filter(|v| !matches!(v.kind, Kind::Bound | Kind::Twin | Kind::Fix))
    {
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().nth(1) == Some(v.name.as_str())),
            "{} not named",
            v.name
        );
    }
    let flush = lines
        .iter()
        .find(|l| l.contains(" cells in ") && !l.starts_with("lifetime"))
        .expect("the flush summary line");
    let life = lines
        .iter()
        .find(|l| l.starts_with("lifetime: "))
        .expect("the lifetime summary line");
    // The cell counts the README and docs/running.md quote are this run's.
    let count = |l: &str| l.split_whitespace().find_map(|w| w.parse::<usize>().ok());
    let (nf, nl) = (count(flush).unwrap(), count(life).unwrap());
    let quoted = format!("{nf} flush cells and {nl} lifetime cells");
    for doc in ["README.md", "docs/running.md"] {
        let text =
            std::fs::read_to_string(format!("{}/{doc}", env!("CARGO_MANIFEST_DIR"))).expect("doc");
        assert!(text.contains(&quoted), "{doc} does not say \"{quoted}\"");
    }
    for s in [flush, life] {
        for part in [
            "must-hold violations 0",
            "mutant survivals 0",
            "findings missed 0",
        ] {
            assert!(s.contains(part), "{s}");
        }
    }
    let mutants = |family_life: bool| {
        registry
            .iter()
            .filter(|v| v.kind == Kind::Mutant)
            .filter(|v| (v.family == memcg_flush_model::vocab::Family::Lifetime) == family_life)
            .count()
    };
    assert!(
        flush.contains(&format!("mutants killed {0}/{0}", mutants(false))),
        "{flush}"
    );
    assert!(
        life.contains(&format!("mutants killed {0}/{0}", mutants(true))),
        "{life}"
    );
}

/// The default run samples kernel versions, benign rewrites and fix
/// candidates at a quarter of their entry's schedules and everything else
/// (mutants) whole; the command line's `--variant` and `--full` sample
/// every variant whole.
#[test]
fn only_the_default_run_samples_a_quarter_of_the_catalogue() {
    use memcg_flush_model::explore::Backend;
    let n = |b: &Backend| match b {
        Backend::ShuttleRandom { iterations, .. } | Backend::ShuttlePct { iterations, .. } => {
            Some(*iterations)
        }
        _ => None,
    };
    // (the entry's schedules, the search's) for every sampled search of `kind`.
    let sizes = |plan: &Plan, kind: Kind| -> Vec<(usize, usize)> {
        plan.tasks()
            .iter()
            .flat_map(|t| &t.steps)
            .filter(|s| s.variant.kind == kind && !s.hidden)
            .filter_map(|s| {
                let ran = n(&s.spec.backend)?;
                let entry = plan.suite.entry(&s.spec.entry).expect("entry");
                let whole = entry
                    .backends
                    .iter()
                    .find(|b| b.id() == s.spec.backend.id())
                    .and_then(n)
                    .expect("the entry's search");
                Some((whole, ran))
            })
            .collect()
    };
    let plan = default_plan();
    for kind in [Kind::Kernel, Kind::Benign, Kind::Fix] {
        let s = sizes(&plan, kind);
        assert!(!s.is_empty(), "{kind:?}");
        assert!(s.iter().all(|&(w, r)| r == w / 4), "{kind:?}: {s:?}");
    }
    let s = sizes(&plan, Kind::Mutant);
    assert!(!s.is_empty() && s.iter().all(|&(w, r)| r == w), "{s:?}");
    for args in [&["--variant", "v6.0"][..], &["--full"][..]] {
        #[derive(clap::Parser)]
        struct Cmd {
            #[command(flatten)]
            m: memcg_flush_model::cli::matrix::MatrixArgs,
        }
        let cmd = std::iter::once("flushcheck").chain(args.iter().copied());
        let m = <Cmd as clap::Parser>::parse_from(cmd).m;
        let reg = memcg_flush_model::cli::registry(Vec::new()).expect("catalogue");
        let plan = memcg_flush_model::cli::matrix::build_plan(&m, &reg).expect("plan");
        let s = sizes(&plan, Kind::Kernel);
        assert!(
            !s.is_empty() && s.iter().all(|&(w, r)| r == w),
            "{args:?}: {s:?}"
        );
    }
}

/// The default run checks, for every behavioural finding, at least one fix
/// candidate that the finding expects to fix, and no refuted one; the fix
/// of an SC behaviour gets loom at bound 0 there and its entry's bound
/// under `--variant`, a weak-memory finding's fix its entry's bound always.
#[test]
fn the_default_run_checks_every_findings_proposed_fixes() {
    use memcg_flush_model::explore::Backend;
    use memcg_flush_model::protocol::findings::{self, Expected};
    let plan = default_plan();
    let checked = |name: &str| plan.variants.iter().any(|v| v.name == name);
    for f in findings::all().iter().filter(|f| !f.fixes.is_empty()) {
        assert!(
            f.fixes
                .iter()
                .any(|c| c.expected == Expected::Fixes && checked(c.variant)),
            "{}: no proposed fix in the default run",
            f.id
        );
        for c in f.fixes.iter().filter(|c| c.expected == Expected::Refuted) {
            assert!(!checked(c.variant), "{}: refuted {} runs", f.id, c.variant);
        }
    }
    let loom_bounds = |plan: &Plan, name: &str| -> Vec<Option<usize>> {
        plan.tasks()
            .iter()
            .flat_map(|t| &t.steps)
            .filter(|s| s.variant.name == name)
            .filter_map(|s| match s.spec.backend {
                Backend::Loom { preemption_bound } => Some(preemption_bound),
                _ => None,
            })
            .collect()
    };
    let sc = loom_bounds(&plan, "v6.8-fix-gate-or-root");
    assert!(!sc.is_empty() && sc.iter().all(|b| *b == Some(0)), "{sc:?}");
    let weak = loom_bounds(&plan, "v6.17-tree-mb-rmb");
    assert!(
        weak.contains(&Some(1)) && !weak.contains(&Some(0)),
        "{weak:?}"
    );
    let mut whole = plan.clone();
    whole.catalogue_share = 1;
    let sc = loom_bounds(&whole, "v6.8-fix-gate-or-root");
    assert!(sc.contains(&Some(1)) && !sc.contains(&Some(0)), "{sc:?}");
}
