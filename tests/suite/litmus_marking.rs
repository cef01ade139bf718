//! Issue 40: litmus exports mark each access as the kernel release marks
//! it. The release tables ([`memcg_flush_model::kernel::marking`]) are the
//! kernel's markings as data, with the file and line each was read at; the
//! export consults them, and these tests compare every exported access
//! with its table entry, pin the markings the findings rest on, and check
//! the export's control flow, final state, locks and refusals.

use memcg_flush_model::kernel::marking::{
    Kind, Mark, Marking, Release, VarKind, GLOBAL, ON_LIST_RACE, RELEASES, V6_17, V6_8,
    V6_8_TREE_CANDIDATE,
};
use memcg_flush_model::kernel::{LockName, Var};
use memcg_flush_model::observe::record::Step;
use memcg_flush_model::report::litmus::herd::check_syntax;
use memcg_flush_model::report::litmus::prog::{Instr, Load, Store};
use memcg_flush_model::report::litmus::translate::marked;
use memcg_flush_model::report::litmus::{export, program};
use memcg_flush_model::vocab::obs::{Access, Actor, Idiom, Op};

fn step(actor: Actor, var: Var, op: Op, idiom: Idiom) -> Step {
    Step {
        actor,
        text: String::new(),
        access: Some(Access { var, op, idiom }),
    }
}

/// Whether the header of `out` says `text`, however it is wrapped.
fn says(out: &str, text: &str) -> bool {
    let header = out.split_once("*)").map_or(out, |(h, _)| h);
    let flat: Vec<&str> = header
        .lines()
        .map(|l| l.trim_start_matches(" *").trim())
        .collect();
    flat.join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .contains(text)
}

/// A decision step of a reader's gate (`trace_memcg_flush_stats()`).
fn decision(actor: Actor, flush: bool) -> Step {
    Step {
        actor,
        text: if flush { "-> flush" } else { "-> no flush" }.into(),
        access: None,
    }
}

/// A variable of `kind` (memcg 1, CPU 0 where it has them).
fn var_of(kind: VarKind) -> Var {
    match kind {
        VarKind::State => Var::State { memcg: 1, cpu: 0 },
        VarKind::Aggregate => Var::Aggregate { memcg: 1 },
        VarKind::Threshold => Var::Threshold { memcg: Some(1) },
        VarKind::StatsUpdates => Var::StatsUpdates {
            memcg: Some(1),
            cpu: 0,
        },
        VarKind::FlushTime => Var::FlushTime,
        VarKind::Ongoing => Var::Lock(LockName::StatsFlushOngoing),
        VarKind::UpdatedNext => Var::UpdatedNext { memcg: 1, cpu: 0 },
        VarKind::LlistNode => Var::LlistNode { memcg: 1, cpu: 0 },
        VarKind::LlistHead => Var::LlistHead { cpu: 0 },
    }
}

/// The model's access at `site`: its idiom (or the one the model uses
/// there, for entries that match any), and an operation of its kind.
fn access_at(site: &Marking) -> (Op, Idiom) {
    let idiom = site.idiom.unwrap_or(match site.kind {
        Kind::Load => Idiom::ReadOnce,
        Kind::Store => Idiom::WriteOnce,
        Kind::Rmw => Idiom::Cmpxchg,
    });
    let op = match (site.kind, idiom) {
        (Kind::Load, _) => Op::Read(3),
        (Kind::Store, _) => Op::Write(3),
        (Kind::Rmw, Idiom::ThisCpuAdd | Idiom::AtomicAdd) => Op::Add { val: 2, new: 5 },
        (Kind::Rmw, Idiom::AtomicXchg) => Op::Xchg { old: 0, new: 1 },
        (Kind::Rmw, _) => Op::CmpXchg {
            old: 0,
            new: 1,
            ok: true,
        },
    };
    (op, idiom)
}

/// The statements LKMM needs for `site`'s marking: the primitive a
/// statement must use.
fn lkmm_form(site: &Marking, i: &Instr) -> bool {
    let spelled = Some(site.spelling);
    match (site.mark, i) {
        (
            m,
            Instr::Load {
                load: Load::Plain(k),
                ..
            },
        ) if m.plain_to_lkmm() => *k == spelled,
        (
            m,
            Instr::Store {
                store: Store::Plain(k),
                ..
            },
        ) if m.plain_to_lkmm() => *k == spelled,
        (
            Mark::ReadOnce,
            Instr::Load {
                load: Load::Once, ..
            },
        ) => true,
        (
            Mark::WriteOnce,
            Instr::Store {
                store: Store::Once, ..
            },
        ) => true,
        (
            Mark::LoadAcquire,
            Instr::Load {
                load: Load::Acquire,
                ..
            },
        ) => true,
        (
            Mark::Atomic,
            Instr::Load {
                load: Load::Atomic, ..
            },
        ) => site.spelling.contains("_read"),
        (
            Mark::Atomic,
            Instr::Store {
                store: Store::Atomic,
                ..
            },
        ) => site.spelling.contains("_set"),
        (Mark::Atomic, Instr::AtomicAdd { .. }) => site.spelling.contains("_add"),
        (Mark::Atomic, Instr::Xchg { .. }) => site.spelling.contains("xchg"),
        (Mark::Atomic | Mark::Cmpxchg, Instr::Cmpxchg { .. }) => site.spelling.contains("cmpxchg"),
        _ => false,
    }
}

/// Every site of every release, made by the model's access, comes out of
/// the translation with that site and as LKMM needs its marking: plain
/// (with the kernel's spelling) for plain C, data_race() and the per-CPU
/// operations, the primitive otherwise.
#[test]
fn every_exported_access_is_marked_as_its_release_marks_it() {
    let mut checked = 0;
    for release in RELEASES {
        for site in release.sites() {
            let actor = match site.by {
                memcg_flush_model::kernel::marking::By::Updater => Actor::Cpu(0),
                _ => Actor::Periodic,
            };
            let (op, idiom) = access_at(site);
            let lock = Var::Lock(LockName::Other("rstat_cpu0"));
            let mut steps = Vec::new();
            if site.cpu_lock == Some(true) {
                steps.push(step(actor, lock, Op::Write(1), Idiom::SpinLock));
            }
            steps.push(step(actor, var_of(site.var), op, idiom));
            let got = marked(&steps, release);
            assert!(!got.is_empty(), "{}: {site:?} left out", release.name);
            for (a, s, i) in &got {
                assert_eq!(*a, actor);
                assert_eq!(*s, Some(site), "{}: {site:?} found {s:?}", release.name);
                let i = i
                    .as_ref()
                    .unwrap_or_else(|e| panic!("{}: {site:?}: {e}", release.name));
                assert!(
                    lkmm_form(site, i),
                    "{}: {site:?} written {i:?}",
                    release.name
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked} sites");
}

/// The markings the findings rest on, as read in the kernel trees.
#[test]
fn the_markings_the_findings_rest_on() {
    let find = |r: &Release, var, by, kind, held| {
        r.sites()
            .into_iter()
            .find(|m| {
                m.var == var && m.by == by && m.kind == kind && m.cpu_lock.is_none_or(|l| l == held)
            })
            .unwrap_or_else(|| panic!("{}: no site {var:?} {by:?} {kind:?}", r.name))
    };
    use memcg_flush_model::kernel::marking::By::{Flusher, Updater};
    // v5.7-v6.14: the on-list test is data_race(), its comment the
    // kernel's words on the race; the unlink a plain store.
    let test = find(&V6_8, VarKind::UpdatedNext, Updater, Kind::Load, false);
    assert_eq!((test.mark, test.spelling), (Mark::DataRace, "data_race()"));
    assert_eq!(test.race, Some(ON_LIST_RACE));
    assert!(test.at.contains("rstat.c:42"), "{}", test.at);
    let unlink = find(&V6_8, VarKind::UpdatedNext, Flusher, Kind::Store, true);
    assert_eq!(unlink.mark, Mark::Plain);
    // The candidate marks both.
    let c = find(
        &V6_8_TREE_CANDIDATE,
        VarKind::UpdatedNext,
        Updater,
        Kind::Load,
        false,
    );
    assert_eq!(c.mark, Mark::ReadOnce);
    let c = find(
        &V6_8_TREE_CANDIDATE,
        VarKind::UpdatedNext,
        Flusher,
        Kind::Store,
        true,
    );
    assert_eq!(c.mark, Mark::WriteOnce);
    // The counter: __this_cpu_add() up to v6.15, this_cpu_add() in v6.17;
    // no kernel comment on its race with the flusher's READ_ONCE().
    for (r, spelling) in [
        (&GLOBAL, "__this_cpu_add()"),
        (&V6_8, "__this_cpu_add()"),
        (&V6_17, "this_cpu_add()"),
    ] {
        let add = find(r, VarKind::State, Updater, Kind::Rmw, false);
        assert_eq!(
            (add.mark, add.spelling, add.race),
            (Mark::PerCpu, spelling, None)
        );
        let read = find(r, VarKind::State, Flusher, Kind::Load, false);
        assert_eq!(read.mark, Mark::ReadOnce);
    }
    // v6.17's llist: both node accesses of the race marked.
    assert_eq!(
        find(&V6_17, VarKind::LlistNode, Updater, Kind::Load, false).mark,
        Mark::ReadOnce
    );
    assert_eq!(
        find(&V6_17, VarKind::LlistNode, Flusher, Kind::Store, false).mark,
        Mark::WriteOnce
    );
    // Every entry says where it was read.
    for r in RELEASES {
        for m in r.sites() {
            assert!(
                m.at.contains(".c") || m.at.contains(".h"),
                "{}: {m:?}",
                r.name
            );
        }
    }
}

/// The store-buffering witness of section 15 as v6.8 marks it (data_race()
/// and a plain unlink: plain, racing) and as the candidate marks it
/// (READ_ONCE() and WRITE_ONCE(): no race on updated_next).
#[test]
fn the_tree_race_exports_as_the_kernel_and_the_candidate_mark_it() {
    let u = Var::UpdatedNext { memcg: 0, cpu: 0 };
    let s = Var::State { memcg: 0, cpu: 0 };
    let lock = Var::Lock(LockName::Other("rstat_cpu0"));
    let steps = vec![
        step(
            Actor::Cpu(0),
            s,
            Op::Add { val: 1, new: 1 },
            Idiom::ThisCpuAdd,
        ),
        step(Actor::Periodic, lock, Op::Write(1), Idiom::SpinLock),
        step(Actor::Periodic, u, Op::Read(1), Idiom::ReadOnce),
        step(Actor::Periodic, u, Op::Write(0), Idiom::WriteOnce),
        step(Actor::Periodic, lock, Op::Write(0), Idiom::SpinUnlock),
        step(Actor::Periodic, s, Op::Read(0), Idiom::ReadOnce),
        step(Actor::Cpu(0), u, Op::Read(1), Idiom::ReadOnce),
    ];
    let kernel = export("t", &steps, &V6_8).expect("exported");
    check_syntax(&kernel).expect("herd7's syntax");
    for line in [
        " * Result: Sometimes DATARACE",
        "\tr0 = *updated_next0; // data_race()",
        "\t*updated_next0 = 0; // = NULL",
        "\t*state0 = 1; // __this_cpu_add()",
    ] {
        assert!(kernel.contains(line), "missing {line:?} in\n{kernel}");
    }
    for said in [
        "cgroup_rstat_updated() says \"Speculative already-on-list test. This may race leading to temporary inaccuracies, which is fine.\" A racy",
        "state0: CPU 0's __this_cpu_add() (plain), periodic's READ_ONCE(); undocumented in the kernel.",
    ] {
        assert!(says(&kernel, said), "the header does not say {said:?}:\n{kernel}");
    }
    let candidate = export("t", &steps, &V6_8_TREE_CANDIDATE).expect("exported");
    check_syntax(&candidate).expect("herd7's syntax");
    for line in [
        "\tr0 = READ_ONCE(*updated_next0);",
        "\tWRITE_ONCE(*updated_next0, 0);",
    ] {
        assert!(candidate.contains(line), "missing {line:?} in\n{candidate}");
    }
    assert!(!candidate.contains("This may race"), "{candidate}");
}

/// A reader's flush runs inside its gate's `if`, as in
/// mem_cgroup_flush_stats(); its read of the aggregate after the flush is
/// outside.
#[test]
fn a_readers_flush_stays_inside_its_gate() {
    let thr = Var::Threshold { memcg: Some(1) };
    let s = Var::State { memcg: 1, cpu: 0 };
    let agg = Var::Aggregate { memcg: 1 };
    let rstat = Var::Lock(LockName::CgroupRstatLock);
    let r = Actor::Reader(0);
    let steps = vec![
        step(
            Actor::Cpu(0),
            s,
            Op::Add { val: 2, new: 2 },
            Idiom::ThisCpuAdd,
        ),
        step(
            Actor::Cpu(0),
            thr,
            Op::Add { val: 2, new: 2 },
            Idiom::AtomicAdd,
        ),
        step(r, thr, Op::Read(2), Idiom::AtomicRead),
        decision(r, true),
        step(r, rstat, Op::Write(1), Idiom::SpinLock),
        step(r, s, Op::Read(2), Idiom::ReadOnce),
        step(r, agg, Op::Write(2), Idiom::WriteOnce),
        step(r, thr, Op::Write(0), Idiom::AtomicSet),
        step(r, rstat, Op::Write(0), Idiom::SpinUnlock),
        step(r, agg, Op::Read(2), Idiom::ReadOnce),
    ];
    let prog = program("t", &steps, &V6_8).expect("exported");
    let reader = prog
        .threads
        .iter()
        .find(|t| t.note == "reader 0")
        .expect("reader");
    match &reader.body[..] {
        [Instr::Load { reg: 0, .. }, Instr::If {
            reg: 0,
            eq: true,
            val: 2,
            body,
        }, Instr::Load { var, .. }] => {
            assert_eq!(var, "m1_agg");
            assert!(
                matches!(body.first(), Some(Instr::Lock(l)) if l == "rstat_lock"),
                "{body:?}"
            );
            assert!(
                matches!(body.last(), Some(Instr::Unlock(l)) if l == "rstat_lock"),
                "{body:?}"
            );
        }
        b => panic!("the flush is not inside the gate's if: {b:?}"),
    }
    let out = export("t", &steps, &V6_8).expect("exported");
    check_syntax(&out).expect("herd7's syntax");
    assert!(
        out.contains("\tif (r0 == 2) {\n\t\tspin_lock(rstat_lock);"),
        "{out}"
    );
    assert!(
        says(
            &out,
            "A reader's flush runs inside the kernel's `if` on its gate's load"
        ),
        "{out}"
    );
}

/// A trace that ends inside a critical section (the violation cut the
/// flush short) keeps the lock, and the test releases it at the thread's
/// end.
#[test]
fn a_lock_the_trace_still_holds_is_exported() {
    let agg = Var::Aggregate { memcg: 0 };
    let s = Var::State { memcg: 0, cpu: 0 };
    let rstat = Var::Lock(LockName::CgroupRstatLock);
    let steps = vec![
        step(
            Actor::Cpu(0),
            s,
            Op::Add { val: 2, new: 2 },
            Idiom::ThisCpuAdd,
        ),
        step(Actor::Reader(0), s, Op::Read(2), Idiom::ReadOnce),
        step(Actor::Periodic, rstat, Op::Write(1), Idiom::SpinLock),
        step(Actor::Periodic, agg, Op::Write(0), Idiom::Plain),
        step(Actor::Reader(0), agg, Op::Read(0), Idiom::ReadOnce),
    ];
    let out = export("t", &steps, &GLOBAL).expect("exported");
    check_syntax(&out).expect("herd7's syntax");
    assert!(
        out.contains("\tspin_lock(rstat_lock);\n\t*agg = 0; // +=\n\tspin_unlock(rstat_lock);\n}"),
        "{out}"
    );
    assert!(
        says(
            &out,
            "The trace ends inside a critical section (periodic's rstat_lock)"
        ),
        "{out}"
    );
}

/// A test that cannot show a race is not exported, and says why: one
/// thread left, or an outcome every SC interleaving gives.
#[test]
fn a_slice_that_loses_the_race_is_not_exported() {
    let thr = Var::Threshold { memcg: None };
    let one = vec![
        step(
            Actor::Cpu(0),
            thr,
            Op::Add { val: 1, new: 1 },
            Idiom::AtomicAdd,
        ),
        step(Actor::Main, thr, Op::Read(1), Idiom::AtomicRead),
    ];
    let err = export("t", &one, &GLOBAL).unwrap_err();
    assert!(err.starts_with("not exported as a litmus test: "), "{err}");
    assert!(err.contains("keeps 1 thread (CPU 0)"), "{err}");
    let agg = Var::Aggregate { memcg: 0 };
    let always = vec![
        step(
            Actor::Cpu(0),
            thr,
            Op::Add { val: 1, new: 1 },
            Idiom::AtomicAdd,
        ),
        step(Actor::Periodic, agg, Op::Write(1), Idiom::WriteOnce),
        step(Actor::Main, thr, Op::Read(1), Idiom::AtomicRead),
        step(Actor::Main, agg, Op::Read(1), Idiom::ReadOnce),
    ];
    let err = export("t", &always, &GLOBAL).unwrap_err();
    assert!(
        err.contains("every SC interleaving of the test gives the traced outcome (Always"),
        "{err}"
    );
}

/// Every plain access of a findings file is spelled as the kernel spells
/// it (a comment): each comes from a release's table.
#[test]
fn the_corpus_findings_spell_every_plain_access() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/litmus");
    let mut seen = 0;
    for e in std::fs::read_dir(dir).expect("docs/litmus") {
        let p = e.expect("entry").path();
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !(name.contains("rstat-") || name.ends_with("+trigger.litmus")) {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("text");
        let body = text.split_once("*)").map(|(_, b)| b).unwrap_or("");
        for l in body.lines().map(str::trim) {
            let plain = l.starts_with('*') || (l.starts_with('r') && l.contains(" = *"));
            if plain {
                assert!(l.contains(" // "), "{name}: {l:?} has no kernel spelling");
                seen += 1;
            }
        }
    }
    assert!(seen >= 20, "{seen} plain accesses");
}

/// Why the corpus's findings run with every thread spawned: message
/// passing into a reader's gate followed by an `if`, the updater reading
/// the count before each `atomic_add()` (v6.8's skip test) and the reader
/// on main, gives loom one execution, unbounded and at bound 2 (the gate
/// never reads the other thread's `atomic_add()`: tokio-rs/loom#166's
/// kind);
/// spawned, loom finds the stale read. When this fails, loom has changed.
#[test]
fn loom_misses_a_gate_on_main() {
    use memcg_flush_model::explore::Backend;
    use memcg_flush_model::report::litmus::prog::Program;
    use memcg_flush_model::report::litmus::{measure, measure_spawned, Observation};
    let plain = |v: i64| Instr::Store {
        store: Store::Plain(None),
        var: "s".into(),
        val: v,
    };
    let prog = Program::new("MP+gate")
        .thread(
            "CPU 0",
            vec![
                plain(2),
                Instr::atomic_read("t", 0),
                Instr::atomic_add("t", 2),
                plain(4),
                Instr::atomic_read("t", 1),
                Instr::atomic_add("t", 2),
            ],
        )
        .thread(
            "reader",
            vec![
                Instr::atomic_read("t", 0),
                Instr::If {
                    reg: 0,
                    eq: true,
                    val: 4,
                    body: vec![Instr::read_once("s", 1)],
                },
            ],
        )
        .reg(1, 0, 4)
        .reg(1, 1, 0);
    let budget = std::time::Duration::from_secs(30);
    for bound in [None, Some(2)] {
        let b = Backend::Loom {
            preemption_bound: bound,
        };
        let on_main = measure(&prog, &b, budget).expect("measured");
        assert_eq!(on_main.executions, 1, "{bound:?}: {on_main:?}");
        assert_eq!(on_main.observation(&prog.target()), Observation::Never);
        let spawned = measure_spawned(&prog, &b, budget).expect("measured");
        assert_eq!(
            spawned.observation(&prog.target()),
            Observation::Sometimes,
            "{bound:?}: {spawned:?}"
        );
    }
}
