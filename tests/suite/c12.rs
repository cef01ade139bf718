//! The early break of `memcg_rstat_updated()` (`c12-lost-flush`): one
//! finding, two forms (the racy one at 1-page charges, the race-free one
//! with mixed folio sizes), both replayed here; each alternative as the
//! data says on the cheap configurations (the 3-CPU one runs under
//! `flushcheck findings --check`); the comparison that decides a lost
//! flush is sound on every configuration the candidates are judged on;
//! and the report's text agrees with itself.

use std::time::Duration;

use memcg_flush_model::check::run::{run, RunSpec};
use memcg_flush_model::check::Verdict;
use memcg_flush_model::drive::findings::{
    candidate_met, check, reader_check, reader_configs, reader_premise, replay, Check,
};
use memcg_flush_model::drive::forms::{also_show, replay_also};
use memcg_flush_model::explore::{Backend, Platform};
use memcg_flush_model::observe::property::Property;
use memcg_flush_model::protocol::catalogue;
use memcg_flush_model::protocol::findings::{all, by_id, Expected, Finding};
use memcg_flush_model::protocol::per_memcg::fold_skew;
use memcg_flush_model::protocol::per_memcg::v6_8::{self, Memcontrol, State};
use memcg_flush_model::protocol::variant::batch_times_cpus;
use memcg_flush_model::protocol::{Kind, Variant};
use memcg_flush_model::publish::findings::candidate_verdict;
use memcg_flush_model::Config;

use crate::common::{flushcheck, pct};

const BUDGET: Duration = Duration::from_secs(120);
const ID: &str = "c12-lost-flush";

fn registry() -> Vec<Variant> {
    catalogue::with_bounds()
}

fn finding() -> Finding {
    by_id(ID).expect("finding")
}

fn dfs() -> Backend {
    Backend::ShuttleDfs {
        max_schedules: 2_000_000,
        sleep_sets: true,
        stateful: true,
        symmetry: false,
        workers: 1,
    }
}

/// `variant`'s exhaustive verdict on `no_lost_flush` on `cfg`.
fn lost_flush(variant: &str, cfg: &Config, reg: &[Variant]) -> bool {
    let r = run(&RunSpec::new(variant, "c12", cfg, dfs(), 120.0), reg).expect("runs");
    assert!(r.exhaustive, "{variant} on {cfg}: {}", r.search);
    let v = r.verdict(Property::NoLostFlush).expect("judged").verdict;
    v == Verdict::Violated
}

/// The configurations the test judges the candidates on: the witness, the
/// larger one and the race-free form on 1 and 2 CPUs (`scale`'s last, on
/// 3 CPUs, takes about 20 s per candidate: `flushcheck findings --check`).
fn cheap_configs(f: &Finding) -> Vec<Config> {
    let mut v = vec![(f.witness.cfg)(), (f.larger.expect("larger"))()];
    v.extend(f.scale.iter().map(|c| c()).filter(|c| c.cpus <= 2));
    v
}

#[test]
fn one_finding_with_both_forms() {
    let ids: Vec<&str> = all().iter().map(|f| f.id).collect();
    assert_eq!(
        ids.iter().filter(|i| i.starts_with("c12")).count(),
        1,
        "{ids:?}"
    );
    let f = finding();
    assert_eq!(f.also.len(), 1, "the race-free form");
    // The racy form at 1-page charges, the race-free one with several.
    assert!((f.witness.cfg)().vals.iter().all(|v| *v == 1));
    let skew = (f.also[0].cfg)();
    assert!(!skew.periodic && skew.readers == 0 && skew.cpus == 1);
    assert!(skew.vals.iter().any(|v| *v > 1) && skew.batch == 64);
    let cpus: Vec<usize> = f.scale.iter().map(|c| c().cpus).collect();
    assert!(cpus.contains(&2) && cpus.contains(&3), "{cpus:?}");
}

#[test]
fn the_racy_form_replays_at_one_page_charges() {
    let r = replay(&finding(), &registry(), BUDGET).expect("replay");
    assert!(r.check.shows && r.check.exhaustive, "{:?}", r.check);
    let c = r.trace.expect("a trace");
    assert!(
        c.violation.contains("decided not to flush"),
        "{}",
        c.violation
    );
}

#[test]
fn the_race_free_form_replays() {
    let f = finding();
    let reg = registry();
    let r = replay_also(&f, &reg, BUDGET).expect("replay");
    assert_eq!(r.len(), 1);
    assert!(
        r[0].check.shows && r[0].check.exhaustive,
        "{:?}",
        r[0].check
    );
    // One CPU, no flusher but the final read: one interleaving.
    assert_eq!(r[0].check.executions, 1);
    assert!(r[0].trace.is_some(), "{}", r[0].how);
    assert_eq!(
        also_show(&f, &reg, BUDGET).expect("search"),
        Vec::<String>::new()
    );
}

/// The comparison deciding a lost flush flags nothing for the walk
/// without the break itself on any configuration the candidates are
/// judged on, nor at batch 2 with 1-page charges and the periodic flush,
/// where it did before issue 41 (the reason the racy witness is at batch
/// 1): the twin counted a per-CPU count whose read-modify-write a remote
/// reset split as if it ran after the reset, where the walk's own write
/// restores the count it read (observe/twin/per_memcg.rs, `rmw`).
#[test]
fn the_comparison_is_sound_on_the_configurations() {
    let f = finding();
    let reg = registry();
    for cfg in cheap_configs(&f) {
        assert!(!lost_flush("v6.17-no-break", &cfg, &reg), "{cfg}");
    }
    let b2 = Config {
        batch: 2,
        updates: 5,
        ..(f.witness.cfg)()
    };
    assert!(!lost_flush("v6.17-no-break", &b2, &reg), "{b2}");
}

/// `flushcheck fuzz`'s finding on the candidate that keeps the break
/// above flushable ancestors: at the root, which has none, it is v6.17's
/// break, and a flush that resets the root's atomic after visiting a CPU
/// loses that CPU's charges which took the break in between. The witness
/// replays; the walk without the break holds there (sampled: two CPUs and
/// the periodic flush are beyond the exhaustive search's cap), v6.17
/// loses the same flush.
/// `flushcheck explain --variant v6.17-fix-break-if-ancestors --property
/// no_lost_flush --backend shuttle-random --cpus 2 --batch 3 --updates 3
/// --val 5,2 --readers 0 --periodic` (47 steps; docs/findings.md).
const BREAK_IF_ANCESTORS_WITNESS: &str = "fc2.eyJ2IjoyLCJ2YXJpYW50IjoidjYuMTctZml4LWJyZWFrLWlmLWFuY2VzdG9ycyIsInByb3BlcnR5Ijoibm9fbG9zdF9mbHVzaCIsImNmZyI6eyJjcHVzIjoyLCJiYXRjaCI6MywidXBkYXRlcyI6MywidmFscyI6WzUsMl0sInJlYWRlcnMiOjAsInJlYWRzIjoxLCJwZXJpb2RpYyI6dHJ1ZSwidGlja3MiOjAsImxhdGUiOjB9LCJ0YXJnZXQiOm51bGwsImhvdyI6eyJzaHV0dGxlIjp7InNjaGVkdWxlIjp7InNlZWQiOjExNDMyNzY0MTYwMzQ3Mjc3MDg4LCJzdGVwcyI6WzAsMCwxLDAsMiwwLDAsMCwyLDIsMiwwLDEsMSwwLDEsMSwyLDAsMiwyLDEsMiwxLDEsMiwyLDAsMiwwLDAsMSwwLDAsMCwwLDIsMiwxLDIsMiwxLDEsMSwxLDEsMSwxLDAsMCwwXX19fX0";

#[test]
fn keeping_the_break_above_flushable_ancestors_loses_a_flush_at_the_root() {
    let f = finding();
    let c = f
        .fixes
        .iter()
        .find(|c| c.variant == "v6.17-fix-break-if-ancestors")
        .expect("the candidate");
    assert_eq!(c.expected, Expected::Refuted);
    let cfg = (c.refuted_on.expect("its own configuration"))();
    let out = flushcheck(&["replay", BREAK_IF_ANCESTORS_WITNESS]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("violated: no_lost_flush:"),
        "{}",
        out.stdout
    );
    let reg = registry();
    let sampled = |v: &str| {
        let r = run(&RunSpec::new(v, "c12", &cfg, pct(4000), 120.0), &reg).expect("runs");
        r.verdict(Property::NoLostFlush).expect("judged").verdict
    };
    assert_eq!(sampled("v6.17-fix-no-break"), Verdict::Holds);
    assert_eq!(sampled("v6.17-fix-break-if-ancestors"), Verdict::Violated);
    assert_eq!(sampled("v6.17"), Verdict::Violated);
}

#[test]
fn each_candidate_as_the_data_says() {
    let f = finding();
    let reg = registry();
    let cfgs = cheap_configs(&f);
    for c in f.fixes {
        let v = Variant::find(&reg, c.variant).expect("variant");
        let own = c.refuted_on.map(|g| g());
        let checks: Vec<Check> = cfgs
            .iter()
            .chain(own.as_ref())
            .map(|cfg| check(&f, &v, cfg, &reg, BUDGET).expect("search"))
            .collect();
        let lines: Vec<String> = checks
            .iter()
            .map(|k| format!("{} on {} {:?}", k.verdict(), k.cfg, k.broken))
            .collect();
        assert!(
            candidate_met(c.expected, &checks),
            "{}: {:?}: {lines:?}",
            c.variant,
            c.expected
        );
        // The verdict line the report prints agrees with the class, and
        // so does the change's own text.
        let verdict = candidate_verdict(c.expected, &checks);
        let refuted = c.change.starts_with("Refuted");
        match c.expected {
            Expected::Fixes => assert!(verdict.starts_with("holds") && !refuted, "{verdict}"),
            Expected::Refuted => assert!(verdict.starts_with("refuted") && refuted, "{verdict}"),
        }
    }
}

/// The walk without the break, with one `atomic_read()` of the level's
/// count before it counts there: the same kernel behaviour, one more step.
#[derive(Clone, Copy)]
struct NoBreakReadFirst;

impl Memcontrol for NoBreakReadFirst {
    fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
        use memcg_flush_model::kernel::{
            atomic64_add, this_cpu_add_return_shared, this_cpu_xchg_shared,
        };
        let mut level = Some(memcg);
        while let Some(m) = level {
            level = mm.parent_mem_cgroup(m);
            let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
            // The read the break's test makes; its value is not used.
            let _ = self.memcg_vmstats_needs_flush(mm, m);
            let s = this_cpu_add_return_shared(&statc.stats_updates, val.abs());
            if s < mm.MEMCG_CHARGE_BATCH() {
                continue;
            }
            let s = this_cpu_xchg_shared(&statc.stats_updates, 0);
            atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
        }
    }
    fn cgroup_rstat_flush<P: Platform>(&self, mm: &State<P>, root: u8) {
        memcg_flush_model::protocol::per_memcg::v6_17::css_rstat_flush(self, mm, root);
    }
}

/// The race-free configuration with the periodic flush: no candidate is
/// flagged there, exhaustively. Before issue 41 the comparison flagged the
/// candidate that keeps the break only above flushable ancestors, and the
/// walk without the break once it read the level's count before counting:
/// the twin counted a level where the variant read that level's atomic,
/// ahead of the variant, and kept a count the periodic flush had collected
/// (observe/twin/per_memcg.rs now counts at writes only, and a level the
/// variant passes without a step at the least eager place).
#[test]
fn the_periodic_race_free_form_flags_no_candidate() {
    let name = "c12-no-break-read-first";
    let mut reg = registry();
    reg.push(
        Variant::new(name, Kind::Candidate, name, v6_8::model(NoBreakReadFirst))
            .per_memcg(batch_times_cpus)
            .twin("v6.17-no-break"),
    );
    let cfg = Config {
        periodic: true,
        ..fold_skew()
    };
    for v in [
        name,
        "v6.17-fix-break-if-ancestors",
        "v6.17-no-break",
        "v6.17-fix-no-break",
    ] {
        assert!(!lost_flush(v, &cfg, &reg), "{v}");
    }
    // The race-free form itself is still the finding there.
    assert!(lost_flush("v6.17", &cfg, &reg), "v6.17");
}

/// The report's sections in kernel terms, both forms in each that
/// differs by form, and no project vocabulary.
#[test]
fn the_text_has_both_forms_and_kernel_terms_only() {
    let f = finding();
    for (name, text) in [
        ("mechanism", f.mechanism),
        ("likelihood", f.likelihood),
        ("preconditions", f.preconditions),
        ("magnitude", f.magnitude),
    ] {
        assert!(text.contains("acy form") || text.contains("(1)"), "{name}");
        assert!(
            text.contains("ace-free form") || text.contains("(2)"),
            "{name}"
        );
    }
    assert!(f.impact.contains("mem_cgroup_flush_stats_ratelimited()"));
    assert!(f.impact.contains("flush_memcg_stats_dwork()"));
    let mut texts = vec![
        f.subject,
        f.mechanism,
        f.impact,
        f.magnitude,
        f.likelihood,
        f.preconditions,
        f.abstractions,
    ];
    texts.extend(f.fixes.iter().map(|c| c.change));
    let ids: Vec<&str> = all().iter().map(|f| f.id).collect();
    for t in texts {
        for word in ["C12", "B10", "B11", "twin", "holds*", "v6.17-"] {
            assert!(!t.contains(word), "{word:?} in {t:?}");
        }
        for id in &ids {
            assert!(!t.contains(id), "{id} in {t:?}");
        }
    }
}

/// The early break is first in v6.16, on `this_cpu_add_return()`'s counter
/// (docs/releases.md); the patch as posted (Shakeel Butt,
/// "memcg: optimize memcg_rstat_updated", v2, 10 April 2025) added it to
/// v6.8's `READ_ONCE()`/`WRITE_ONCE()` counter, before the counter became
/// `this_cpu_add_return()`. Written here as an outside variant would be,
/// that form loses the flush on the race-free witness too, every SC
/// interleaving searched: the finding holds for the posted form too.
#[test]
fn c12_fails_for_the_break_as_posted_on_v6_8s_counter() {
    use memcg_flush_model::kernel::{atomic64_add, read_once, write_once};

    #[derive(Clone, Copy)]
    struct BreakAsPosted;

    impl Memcontrol for BreakAsPosted {
        fn memcg_rstat_updated<P: Platform>(&self, mm: &State<P>, memcg: u8, val: i64) {
            if val == 0 {
                return;
            }
            let mut level = Some(memcg);
            while let Some(m) = level {
                level = mm.parent_mem_cgroup(m);
                // The change: leave the walk at the first flushable level;
                // the add at a fold is then unconditional.
                if self.memcg_vmstats_needs_flush(mm, m) {
                    break;
                }
                let statc = mm.memcg(m).vmstats_percpu.this_cpu::<P>();
                let s = read_once(&statc.stats_updates) + val.abs();
                write_once(&statc.stats_updates, s);
                if s < mm.MEMCG_CHARGE_BATCH() {
                    continue;
                }
                atomic64_add(s, &mm.memcg(m).vmstats.stats_updates);
                write_once(&statc.stats_updates, 0);
            }
        }
    }

    let name = "v6.8-break-as-posted";
    let mut reg = registry();
    reg.push(
        Variant::new(name, Kind::Candidate, name, v6_8::model(BreakAsPosted))
            .per_memcg(batch_times_cpus)
            .twin("v6.8-no-skip"),
    );
    for (v, lost) in [(name, true), ("v6.8", false)] {
        assert_eq!(lost_flush(v, &fold_skew(), &reg), lost, "{v}");
    }
}

/// What a reader observes, judged without the walk the candidates restore
/// (`reader_check`: `quiescent_read_exact` on configurations charged past
/// the trigger plus every CPU's slack): the unfixed code shows a read that
/// misses pages, and the no-break candidate passes because its reader
/// flushes and reads every page, not because it is the walk it is compared
/// with (this check compares the read with the charges).
#[test]
fn the_reader_check_judges_the_read_not_the_walk() {
    let f = finding();
    let reg = registry();
    let cfgs = reader_configs(&f, &reg);
    assert!(!cfgs.is_empty(), "no configuration past the reader's slack");
    let unfixed = Variant::find(&reg, f.witness.variant).expect("variant");
    for c in &cfgs {
        assert!(reader_premise(c, &unfixed), "{c}");
    }
    let first = &cfgs[..1];
    let rows = reader_check(&f, first, &reg, BUDGET).expect("search");
    let row = |name: &str| {
        rows.iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c[0].clone())
            .unwrap_or_else(|| panic!("{name} not checked"))
    };
    let u = row(f.witness.variant);
    assert!(
        u.shows,
        "the unfixed code reads every page on {}: {}",
        u.cfg, u.note
    );
    let nb = row("v6.17-fix-no-break");
    assert!(
        !nb.shows && nb.exhaustive && nb.broken.is_empty(),
        "no-break on {}: {} {}",
        nb.cfg,
        nb.verdict(),
        nb.note
    );
    // A configuration short of the slack is not used: there a walk that
    // counts every update may leave the reader under its trigger.
    let mut short = cfgs[0].clone();
    short = short.vals(&[1]);
    assert!(!reader_premise(&short, &unfixed), "{short}");
}
