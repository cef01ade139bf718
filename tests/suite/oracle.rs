//! Real kernels as the oracle (docs/real-kernels.md): the model's forward
//! predictions for the probe's scenarios (the derivation of each unit's
//! update calls, and the protocol driven through them), pinned; the
//! recorded boots (tests/consoles) judged with the wrong lineage; and the
//! old, fitted judgment of consoles without a trace
//! (tests/consoles_untraced), which is never an agreement.
//! tests/suite/real_kernels.rs judges the recorded boots exactly.

use std::path::Path;

use memcg_flush_model::guest::console;
use memcg_flush_model::oracle::charge::{val_in_pages, Cpu, Item, Kernel, Update};
use memcg_flush_model::oracle::predict::{predict, reads_of, Setup};
use memcg_flush_model::oracle::spec::{self, Scenario, Unit};
use memcg_flush_model::oracle::{judge, Judged, Observation, Verdict};

/// The recorded boots, each with its rows, judged once for every test.
fn judged() -> &'static [(String, Observation, Vec<memcg_flush_model::oracle::Row>)] {
    static JUDGED: std::sync::OnceLock<
        Vec<(String, Observation, Vec<memcg_flush_model::oracle::Row>)>,
    > = std::sync::OnceLock::new();
    JUDGED.get_or_init(|| {
        consoles()
            .into_iter()
            .map(|(n, o)| {
                let rows = judge(&o);
                (n, o, rows)
            })
            .collect()
    })
}

fn consoles() -> Vec<(String, Observation)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consoles");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("tests/consoles") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "txt") {
            let text = std::fs::read_to_string(&p).unwrap();
            let c = console::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.push((p.file_stem().unwrap().to_string_lossy().into_owned(), c.obs));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn scenario(name: &str) -> Scenario {
    spec::scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

fn zero() -> Setup {
    Setup::default()
}

/// The two first observations (docs/real-kernels.md, section 1): on 6.12
/// memory.stat reread with open() and close() after each 4 KiB page moves
/// in steps that grow with the CPU count, which the model reproduces read
/// for read; 6.1 is current at almost every read (its slab bytes).
#[test]
fn the_first_observations_are_reproduced() {
    // The model, from one start state: 6.12's steps grow with the CPUs;
    // 6.1 flushes at every read.
    let s = scenario("step-reopen");
    let steps = |k, cpus| {
        let p = predict(&s, k, cpus, zero(), &reads_of(&s, cpus, 0), (0, 0)).unwrap();
        p.iter().filter(|x| x.flushed).count()
    };
    assert_eq!(steps(Kernel::L6_12, 1), 10);
    assert_eq!(steps(Kernel::L6_12, 2), 6);
    assert_eq!(steps(Kernel::L6_12, 4), 3);
    assert_eq!(steps(Kernel::L6_1, 1), 96);
}

/// A prediction changes only with the model: each scenario's flushing
/// reads and last value, per kernel and CPU count, from one start state.
#[test]
fn predictions_are_pinned() {
    let mut got = String::new();
    for s in spec::scenarios() {
        for k in [Kernel::L6_1, Kernel::L6_12, Kernel::L6_17] {
            for cpus in [1usize, 2, 4] {
                let p = predict(&s, k, cpus, zero(), &reads_of(&s, cpus, 5), (0, 0)).unwrap();
                let fl: Vec<String> = p
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| x.flushed)
                    .map(|(i, _)| (i + 1).to_string())
                    .collect();
                let fl = if fl.len() > 8 {
                    format!("{} of them", fl.len())
                } else {
                    fl.join(",")
                };
                got.push_str(&format!(
                    "{} {} {}: {} reads, flushing [{}], last {}\n",
                    s.name,
                    k.name(),
                    cpus,
                    p.len(),
                    fl,
                    p.last().map(|x| x.anon).unwrap_or(0)
                ));
            }
        }
    }
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/oracle_pinned.txt");
    if std::env::var_os("FLUSHCHECK_BLESS").is_some() {
        std::fs::write(&pinned, &got).unwrap();
    }
    let want = std::fs::read_to_string(&pinned).unwrap();
    assert_eq!(
        got, want,
        "a prediction changed (FLUSHCHECK_BLESS=1 rewrites the file):\n{got}"
    );
}

/// The comparison can fail: a recorded boot's trace replayed as another
/// lineage's release disagrees, on the scenario that tells them apart:
/// 6.12's `c12-skew` as 6.16 (the parent's gate would not flush), 7.3's as
/// 6.12, and 6.1's `siblings` as 6.12 (6.1's threshold is global).
#[test]
fn the_wrong_lineage_disagrees() {
    for (name, swap, tells) in [
        ("6.12-1", "6.16.0-swapped", "c12-skew"),
        ("7.3-2", "6.12.0-swapped", "c12-skew"),
        ("6.1-1", "6.12.0-swapped", "siblings"),
    ] {
        let (_, mut obs) = consoles().into_iter().find(|c| c.0 == name).unwrap();
        obs.hello.release = swap.to_string();
        let rows = judge(&obs);
        let r = rows.iter().find(|r| r.scenario == tells).unwrap();
        assert_eq!(
            r.verdict,
            Verdict::Disagree,
            "{name} judged as {swap}: {}",
            r.note
        );
    }
}

/// C12 on real-kernel units (docs/real-kernels.md, section 5): in
/// c12-skew the parent's read flushes on 6.12 (no break) and does not on
/// 6.16 on, where the parent then shows fewer pages than its child, from
/// every start state the LRU batch allows.
#[test]
fn c12_skew_loses_only_with_the_break() {
    let s = scenario("c12-skew");
    for cpus in [1usize, 2, 4] {
        let reads = reads_of(&s, cpus, 0);
        // From every LRU state, the probe's own start-up updates left out
        // (they are not in a maintainer's run of the C reproducer).
        for setup in Setup::all(Kernel::L6_12, false, cpus)
            .into_iter()
            .filter(|s| s.own_tables == 0)
        {
            let v6_12 = predict(&s, Kernel::L6_12, cpus, setup, &reads, (0, 0)).unwrap();
            assert!(
                v6_12[0].flushed,
                "6.12 at {cpus}: the parent's read flushes ({setup:?})"
            );
            let v6_17 = predict(&s, Kernel::L6_17, cpus, setup, &reads, (0, 0)).unwrap();
            assert!(
                !v6_17[0].flushed,
                "6.16+ at {cpus}: the parent's read skips ({setup:?})"
            );
            assert!(
                v6_17[0].anon < v6_17[1].anon,
                "6.16+ at {cpus}: the parent shows {} < the child's {}",
                v6_17[0].anon,
                v6_17[1].anon
            );
        }
    }
    // And the recorded 6.12 boots agree with the no-loss prediction.
    for (name, _, rows) in judged().iter().filter(|c| c.0.starts_with("6.12")) {
        let r = rows.iter().find(|r| r.scenario == "c12-skew").unwrap();
        assert_eq!(r.verdict, Verdict::Agree, "{name}: {}", r.note);
    }
}

/// B9 (LTP memcg_stat_rss: "rss is 0, 266240 expected") on a real kernel:
/// at 4 vCPUs a quiescent read of a fresh memcg after 65 pages shows 0 on
/// 6.12, as predicted; at 1 and 2 vCPUs it shows 65. (6.1 at 4 vCPUs shows
/// 0 or 65: its global threshold also counts the probe's byte-valued slab.)
#[test]
fn ltp_rss_reads_zero_at_four_cpus() {
    for (name, obs) in consoles().into_iter().filter(|c| c.0.starts_with("6.12")) {
        let r = obs.reads.iter().find(|r| r.s == "ltp-rss").unwrap();
        let want = if name.ends_with("-4") { 0 } else { 65 };
        assert_eq!(r.anon, want, "{name}");
    }
    let s = scenario("ltp-rss");
    for (cpus, want) in [(1, 65), (2, 65), (4, 0)] {
        for k in [Kernel::L6_1, Kernel::L6_12] {
            let p = predict(&s, k, cpus, zero(), &reads_of(&s, cpus, 0), (0, 0)).unwrap();
            assert_eq!(p[0].anon, want, "{k:?} at {cpus}");
        }
    }
}

/// The derivation pinned against the kprobe traces of docs/real-kernels.md
/// section 3: one memory.stat read that opens and closes the file, in
/// steady state on 6.12.
#[test]
fn a_reopen_read_makes_the_traced_calls() {
    assert_eq!(val_in_pages(4232), 1);
    assert_eq!(val_in_pages(-4232), -2);
    assert_eq!(val_in_pages(-200), -1);
    let mut cpu = Cpu::new(Kernel::L6_12, 0, 9, 0, (192, 192));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        a.clear();
        b.clear();
        cpu.reopen_read(2, &mut a, &mut b);
    }
    let calls = |v: &[Update]| v.iter().map(|u| (u.item, u.val)).collect::<Vec<_>>();
    assert_eq!(
        calls(&a),
        vec![(Item::Kmem, 2), (Item::SlabUnreclaimableB, 1)],
        "before the gate: the seq buffer's two pages and the stock's flush of 4,232 bytes"
    );
    assert_eq!(
        calls(&b),
        vec![(Item::Kmem, -2), (Item::SlabUnreclaimableB, -2)],
        "at close"
    );
    // 6.1 passes the same bytes on: 66 batches of MEMCG_CHARGE_BATCH.
    let mut cpu = Cpu::new(Kernel::L6_1, 0, 9, 0, (256, 192));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    cpu.reopen_read(2, &mut a, &mut b);
    let slab: Vec<i64> = a
        .iter()
        .filter(|u| u.item == Item::SlabUnreclaimableB)
        .map(|u| u.val)
        .collect();
    assert_eq!(slab, vec![4496], "264 + 128 + 4104, as the 6.1 trace shows");
    // A 4 KiB fault: two calls on 6.12, three on 6.1, and the LRU batch.
    let mut out = Vec::new();
    Cpu::new(Kernel::L6_12, 30, 9, 0, (0, 0)).unit(Unit::Anon4k, 2, &mut out);
    assert_eq!(out.len(), 2 + 31, "the 31st folio drains the batch");
}

#[test]
fn releases_map_to_lineages() {
    assert_eq!(
        Kernel::from_release("6.1.0-57-amd64").unwrap(),
        Kernel::L6_1
    );
    let k = Kernel::from_release("6.12.107+deb12-amd64").unwrap();
    assert_eq!((k.release, k.protocol, k.sublevel), ((6, 12), (6, 12), 107));
    let k = Kernel::from_release("6.18.2").unwrap();
    assert_eq!((k.release, k.protocol), ((6, 18), (6, 18)));
    assert_eq!(k.with_break(), k, "6.18 has the break already");
    assert_eq!(Kernel::L6_12.with_break().protocol, (6, 17));
    assert_eq!(
        Kernel::from_release("7.3.4+deb13-amd64")
            .unwrap()
            .variant()
            .unwrap()
            .name,
        "v6.17"
    );
    let e = Kernel::from_release("5.10.0").unwrap_err();
    assert!(e.contains("5.10.0"), "{e}");
}

/// A console without a trace (an earlier probe's) is judged the old way,
/// against every start state the probe could not see: `fitted`, a
/// diagnosis, never counted as an agreement; and a wrong value there still
/// disagrees.
#[test]
fn untraced_consoles_are_only_fitted() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consoles_untraced");
    for name in ["6.1-1", "6.12-1"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
        let obs = console::parse(&text).unwrap().obs;
        assert!(obs.events.is_empty(), "{name}: no trace");
        let rows = judge(&obs);
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r.judged == Judged::Fitted), "{name}");
        let refs: Vec<&memcg_flush_model::oracle::Row> = rows.iter().collect();
        let c = memcg_flush_model::publish::kernels::Counts::of(&refs);
        assert_eq!(
            (c.exact, c.calibrated, c.fitted),
            (0, 0, rows.len()),
            "{name}"
        );
        let mut wrong = obs.clone();
        wrong
            .reads
            .iter_mut()
            .filter(|r| r.s == "step")
            .nth(40)
            .unwrap()
            .anon += 1000;
        let rows = judge(&wrong);
        let row = rows.iter().find(|r| r.scenario == "step").unwrap();
        assert_eq!(row.verdict, Verdict::Disagree, "{name}: {}", row.note);
    }
}

// ---------------------------------------------------------------------
// The per-release derivation (model/oracle/charge.rs) against the
// kernels' own record of every update call (issue 38).

use memcg_flush_model::oracle::charge::{val_in_pages_signed, xa_nodes, Machine};
use memcg_flush_model::oracle::predict::{check_trace, derive, Step, Traced};
use memcg_flush_model::oracle::spec::Op;
use memcg_flush_model::oracle::trace::Ev;

/// The recorded boots, parsed once for the derivation's tests.
fn traced() -> &'static [(String, Observation)] {
    static TRACED: std::sync::OnceLock<Vec<(String, Observation)>> = std::sync::OnceLock::new();
    TRACED.get_or_init(consoles)
}

fn traced_boot(name: &str) -> &'static Observation {
    &traced()
        .iter()
        .find(|c| c.0 == name)
        .unwrap_or_else(|| panic!("no recorded boot {name}"))
        .1
}

/// The parts of a boot's observation the derivation check reads.
fn view(obs: &Observation) -> Traced<'_> {
    Traced {
        hello: &obs.hello,
        starts: &obs.starts,
        done: &obs.done,
        events: &obs.events,
    }
}

fn kernel_of(obs: &Observation) -> Kernel {
    Kernel::from_release(&obs.hello.release).unwrap()
}

/// A scenario of `ops` in memcgs `cgroups`, for the tests below.
fn scenario_of(cgroups: &[&str], ops: Vec<Op>) -> Scenario {
    Scenario {
        name: "t".into(),
        about: String::new(),
        item: String::new(),
        cgroups: cgroups.iter().map(|c| c.to_string()).collect(),
        mthp: false,
        ops,
    }
}

fn charge_op(kind: Unit, n: usize) -> Op {
    Op::Charge {
        kind,
        n,
        n_by_cpus: Vec::new(),
        read: None,
        every: 0,
        reopen: false,
        trace: 0,
    }
}

/// The task's calls a derivation makes: (memcg, item, value, CPU).
fn task_calls(steps: &[Step]) -> Vec<(u8, Item, i64, usize)> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Update(u) if u.by_task => Some((u.memcg, u.item, u.val, u.cpu)),
            _ => None,
        })
        .collect()
}

/// The derivation equals the kernel's record: on every recorded boot (10
/// releases at 1, 2 and 4 vCPUs), for every scenario, the update calls
/// derived for the release (memcg, item, value, CPU) are the calls the
/// trace recorded from the probe's task on the scenario's memcgs, in
/// order, one for one (`check_trace`; what it leaves out by rule is in
/// its docs).
#[test]
fn the_derivation_matches_every_traced_call() {
    let scenarios = spec::scenarios();
    let mut per_release: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut wrong = Vec::new();
    for (name, obs) in traced() {
        let kernel = kernel_of(obs);
        for d in &obs.done {
            let s = scenarios.iter().find(|s| s.name == d.s).unwrap();
            match check_trace(&scenarios, s, &view(obs), kernel) {
                Ok(n) => {
                    let e = per_release.entry(kernel.name()).or_default();
                    e.0 += 1;
                    e.1 += n;
                }
                Err(e) => wrong.push(format!("{name} {}: {e}", d.s)),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} rows differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    let releases: Vec<&str> = per_release.keys().map(String::as_str).collect();
    assert_eq!(
        releases,
        ["6.1", "6.12", "6.16", "6.17", "6.18", "6.19", "7.0", "7.1", "7.2", "7.3"]
    );
    for (release, (rows, calls)) in &per_release {
        assert_eq!(*rows, 36, "{release}: 3 boots of 12 scenarios");
        assert!(*calls > 10_000, "{release}: only {calls} calls compared");
    }
}

/// The check can fail: the 7.3 boot's `free` window with one update call
/// added, one dropped, or one value changed differs from the derivation.
#[test]
fn the_derivation_check_fails_on_an_edited_trace() {
    let scenarios = spec::scenarios();
    let obs = traced_boot("7.3-1");
    let kernel = kernel_of(obs);
    let s = scenario("free");
    assert!(check_trace(&scenarios, &s, &view(obs), kernel).is_ok());
    let (from, to) = memcg_flush_model::oracle::replay::window(&obs.events, "free").unwrap();
    let probe = obs.events[from].pid;
    let a = obs.starts.iter().find(|x| x.s == "free").unwrap().ids["a"];
    let at = (from..to)
        .filter(|&i| {
            obs.events[i].pid == probe
                && matches!(obs.events[i].ev, Ev::Update { id, .. } if id == a)
        })
        .nth(100)
        .unwrap();
    let mut added = obs.clone();
    added.events.insert(at, obs.events[at].clone());
    let mut dropped = obs.clone();
    dropped.events.remove(at);
    let mut changed = obs.clone();
    if let Ev::Update { val, .. } = &mut changed.events[at].ev {
        *val += 1;
    }
    for (what, edited) in [("added", added), ("dropped", dropped), ("changed", changed)] {
        let e = check_trace(&scenarios, &s, &view(&edited), kernel).unwrap_err();
        assert!(e.contains("call "), "{what}: {e}");
    }
}

/// Each per-release choice of the derivation is one a trace shows: the
/// neighbouring release's derivation fails on it, at the scenario that
/// exercises the choice, while the release's own passes.
#[test]
fn each_release_choice_is_seen_in_a_trace() {
    let scenarios = spec::scenarios();
    for (boot, other, name, choice) in [
        (
            "6.1-1",
            "6.12.117",
            "step",
            "6.1's PGFAULT and PGPGIN come first",
        ),
        (
            "6.12-1",
            "6.16.12",
            "free",
            "MADV_DONTNEED drains the LRU batch (6.12)",
        ),
        (
            "6.16-1",
            "6.12.117",
            "free",
            "MADV_DONTNEED does not drain it (6.16)",
        ),
        (
            "6.18-1",
            "6.19.14",
            "fold-skew",
            "6.18.15's page tables are not on the memcg",
        ),
        ("6.19-1", "6.18.15", "fold-skew", "6.19.14's are again"),
        (
            "7.0-1",
            "7.1.13",
            "step-reopen",
            "an unsigned memcg_state_val_in_pages()",
        ),
        ("7.1-1", "7.0.13", "step-reopen", "a signed one from 7.1"),
    ] {
        let obs = traced_boot(boot);
        let s = scenario(name);
        check_trace(&scenarios, &s, &view(obs), kernel_of(obs))
            .unwrap_or_else(|e| panic!("{boot} {name}: {e}"));
        let wrong = Kernel::from_release(other).unwrap();
        assert!(
            check_trace(&scenarios, &s, &view(obs), wrong).is_err(),
            "{boot} {name} derived as {other} passes: the trace does not show {choice}"
        );
    }
}

/// The objcg stock's three forms (docs/real-kernel-updates.md section
/// 6.5): slab charges alternating between two memcgs make, from the third
/// on, a page charged, the other memcg's bytes flushed and a page
/// uncharged with one cached objcg (6.16 to 7.1), and only the flush with
/// five (7.2 on), each memcg keeping its bytes in its slot.
#[test]
fn the_five_slot_stock_keeps_each_memcgs_bytes() {
    for (release, third) in [
        (
            "6.17.13",
            vec![
                (2, Item::Kmem, 1),
                (3, Item::SlabUnreclaimableB, 1),
                (2, Item::Kmem, -1),
            ],
        ),
        (
            "7.1.13",
            vec![
                (2, Item::Kmem, 1),
                (3, Item::SlabUnreclaimableB, 1),
                (2, Item::Kmem, -1),
            ],
        ),
        ("7.3.4", vec![(3, Item::SlabUnreclaimableB, 1)]),
    ] {
        let mut m = Machine::new(Kernel::from_release(release).unwrap(), 1, 9, (192, 192), 0);
        let mut calls = Vec::new();
        for memcg in [2u8, 3, 2, 3, 2] {
            let mut out = Vec::new();
            m.charge(0, Unit::OpenKeep, memcg, &mut out).unwrap();
            calls.push(
                out.iter()
                    .map(|u| (u.memcg, u.item, u.val))
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(calls[0], vec![(2, Item::Kmem, 1)], "{release}");
        assert_eq!(
            calls[1],
            vec![(3, Item::Kmem, 1), (2, Item::SlabUnreclaimableB, 1)],
            "{release}"
        );
        assert_eq!(calls[2], third, "{release}");
    }
    assert_eq!(val_in_pages(-4232), -2);
    assert_eq!(val_in_pages_signed(-4232), -1);
    assert_eq!(val_in_pages_signed(-200), -1);
    assert_eq!(val_in_pages_signed(8200), 2);
}

/// A PMD THP's fault and its `MADV_DONTNEED`, per release: the fault's
/// calls and then the same calls negative (the uncharges), in the order
/// each release makes them; the mapping's first fault also makes its
/// anon_vma (one page of kernel memory) and wakes khugepaged, whose
/// `lru_add_drain_all()` drains the batch in a kworker.
#[test]
fn a_thp_and_its_free_per_release() {
    use Item::*;
    let s = scenario_of(
        &["a"],
        vec![
            Op::Pin { cpu: 0 },
            Op::Enter { cg: "a".into() },
            charge_op(Unit::Anon4k, 2),
            charge_op(Unit::Thp, 1),
            Op::Free {
                kind: Unit::Thp,
                n: 1,
                read: None,
                every: 0,
            },
        ],
    );
    let a = 2u8;
    let anon = vec![
        (a, AnonMapped, 1, 0),
        (a, PgFault, 1, 0),
        (a, AnonMapped, 1, 0),
        (a, PgFault, 1, 0),
    ];
    // The anon_vma's page; up to 7.0 the switch away from the scenario
    // directory's objcg (its mkdir of `a`) flushes its pending bytes.
    let fault = |pagetable: bool, mkdir_pending: bool| {
        let mut v = vec![(a, Kmem, 1, 0)];
        if mkdir_pending {
            v.push((1, SlabUnreclaimableB, 1, 0));
        }
        v.push((a, Kmem, 1, 0));
        if pagetable {
            v.push((a, PageTable, 1, 0));
        }
        v.extend([
            (a, AnonMapped, 512, 0),
            (a, AnonThps, 512, 0),
            (a, Lru, 512, 0),
            (a, ThpFaultAlloc, 1, 0),
            (a, PgFault, 1, 0),
            (a, AnonMapped, -512, 0),
            (a, AnonThps, -512, 0),
        ]);
        if pagetable {
            v.push((a, PageTable, -1, 0));
        }
        v.extend([(a, Kmem, -1, 0), (a, Lru, -512, 0)]);
        v
    };
    for (release, pagetable, pending) in [
        ("6.17.13", true, true),
        ("6.18.15", false, true),
        ("7.3.4", true, false),
    ] {
        let k = Kernel::from_release(release).unwrap();
        let steps = derive(&s, k, 1, Setup::default(), (0, 0)).unwrap();
        let mut want = anon.clone();
        want.extend(fault(pagetable, pending));
        assert_eq!(task_calls(&steps), want, "{release}");
        // The kworker drained the two 4 KiB folios.
        let worker: Vec<_> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Update(u) if !u.by_task => Some((u.memcg, u.item, u.val)),
                _ => None,
            })
            .collect();
        assert_eq!(worker, vec![(a, Lru, 1), (a, Lru, 1)], "{release}");
    }
    // 6.1: NR_ANON_THPS first, PGFAULT and PGPGIN first, PGPGOUT at the
    // free; the page tables on the memcg.
    let steps = derive(&s, Kernel::L6_1, 1, Setup::default(), (0, 0)).unwrap();
    let calls = task_calls(&steps);
    let thp: Vec<_> = calls[6..].iter().map(|c| (c.1, c.2)).collect();
    assert_eq!(
        thp,
        vec![
            (PgFault, 1),
            (Kmem, 1),
            (PgPgIn, 1),
            (Kmem, 1),
            (PageTable, 1),
            (AnonThps, 512),
            (AnonMapped, 512),
            (Lru, 512),
            (ThpFaultAlloc, 1),
            (AnonThps, -512),
            (AnonMapped, -512),
            (PageTable, -1),
            (Kmem, -1),
            (Lru, -512),
            (PgPgOut, 1),
        ]
    );
}

/// `pin` runs the scenario's CPUs: each has its LRU add batch and objcg
/// stock, and a unit's calls are on the CPU the task is pinned to. 20
/// pages on CPU 0, 20 on CPU 1, then 11 on CPU 0: only CPU 0's batch
/// fills, and its drain holds CPU 0's 31 folios. A pin past the guest's
/// CPUs is an error naming it.
#[test]
fn pin_runs_the_scenarios_cpus() {
    let pin = |cpu| Op::Pin { cpu };
    let s = scenario_of(
        &["a"],
        vec![
            pin(0),
            Op::Enter { cg: "a".into() },
            charge_op(Unit::Anon4k, 20),
            pin(1),
            charge_op(Unit::Anon4k, 20),
            pin(0),
            charge_op(Unit::Anon4k, 11),
        ],
    );
    let calls = task_calls(&derive(&s, Kernel::L6_17, 2, Setup::default(), (0, 0)).unwrap());
    let on = |cpu| calls.iter().filter(|c| c.3 == cpu).count();
    assert_eq!(on(1), 40, "CPU 1: 20 faults, 2 calls each, no drain");
    assert_eq!(on(0), 2 * 31 + 31, "CPU 0: 31 faults and its batch");
    let drained: Vec<_> = calls.iter().filter(|c| c.1 == Item::Lru).collect();
    assert_eq!(drained.len(), 31);
    assert!(drained.iter().all(|c| c.3 == 0));
    let e = derive(&s, Kernel::L6_17, 1, Setup::default(), (0, 0)).unwrap_err();
    assert!(e.contains("pin to CPU 1") && e.contains("1 CPUs"), "{e}");
}

/// shmem's page cache: one xarray node per 64 indices per level, made
/// when an index first needs it (index 1: one; index 64: two, a new root
/// and a leaf), each an accounted slab object.
#[test]
fn shmem_pages_make_xarray_nodes() {
    assert_eq!(
        [0, 1, 2, 64, 65, 128, 129, 4096, 4097].map(xa_nodes),
        [0, 0, 1, 1, 3, 3, 4, 65, 68]
    );
    let mut m = Machine::new(Kernel::L6_17, 1, 9, (192, 192), 0);
    let mut made = Vec::new();
    for _ in 0..66 {
        let before = m.objcg_charges();
        m.charge(0, Unit::Shmem4k, 2, &mut Vec::new()).unwrap();
        made.push(m.objcg_charges() - before);
    }
    let at: Vec<usize> = (0..66).filter(|&i| made[i] > 0).collect();
    assert_eq!(at, vec![1, 64]);
    assert_eq!((made[1], made[64]), (1, 2));
}

/// Known gap: khugepaged drains the LRU batches. Once the probe's THP
/// mapping has an anon_vma (fold-skew's fault), khugepaged scans it every
/// 10 s, and each scan begins with `lru_add_drain_all()`: a kworker moves
/// the folios waiting in each CPU's batch to the LRU at a time no
/// derivation knows. The traces show it in `periodic` (8 pages, then 2.6 s
/// of reads) in some boots: exactly the folios the derivation leaves in
/// the batch, drained by a kworker. The check compares the task's calls,
/// which it does not change here; a prediction misses these updates.
#[test]
fn known_gap_khugepaged_scan_drains_the_lru_batch() {
    let mut seen = 0;
    for (name, obs) in traced() {
        for start in &obs.starts {
            let Some((from, to)) = memcg_flush_model::oracle::replay::window(&obs.events, &start.s)
            else {
                continue;
            };
            let probe = obs.events[from].pid;
            let ours: Vec<u64> = start
                .ids
                .iter()
                .filter(|(k, _)| !k.starts_with('.'))
                .map(|(_, v)| *v)
                .collect();
            let lru = [
                obs.hello.items["NR_ACTIVE_ANON"],
                obs.hello.items["NR_INACTIVE_ANON"],
            ];
            let others: Vec<(u64, i64, i64)> = obs.events[from..to]
                .iter()
                .filter(|e| e.pid != probe)
                .filter_map(|e| match e.ev {
                    Ev::Update { id, item, val, .. } if ours.contains(&id) => Some((id, item, val)),
                    _ => None,
                })
                .collect();
            if others.is_empty() {
                continue;
            }
            match start.s.as_str() {
                // Modelled: the first THP fault's khugepaged drain.
                "fold-skew" => {}
                "periodic" => {
                    let e = start.ids["e"];
                    assert!(
                        others.len() == 8
                            && others
                                .iter()
                                .all(|&(id, item, val)| id == e && lru.contains(&item) && val == 1),
                        "{name} periodic: {others:?}"
                    );
                    seen += 1;
                }
                // 6.1's struct file freed by an RCU callback in another
                // task's context (left out by the RCU rule).
                "step-reopen" if name.starts_with("6.1-") => {
                    let u = obs.hello.items["NR_SLAB_UNRECLAIMABLE_B"];
                    assert!(
                        others.iter().all(|o| o.1 == u && o.2 < 0),
                        "{name}: {others:?}"
                    );
                }
                other => panic!("{name} {other}: another task's calls {others:?}"),
            }
        }
    }
    assert!(seen >= 5, "khugepaged's drain seen in {seen} boots");
    // The derivation leaves `periodic`'s 8 folios in the batch: no call
    // drains them.
    let steps = derive(
        &scenario("periodic"),
        Kernel::L6_17,
        1,
        Setup::default(),
        (0, 0),
    )
    .unwrap();
    assert!(task_calls(&steps).iter().all(|c| c.1 != Item::Lru));
}

/// Known gap: the probe's `mkdir` leaves whole pages in the parent's
/// stock. A child's `struct mem_cgroup` and its per-CPU and per-node
/// structures are charged to the parent; what the stock holds of them
/// afterwards depends on every such allocation, which the derivation does
/// not follow: it takes the pending slab bytes per release (traced) and no
/// whole pages. One boot (7.1 at 4 vCPUs) shows a page: `p MEMCG_KMEM -1`
/// at the first drain of `p`'s objcg, which the check leaves out by rule.
#[test]
fn known_gap_mkdir_leaves_whole_pages_in_the_parents_stock() {
    let mut with_page = Vec::new();
    for (name, obs) in traced() {
        let start = obs.starts.iter().find(|x| x.s == "fold-skew").unwrap();
        let (from, to) =
            memcg_flush_model::oracle::replay::window(&obs.events, "fold-skew").unwrap();
        let kmem = obs.hello.items["MEMCG_KMEM"];
        let p = start.ids["p"];
        if obs.events[from..to]
            .iter()
            .any(|e| matches!(e.ev, Ev::Update { id, item, val, .. } if id == p && item == kmem && val < 0))
        {
            with_page.push(name.as_str());
        }
    }
    assert_eq!(with_page, ["7.1-4"]);
}

/// Known gap: khugepaged's first drain races the THP fault's own. At 4
/// vCPUs khugepaged may run on another CPU and queue its drain after the
/// fault's large folio has drained the batch itself: then the task makes
/// those calls (6.18 and 7.0 at 4 vCPUs), elsewhere a kworker does. The
/// counts are the same on the same CPU; the check accepts either.
#[test]
fn known_gap_khugepaged_drain_races_the_first_thp_fault() {
    let scenarios = spec::scenarios();
    let s = scenario("fold-skew");
    let mut by_task = Vec::new();
    for (name, obs) in traced() {
        let (from, to) =
            memcg_flush_model::oracle::replay::window(&obs.events, "fold-skew").unwrap();
        let probe = obs.events[from].pid;
        let b = obs.starts.iter().find(|x| x.s == "fold-skew").unwrap().ids["p/b"];
        let lru = [
            obs.hello.items["NR_ACTIVE_ANON"],
            obs.hello.items["NR_INACTIVE_ANON"],
        ];
        // Does the task drain p/b's folios after the first page of kernel
        // memory of the THP fault?
        let last_b = obs.events[from..to].iter().rev().find(
            |e| matches!(e.ev, Ev::Update { id, item, .. } if id == b && lru.contains(&item)),
        );
        if last_b.is_some_and(|e| e.pid == probe) && !name.starts_with("6.1-") {
            by_task.push(name.as_str());
        }
        check_trace(&scenarios, &s, &view(obs), kernel_of(obs))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(by_task, ["6.18-4", "7.0-4"]);
}
