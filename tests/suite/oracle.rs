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
    Setup {
        lru_fill: 0,
        residual: 0,
        old_slab: 0,
        own_tables: 0,
    }
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
    assert_eq!(
        Kernel::from_release("6.12.107+deb12-amd64").unwrap(),
        Kernel::L6_12
    );
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
        let c = memcg_flush_model::cli::kernels_table::Counts::of(&refs);
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
