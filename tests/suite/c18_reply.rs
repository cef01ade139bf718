//! The reply to the 2026 scaled-threshold thread: the fourth trigger's
//! integer scale against the reviewer's table, the worst-case formula
//! against the exhaustive search and the derivation, the table at 2 to
//! 1024 CPUs, the flush rate against the arithmetic, the too-eager reader
//! caught by `flush_not_too_eager`, and the text mail-ready.

use std::time::Duration;

use memcg_flush_model::measure::eagerness::{
    self, exhaustive_configs, predicted_interval, racy_config, FLUSH_NOT_TOO_EAGER,
};
use memcg_flush_model::measure::scaled::{self, confirm_configs, TABLE_CPUS};
use memcg_flush_model::protocol::per_memcg::proposal_2026::{eager_mutant, ln_scale, FORMS};
use memcg_flush_model::publish::mail::scaled::{gather, render, Scope, BATCH};
use memcg_flush_model::vocab::BackendName;

use crate::common::{reg, variant};

const BUDGET: Duration = Duration::from_secs(60);

/// `var2` of the reviewer's table (nr_cpus 1, 2, 4, ..., 1024).
#[test]
fn ln_scale_is_the_reviewers_var2() {
    let cpus = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
    let var2 = [1, 2, 2, 3, 5, 8, 13, 22, 40, 71, 130];
    for (n, want) in cpus.iter().zip(var2) {
        assert_eq!(ln_scale(*n), want, "nr_cpus {n}");
    }
    let t = |n: usize| {
        variant("scaled-2026-ln")
            .trigger_on(&memcg_flush_model::Config::default().cpus(n).batch(64))
    };
    assert_eq!((t(3), t(64)), (128, 832));
}

/// T + N·B equals the exhaustive search's maximum (residue + counted at a
/// decision not to flush) and the derivation's, for every form, on the
/// confirmation configurations but the 3-CPU one (80 s a form; `flushcheck
/// report --finding c18-bound` runs it).
#[test]
fn formula_equals_the_exhaustive_maxima() {
    let cfgs = &confirm_configs()[..3];
    let rows = scaled::confirm(reg(), cfgs, 1_000_000, BUDGET).expect("forms");
    assert_eq!(rows.len(), 3 * FORMS.len());
    for r in &rows {
        assert!(r.exhaustive, "{} on {}: not exhaustive", r.form, r.cfg);
        assert_eq!(
            (r.measured, r.derived),
            (r.formula, Some(r.formula)),
            "{} on {}",
            r.form,
            r.cfg
        );
    }
    // 1 CPU at batch 1 and 2, 2 CPUs at batch 1: T = N·B in every form.
    let got: Vec<i64> = rows.iter().map(|r| r.measured).collect();
    assert_eq!(got, [2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4]);
}

/// The table: T + N·B at 2 to 1024 CPUs, B = 64, equal to the derivation
/// at every entry, and the review's figure N pages lower.
#[test]
fn the_table_at_2_to_1024_cpus() {
    let rows = scaled::table(reg(), &TABLE_CPUS, BATCH, true).expect("forms");
    for r in &rows {
        for c in &r.cells {
            assert_eq!(c.worst, c.trigger + r.cpus as i64 * BATCH);
            assert_eq!(c.derived, Some(c.worst), "{} CPUs", r.cpus);
            assert_eq!(c.claimed, c.worst - r.cpus as i64);
        }
    }
    let at = |n: usize| -> Vec<(i64, i64)> {
        let r = rows.iter().find(|r| r.cpus == n).expect("row");
        r.cells.iter().map(|c| (c.trigger, c.worst)).collect()
    };
    assert_eq!(at(2), [(128, 256), (128, 256), (128, 256), (128, 256)]);
    assert_eq!(
        at(64),
        [(4096, 8192), (448, 4544), (512, 4608), (832, 4928)]
    );
    assert_eq!(
        at(1024),
        [(65536, 131072), (704, 66240), (2048, 67584), (8320, 73856)]
    );
    // Huge pages of V: each CPU keeps up to B - 1 + V.
    assert_eq!(scaled::worst_huge(704, 1024, BATCH, 512), 704 + 1024 * 575);
}

/// Flushes on the deterministic schedule: within one flush of the
/// arithmetic's count, for every form, all CPUs or one charging, a read
/// after every charge or every 7; and no flush with T or fewer pending.
#[test]
fn eagerness_agrees_with_the_arithmetic() {
    for (_, name) in FORMS {
        for n in [2, 8, 64] {
            for active in [n, 1] {
                for k in [1, 7] {
                    let e = eagerness::measure(variant(name), n, active, BATCH, 1 << 17, k);
                    let interval = predicted_interval(e.trigger, BATCH, active, k);
                    let expected = e.charges as f64 / interval as f64;
                    assert!(
                        (e.flushes as f64 - expected).abs() <= 1.0,
                        "{name} n={n} active={active} k={k}: {} flushes, {expected:.2} predicted",
                        e.flushes
                    );
                    assert!(e.flushes >= 2, "{name} n={n}: too few flushes to judge");
                    // Every interval is exactly the predicted one.
                    assert!(e.exact(), "{name} n={n} active={active} k={k}: {e:?}");
                    assert_eq!(e.violation, None, "{name} n={n}");
                    assert!(e.min_pending_at_flush.is_some_and(|p| p > e.trigger));
                }
            }
        }
    }
    // One CPU charging: a flush every T + B charges.
    assert_eq!(predicted_interval(832, 64, 1, 1), 896);
}

/// The too-eager reader (MEMCG_CHARGE_BATCH dropped from its gate) fails
/// `flush_not_too_eager` on the deterministic schedule and under the
/// exhaustive search (shuttle-dfs), where every form holds it.
#[test]
fn too_eager_reader_fails_the_eagerness_check() {
    let m = eager_mutant();
    // One CPU charging: the first fold flushes with B pages pending.
    let e = eagerness::measure(&m, 4, 1, BATCH, 1 << 12, 1);
    let v = e.violation.expect("the mutant flushes too eagerly");
    assert!(v.starts_with(FLUSH_NOT_TOO_EAGER.name), "{v}");
    let cfg = &exhaustive_configs()[0];
    let c = eagerness::exhaustive(cfg, &m, reg(), 1_000_000, BUDGET).expect("plan");
    assert_eq!(c.backend, BackendName::ShuttleDfs);
    assert!(c.exhaustive, "{}", c.search);
    let v = c.violation.expect("killed under the search");
    assert!(v.starts_with("flush_not_too_eager:"), "{v}");
    for cfg in exhaustive_configs() {
        for (_, name) in FORMS {
            let c =
                eagerness::exhaustive(&cfg, variant(name), reg(), 1_000_000, BUDGET).expect("plan");
            assert!(c.exhaustive, "{name} on {cfg}");
            assert_eq!(c.violation, None, "{name} on {cfg}");
        }
    }
    // A flush racing a charge: the second flush begins with 1 page pending
    // at T = 1 (the count holds a fold the first flush already read).
    for (_, name) in FORMS {
        let c = eagerness::exhaustive(&racy_config(), variant(name), reg(), 1_000_000, BUDGET)
            .expect("plan");
        assert!(c.exhaustive, "{name}");
        assert_eq!(
            (c.pending(), c.trigger),
            (Some(1), 1),
            "{name}: {:?}",
            c.violation
        );
    }
}

/// The reply's text: at most 80 columns, no line ending inside a
/// parenthesis, none of the model's vocabulary, every figure present.
#[test]
fn reply_text_is_mail_ready() {
    let scope = Scope {
        confirm: confirm_configs()[..2].to_vec(),
        eager_cfgs: exhaustive_configs()[..1].to_vec(),
        eager_cpus: vec![4, 64],
        charges: 1 << 17,
        derive: false,
        max_schedules: 1_000_000,
        budget: BUDGET,
    };
    let text = render(&gather(reg(), &scope).expect("gathered"));
    for (i, line) in text.lines().enumerate() {
        assert!(line.chars().count() <= 80, "line {}: {line}", i + 1);
        let open = line.matches('(').count() as i64 - line.matches(')').count() as i64;
        assert_eq!(
            open,
            0,
            "line {} breaks inside a parenthesis: {line}",
            i + 1
        );
    }
    let lower = text.to_lowercase();
    for word in [
        "c18",
        "c12",
        "holds",
        "twin",
        "scaled-2026",
        "mutant",
        "variant",
        "shuttle",
        "flush_not_too_eager",
        "v6.17",
        "finding",
    ] {
        assert!(!lower.contains(word), "internal word {word:?} in:\n{text}");
    }
    for figure in [
        "T + N * B",
        "131072",
        "73856",
        "v1 (ilog2)",
        "nr_cpus / (ln nr_cpus + 1)",
    ] {
        assert!(text.contains(figure), "{figure:?} missing:\n{text}");
    }
    assert!(!text.contains("NOT"), "a check failed:\n{text}");
}
