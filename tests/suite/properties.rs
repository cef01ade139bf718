//! Properties are monitors over observations: fed a hand-written history,
//! each one fails with a message that starts with its name, and passes on
//! the histories the kernel allows. No protocol runs here.

use memcg_flush_model::config::Config;
use memcg_flush_model::observe::properties::attribute;
use memcg_flush_model::observe::{Gate, Monitor, MonitorPlan, Property, Shared, TwinPlan};
use memcg_flush_model::vocab::{Access, Actor, Family, Idiom, LockName, Obs, Op, Sink, Tp, Var};
use std::sync::Arc;

use crate::common::cfg::pair_3_2 as cfg;

const CPU1: Actor = Actor::Cpu(1);
const READER: Actor = Actor::Reader(0);

/// A plan checking every property of the flush monitor on `cfg`, in
/// execution order if `sc`.
fn plan(cfg: &Config, sc: bool) -> MonitorPlan {
    MonitorPlan::new(
        Arc::new(cfg.clone()),
        sc,
        Property::of_family(Family::Global).collect(),
    )
}

/// v5.19's gate as the twin.
fn v5_19_twin(cfg: &Config) -> TwinPlan {
    TwinPlan {
        gate: Gate::Global,
        trigger: cfg.cpus as i64,
        name: "v5.19".into(),
    }
}

/// A monitor for one execution on `cfg`, comparing with v5.19's gate.
fn monitor(cfg: &Config) -> (Arc<Monitor>, Arc<Shared>) {
    let mut plan = plan(cfg, true);
    plan.twin = Some(v5_19_twin(cfg));
    plan.baseline_since_reset = Some(4);
    let shared = Shared::new(plan);
    (Monitor::new(shared.clone()), shared)
}

fn access(m: &Monitor, who: Actor, var: Var, op: Op, idiom: Idiom) {
    m.observe(who, Obs::Access(Access { var, op, idiom }));
}

fn state(cpu: u8) -> Var {
    Var::State { memcg: 0, cpu }
}

fn su(cpu: u8) -> Var {
    Var::StatsUpdates { memcg: None, cpu }
}

const THR: Var = Var::Threshold { memcg: None };

/// One v6.0 update of `val` on `cpu` that adds if it reads at most n.
fn update(m: &Monitor, cpu: u8, val: i64, thr_before: i64, adds: bool) {
    let who = Actor::Cpu(cpu as usize);
    access(
        m,
        who,
        state(cpu),
        Op::Add { val, new: val },
        Idiom::ThisCpuAdd,
    );
    access(
        m,
        who,
        su(cpu),
        Op::Add { val, new: val },
        Idiom::ThisCpuAddReturn,
    );
    access(m, who, THR, Op::Read(thr_before), Idiom::AtomicRead);
    if adds {
        let new = thr_before + val;
        access(m, who, THR, Op::Add { val, new }, Idiom::AtomicAdd);
    }
    access(m, who, su(cpu), Op::Write(0), Idiom::ThisCpuWrite);
    m.observe(who, Obs::UpdateDone { memcg: 0, val });
}

fn decide(m: &Monitor, who: Actor, thr: i64, flush: bool) {
    access(m, who, THR, Op::Read(thr), Idiom::AtomicRead);
    m.observe(
        who,
        Obs::Trace(Tp::FlushStats {
            memcg: 0,
            needs_flush: flush,
        }),
    );
}

fn violation(shared: &Shared, p: Property) -> Option<String> {
    shared.violation(p)
}

#[test]
fn no_lost_flush_compares_a_reader_decision_with_the_twin_gate() {
    let cfg = cfg();
    let (m, shared) = monitor(&cfg);
    update(&m, 0, 3, 0, true);
    // CPU 1 skips at 3 > 2: v5.19 would have added 2 (twin 5 > 2).
    update(&m, 1, 2, 3, false);
    // A reader whose gate wants more than the kernel's says no at 3.
    decide(&m, READER, 3, false);
    m.finish();
    let v = violation(&shared, Property::NoLostFlush).expect("violated");
    assert!(
        v.starts_with("no_lost_flush: reader 0 decided not to flush"),
        "{v}"
    );
    assert!(v.contains("read stats_flush_threshold = 3"), "{v}");
    assert!(
        v.contains("v5.19's gate over the same history reads stats_flush_threshold = 5"),
        "{v}"
    );
}

#[test]
fn no_lost_flush_holds_for_a_flush_decision_and_while_a_flush_runs() {
    let cfg = cfg();
    let (m, shared) = monitor(&cfg);
    update(&m, 0, 3, 0, true);
    update(&m, 1, 2, 3, false);
    decide(&m, READER, 3, true);
    // The twin's reader would lose the trylock while a flush runs.
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushBegin { root: 0 }));
    decide(&m, Actor::Reader(1), 3, false);
    m.finish();
    assert_eq!(violation(&shared, Property::NoLostFlush), None);
}

#[test]
fn the_twin_resets_only_after_a_flush_that_walked() {
    let cfg = cfg();
    let (m, shared) = monitor(&cfg);
    update(&m, 0, 3, 0, true);
    // A flusher that resets without walking (a loser that resets): the
    // twin keeps its threshold, the variant's is 0.
    access(&m, Actor::Periodic, THR, Op::Write(0), Idiom::AtomicSet);
    decide(&m, READER, 0, false);
    m.finish();
    assert!(violation(&shared, Property::NoLostFlush).is_some());
    // The same reset at the end of a section that walked: the twin resets.
    let (m, shared) = monitor(&cfg);
    update(&m, 0, 3, 0, true);
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushBegin { root: 0 }));
    for c in 0..2 {
        access(
            &m,
            Actor::Periodic,
            state(c),
            Op::Read(3 - 3 * c as i64),
            Idiom::ReadOnce,
        );
    }
    access(&m, Actor::Periodic, THR, Op::Write(0), Idiom::AtomicSet);
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushEnd));
    decide(&m, READER, 0, false);
    m.finish();
    assert_eq!(violation(&shared, Property::NoLostFlush), None);
}

#[test]
fn the_same_schedule_twin_lands_a_skipped_add_at_the_next_step() {
    let cfg = cfg().updates(2);
    let (m, shared) = monitor(&cfg);
    update(&m, 0, 3, 0, true);
    update(&m, 1, 3, 3, false);
    // The flush that read both counters before CPU 1's write resets.
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushBegin { root: 0 }));
    access(&m, Actor::Periodic, state(0), Op::Read(3), Idiom::ReadOnce);
    access(&m, Actor::Periodic, state(1), Op::Read(0), Idiom::ReadOnce);
    access(&m, Actor::Periodic, THR, Op::Write(0), Idiom::AtomicSet);
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushEnd));
    // CPU 1's next step: v5.19's add would land here, after the reset.
    access(
        &m,
        CPU1,
        state(1),
        Op::Add { val: 3, new: 6 },
        Idiom::ThisCpuAdd,
    );
    decide(&m, READER, 0, false);
    m.finish();
    // In the outcome sense the skipped add went before the reset.
    assert_eq!(violation(&shared, Property::NoLostFlush), None);
    let v = violation(&shared, Property::NoLostFlushSameSchedule).expect("violated");
    assert!(
        v.starts_with("no_lost_flush_same_schedule: reader 0"),
        "{v}"
    );
}

#[test]
fn conservation_fails_on_a_lost_update() {
    let (m, shared) = monitor(&cfg());
    update(&m, 0, 3, 0, true);
    update(&m, 1, 2, 3, false);
    m.observe(Actor::Main, Obs::Final { memcg: 0, value: 3 });
    m.finish();
    let v = violation(&shared, Property::Conservation).expect("violated");
    assert!(
        v.contains("memcg->vmstats.state = 3, but the updates sum to 5"),
        "{v}"
    );
    let (m, shared) = monitor(&cfg());
    update(&m, 0, 3, 0, true);
    m.observe(Actor::Main, Obs::Final { memcg: 0, value: 3 });
    m.finish();
    assert_eq!(violation(&shared, Property::Conservation), None);
}

#[test]
fn monotonic_reads_fails_when_a_read_goes_down() {
    let (m, shared) = monitor(&cfg());
    m.observe(READER, Obs::Read { memcg: 0, value: 3 });
    m.observe(READER, Obs::Read { memcg: 0, value: 3 });
    m.observe(READER, Obs::Read { memcg: 0, value: 2 });
    m.finish();
    let v = violation(&shared, Property::MonotonicReads).expect("violated");
    assert_eq!(
        v,
        "monotonic_reads: reader 0 read memcg->vmstats.state = 3, then 2"
    );
    // Main reads after every reader has been joined: not below any of them.
    let (m, shared) = monitor(&cfg());
    m.observe(READER, Obs::Read { memcg: 0, value: 4 });
    m.observe(Actor::Main, Obs::Read { memcg: 0, value: 3 });
    m.finish();
    assert!(violation(&shared, Property::MonotonicReads).is_some());
}

#[test]
fn flush_exclusion_fails_on_two_open_sections() {
    let (m, shared) = monitor(&cfg());
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushBegin { root: 0 }));
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushEnd));
    m.observe(READER, Obs::Trace(Tp::FlushBegin { root: 0 }));
    m.finish();
    assert_eq!(violation(&shared, Property::FlushExclusion), None);
    let (m, shared) = monitor(&cfg());
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushBegin { root: 0 }));
    m.observe(READER, Obs::Trace(Tp::FlushBegin { root: 0 }));
    m.finish();
    let v = violation(&shared, Property::FlushExclusion).expect("violated");
    assert!(v.starts_with("flush_exclusion: 2 flushers"), "{v}");
}

#[test]
fn staleness_properties_judge_no_flush_decisions() {
    let (m, shared) = monitor(&cfg());
    update(&m, 0, 3, 0, true);
    update(&m, 1, 2, 3, false);
    decide(&m, READER, 3, false);
    m.finish();
    // 5 pages stale > MEMCG_CHARGE_BATCH * nr_cpus = 2; gated 5 > 4.
    let c1 = violation(&shared, Property::DocumentedErrorBound).expect("violated");
    assert!(c1.contains("with 5 pages missing"), "{c1}");
    assert!(
        c1.contains("residue 0, counted 3, skipped 2, lost 0"),
        "{c1}"
    );
    let nw = violation(&shared, Property::NoWorseThanBaseline).expect("violated");
    assert!(nw.contains("more than the 4 v5.19 can leave"), "{nw}");
}

#[test]
fn flush_time_bound_measures_age_in_ticks() {
    let cfg = cfg().ticks(4);
    let (m, shared) = monitor(&cfg);
    update(&m, 0, 3, 0, true);
    for t in 1..=3 {
        access(
            &m,
            Actor::Clock,
            Var::Jiffies,
            Op::Write(t),
            Idiom::WriteOnce,
        );
    }
    m.observe(READER, Obs::Read { memcg: 0, value: 0 });
    m.finish();
    let v = violation(&shared, Property::FlushTimeBound).expect("violated");
    assert!(v.contains("returned 3 ticks earlier"), "{v}");
}

#[test]
#[should_panic(expected = "flush_exclusion: 2 flushers")]
fn an_armed_property_panics_at_its_first_violation() {
    let mut plan = plan(&cfg(), true);
    plan.armed = vec![Property::FlushExclusion];
    let m = Monitor::new(Shared::new(plan));
    m.observe(Actor::Periodic, Obs::Trace(Tp::FlushBegin { root: 0 }));
    m.observe(READER, Obs::Trace(Tp::FlushBegin { root: 0 }));
}

#[test]
fn ghost_forms_are_not_checked_without_sequential_consistency() {
    let mut plan = plan(&cfg(), false);
    plan.twin = Some(v5_19_twin(&cfg()));
    let shared = Shared::new(plan);
    let m = Monitor::new(shared.clone());
    update(&m, 0, 3, 0, true);
    update(&m, 1, 2, 3, false);
    decide(&m, READER, 3, false);
    m.finish();
    for p in [
        Property::NoLostFlush,
        Property::DocumentedErrorBound,
        Property::NoLostFlushSameSchedule,
    ] {
        assert_eq!(
            violation(&shared, p),
            None,
            "{p} is judged in execution order"
        );
    }
}

#[test]
fn panics_are_attributed_by_name_and_races_by_variable() {
    for p in Property::all() {
        assert_eq!(attribute(&format!("{}: x", p.name())), Some(p));
    }
    let race = "data race on P[0]: Causality violation: Concurrent write accesses to `UnsafeCell`.";
    assert_eq!(attribute(race), Some(Property::FlushExclusion));
    let race = "data race on flush_time: Causality violation: Concurrent write accesses";
    assert_eq!(attribute(race), Some(Property::FlushExclusion));
    assert_eq!(attribute("data race on U[1]: Causality violation"), None);
    assert_eq!(attribute("model: something else"), None);
    let _ = LockName::StatsFlushLock;
}

#[test]
fn property_names_round_trip_and_unknown_names_are_rejected() {
    for p in Property::all() {
        assert_eq!(Property::by_name(p.name()), Ok(p));
    }
    let err = Property::by_name("no_lost_flushes").unwrap_err();
    assert!(
        err.contains("\"no_lost_flushes\"") && err.contains("no_lost_flush"),
        "{err}"
    );
}

/// `Def::new` defaults what its documentation says, and each setter sets
/// only its own field, in a `static` as outside properties are written.
#[test]
fn a_property_built_from_new_has_the_documented_defaults() {
    use memcg_flush_model::observe::coverage::Event;
    use memcg_flush_model::observe::properties::{At, Ctx};
    use memcg_flush_model::observe::property::{Check, Def, Subject, IN_EXECUTION_ORDER};
    use memcg_flush_model::vocab::BackendName;
    fn never(_: &Ctx, _: &At) -> Option<String> {
        None
    }
    fn nothing(_: &Subject) -> bool {
        false
    }
    static PLAIN: Def = Def::new("plain", "a claim", Event::Skip, Check::Flush(never));
    static SET: Def = Def::new("set", "a claim", Event::Skip, Check::Flush(never))
        .source("a commit")
        .backends(IN_EXECUTION_ORDER)
        .applies(nothing)
        .race_needs_skip()
        .refutable();
    let cfg = cfg();
    let subject = Subject {
        family: Family::Global,
        has_twin: true,
        cfg: &cfg,
        backend: BackendName::Loom,
    };
    assert_eq!(PLAIN.backends.len(), BackendName::ALL.len());
    assert!((PLAIN.applies)(&subject) && (PLAIN.unchecked)(&subject).is_none());
    assert!(!PLAIN.race_needs_skip && !PLAIN.refutable && PLAIN.source.is_empty());
    assert!(!PLAIN.decided_by.is_empty());
    assert_eq!((SET.name, SET.source), ("set", "a commit"));
    assert_eq!(SET.backends, IN_EXECUTION_ORDER);
    assert!(!(SET.applies)(&subject) && SET.race_needs_skip && SET.refutable);
    assert!(matches!(SET.coverage, Event::Skip));
}
