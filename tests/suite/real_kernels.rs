//! Real kernels judged exactly (docs/real-kernels.md): the recorded boots
//! of every kernel of the `all` set (tests/consoles: Debian's 6.1, 6.12,
//! 6.16 to 6.19, 7.0 to 7.3 at 1, 2 and 4 vCPUs, each with the kernel's
//! own trace of its update stream and flush decisions) replayed through
//! the model; and the ways that comparison can fail.

use std::path::Path;

use memcg_flush_model::guest::console;
use memcg_flush_model::oracle::trace::{Ev, Event};
use memcg_flush_model::oracle::{judge, Judged, Observation, Row, Verdict};

/// The recorded boots, parsed and judged once for every test.
fn boots() -> &'static [(String, Observation, Vec<Row>)] {
    static BOOTS: std::sync::OnceLock<Vec<(String, Observation, Vec<Row>)>> =
        std::sync::OnceLock::new();
    BOOTS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consoles");
        let mut out = Vec::new();
        for e in std::fs::read_dir(&dir).expect("tests/consoles") {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "txt") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let o = memcg_flush_model::cli::kernels::outcome(&stem, 0, &text, &all_names());
            let c = console::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.push((stem, c.obs, o.rows));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    })
}

fn all_names() -> Vec<String> {
    memcg_flush_model::oracle::spec::scenarios()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

fn release(obs: &Observation) -> (u32, u32) {
    memcg_flush_model::oracle::judge::release_of(&obs.hello.release).unwrap()
}

fn row<'a>(rows: &'a [Row], scenario: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.scenario == scenario)
        .unwrap_or_else(|| panic!("no row {scenario}"))
}

/// Every row of every recorded boot, the reproducer's included, is judged
/// from the kernel's trace and agrees: 10 kernels at 1, 2 and 4 vCPUs.
#[test]
fn every_recorded_row_agrees_exactly() {
    let boots = boots();
    let mut kernels: Vec<(u32, u32)> = boots.iter().map(|b| release(&b.1)).collect();
    kernels.dedup();
    assert_eq!(kernels.len(), 10, "the all set: {kernels:?}");
    assert_eq!(boots.len(), 30, "10 kernels at 1, 2 and 4 vCPUs");
    let mut rows = 0;
    for (name, obs, judged) in boots {
        assert!(
            obs.hello.trace == "tracepoints" || obs.hello.trace == "kprobes",
            "{name}: {}",
            obs.hello.trace
        );
        for r in judged {
            assert_eq!(
                r.verdict,
                Verdict::Agree,
                "{name} {}: {}",
                r.scenario,
                r.note
            );
            assert_eq!(r.judged, Judged::Exact, "{name} {}: {}", r.scenario, r.note);
            rows += 1;
        }
        let repro = release(obs) >= (6, 8);
        assert_eq!(
            judged.len(),
            all_names().len() + usize::from(repro),
            "{name}: a row per scenario, and the reproducer's from 6.8"
        );
    }
    assert!(rows >= 30 * 12, "{rows} rows");
}

/// The early break's loss on every kernel that has it, at 1, 2 and 4
/// vCPUs, and not on 6.12: the parent's read does not flush and shows less
/// than its child; charged 256 pages per CPU more, the parent stays short
/// until the periodic flush.
#[test]
fn c12_shows_on_every_kernel_with_the_break() {
    for (name, obs, rows) in boots() {
        let rel = release(obs);
        if rel < (6, 8) {
            continue;
        }
        let reads = |s: &str| -> Vec<_> { obs.reads.iter().filter(|r| r.s == s).collect() };
        let skew = reads("c12-skew");
        assert_eq!(skew.len(), 2, "{name}");
        let loses = skew[0].anon < skew[1].anon;
        assert_eq!(
            loses,
            rel >= (6, 16),
            "{name}: p {} / p/a {}",
            skew[0].anon,
            skew[1].anon
        );
        let repro = &obs.repro;
        assert_eq!(
            repro.verdict(),
            Some(if rel >= (6, 16) { "FAIL" } else { "PASS" }),
            "{name}: {:?}",
            repro.lines
        );
        assert_eq!(row(rows, "reproducer").verdict, Verdict::Agree, "{name}");
        if rel >= (6, 16) {
            let loss = memcg_flush_model::oracle::loss::loss(obs)
                .unwrap_or_else(|| panic!("{name}: no loss in c12-decisive"));
            assert!(
                loss.child >= 256 * obs.hello.cpus as u64,
                "{name}: {loss:?}"
            );
            assert_eq!(loss.parent, 0, "{name}: {loss:?}");
            assert!(loss.short_reads >= 4, "{name}: {loss:?}");
            // Caught up at the periodic flush, about 2 s on, or still short
            // when the poll ended (the deferrable work ran late).
            match loss.lasted_ms {
                Some(ms) => assert!((1500..4000).contains(&ms), "{name}: {loss:?}"),
                None => assert!(loss.watched_ms >= 3000, "{name}: {loss:?}"),
            }
        } else {
            assert!(
                memcg_flush_model::oracle::loss::loss(obs).is_none(),
                "{name}"
            );
        }
    }
}

/// Each CPU count's reproducer ran with the model's k1 for its release.
#[test]
fn the_reproducer_ran_with_the_models_k1() {
    for (name, obs, _) in boots() {
        if release(obs) < (6, 8) {
            assert!(!obs.repro.ran, "{name}");
            continue;
        }
        let k1 = memcg_flush_model::oracle::plan::reproducer_k1(&obs.hello.release, obs.hello.cpus)
            .unwrap()
            .unwrap();
        assert_eq!(obs.repro.k1, k1.to_string(), "{name}");
    }
}

/// The probe's own footprint: in `quiet` (moves, reads, zero-unit
/// charges, idle time) the trace shows no update of the scenario's memcgs.
#[test]
fn the_probe_charges_nothing_of_its_own() {
    for (name, obs, _) in boots() {
        let start = obs.starts.iter().find(|s| s.s == "quiet").unwrap();
        let ids: Vec<u64> = ["a", "b"].iter().map(|c| start.ids[*c]).collect();
        let (from, to) = memcg_flush_model::oracle::replay::window(&obs.events, "quiet").unwrap();
        let updates: Vec<&Event> = obs.events[from..to]
            .iter()
            .filter(|e| matches!(&e.ev, Ev::Update { id, .. } if ids.contains(id)))
            .collect();
        assert!(updates.is_empty(), "{name}: {updates:?}");
    }
}

/// A console with one thing changed, judged again.
fn rejudged(name: &str, edit: impl Fn(&mut Observation)) -> Vec<Row> {
    let (_, obs, _) = boots().iter().find(|b| b.0 == name).unwrap();
    let mut obs = obs.clone();
    edit(&mut obs);
    judge(&obs)
}

/// The comparison fails on a wrong value: one read of `step` showing one
/// page more, on a tracepoint kernel and on a kprobe kernel.
#[test]
fn a_wrong_value_is_caught() {
    for name in ["7.3-1", "6.12-2", "6.1-4"] {
        let rows = rejudged(name, |o| {
            let r = o
                .reads
                .iter_mut()
                .filter(|r| r.s == "step")
                .nth(100)
                .unwrap();
            r.anon += 1;
        });
        let r = row(&rows, "step");
        assert_eq!(r.verdict, Verdict::Disagree, "{name}");
        assert!(
            r.note.contains("read 101 of a showed anon"),
            "{name}: {}",
            r.note
        );
    }
}

/// The comparison fails on a wrong decision: a gate whose counter is off
/// by one (the tracepoint's), a gate whose flush is missing (a kprobe
/// kernel's), and an update dropped from the stream.
#[test]
fn a_wrong_decision_or_stream_is_caught() {
    let first_gate = |o: &mut Observation, s: &str| -> usize {
        let (from, to) = memcg_flush_model::oracle::replay::window(&o.events, s).unwrap();
        (from..to)
            .find(|&i| matches!(o.events[i].ev, Ev::Gate { force: false, .. }))
            .unwrap()
    };
    let rows = rejudged("7.3-1", |o| {
        let i = first_gate(o, "step");
        if let Ev::Gate { value, .. } = &mut o.events[i].ev {
            *value = value.map(|v| v + 1);
        }
    });
    assert!(
        row(&rows, "step").note.contains("compared"),
        "{}",
        row(&rows, "step").note
    );
    let rows = rejudged("6.12-1", |o| {
        let (from, to) = memcg_flush_model::oracle::replay::window(&o.events, "step").unwrap();
        let i = (from..to)
            .find(|&i| matches!(o.events[i].ev, Ev::Rstat { .. }) && o.events[i].pid == 1)
            .unwrap();
        o.events.remove(i);
    });
    let r = row(&rows, "step");
    assert_eq!(r.verdict, Verdict::Disagree);
    assert!(r.note.contains("did not flush in the kernel"), "{}", r.note);
    let rows = rejudged("6.16-1", |o| {
        let (from, to) = memcg_flush_model::oracle::replay::window(&o.events, "c12-skew").unwrap();
        let i = (from..to)
            .find(|&i| matches!(o.events[i].ev, Ev::Update { .. }))
            .unwrap();
        o.events.remove(i);
    });
    assert_eq!(row(&rows, "c12-skew").verdict, Verdict::Disagree);
}

/// The rows discriminate: the c12 rows of a kernel with the break disagree
/// with the no-break protocol, and the reverse on 6.12.
#[test]
fn c12_rows_tell_the_lineages_apart() {
    for (name, obs, rows) in boots() {
        if release(obs) >= (6, 8) {
            assert!(row(rows, "c12-skew").discriminating, "{name}");
        }
    }
}

/// 6.1's per-CPU `stats_updates` is calibrated by the probe's first step on
/// every CPU; without that step's events the rows are only `calibrated`.
#[test]
fn six_one_rows_are_exact_only_after_calibration() {
    let rows = rejudged("6.1-2", |o| {
        o.events.retain(|e| {
            !(matches!(e.ev, Ev::Update { val, .. } if val.abs() > 64) && e.pid == 1 && e.cpu == 1)
        });
    });
    assert!(
        rows.iter().any(|r| r.judged == Judged::Calibrated),
        "{:?}",
        rows.iter()
            .map(|r| (&r.scenario, r.judged))
            .collect::<Vec<_>>()
    );
}

/// A kernel that gives the probe no way to see a flush fails its rows.
#[test]
fn no_way_to_see_a_flush_fails_the_row() {
    let rows = rejudged("7.3-1", |o| {
        o.hello.trace = "none".into();
        o.hello.trace_why = "no probe point sees a flush on this kernel".into();
    });
    assert!(rows.iter().all(|r| r.verdict == Verdict::Failed));
}

/// docs/real-kernels.md section 4 is what `flushcheck kernels --from
/// tests/consoles --markdown` prints.
#[test]
fn the_docs_tables_are_the_recorded_boots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut outcomes: Vec<memcg_flush_model::cli::kernels::Outcome> = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("tests/consoles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort_by_key(|p| {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let (k, n) = stem.rsplit_once('-').unwrap();
        (
            memcg_flush_model::guest::cache::version_key(k),
            n.parse::<usize>().unwrap(),
        )
    });
    for p in files {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let (k, n) = stem.rsplit_once('-').unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        outcomes.push(memcg_flush_model::cli::kernels::outcome(
            k,
            n.parse().unwrap(),
            &text,
            &all_names(),
        ));
    }
    let want = memcg_flush_model::publish::kernels::markdown(&outcomes);
    let doc = std::fs::read_to_string(dir.join("docs/real-kernels.md")).unwrap();
    let begin = "<!-- kernels: BEGIN (generated) -->\n";
    let from = doc.find(begin).unwrap() + begin.len();
    let to = doc.find("<!-- kernels: END -->").unwrap();
    assert_eq!(
        &doc[from..to],
        want,
        "docs/real-kernels.md section 4: regenerate with `flushcheck kernels --from tests/consoles --markdown`"
    );
}

/// The C reproducer's k1 table is the model's (`oracle::plan::c_table`):
/// a maintainer who runs it without `-k` gets the k1 CI ran with.
#[test]
fn the_reproducers_table_is_the_models() {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reproducers/test_c12_skew.c"),
    )
    .unwrap();
    let begin = "\t/* BEGIN k1_table */\n";
    let from = src.find(begin).unwrap() + begin.len();
    let to = src.find("\t/* END k1_table */").unwrap();
    let want = memcg_flush_model::oracle::plan::c_table().unwrap();
    assert_eq!(&src[from..to], want, "the table should read:\n{want}");
}
