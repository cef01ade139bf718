//! The reply to the 2026 thread "memcg: Scale up vmstats flush threshold"
//! (v1 with `ilog2`, v2 with `int_sqrt(nr_cpus + 2)`): the worst-case
//! staleness of each trigger as a formula, confirmed by exhaustive search,
//! the table at 2 to 1024 CPUs, and how often a reader flushes. Printed
//! within `flushcheck report --finding c18-bound` ([`super`]).
//!
//! [`gather`] (in [`crate::measure::scaled`]) runs every search and
//! measurement; [`render`] writes the text
//! in the thread's own terms: at most 80 columns, no line broken inside a
//! parenthesis, none of the model's names.

use std::fmt::Write as _;

use crate::config::Config;
use crate::measure::eagerness::{self, Eagerness};
use crate::measure::scaled::{self, Row};
use crate::protocol::per_memcg::proposal_2026::FORMS;
use crate::protocol::Variant;

pub use crate::measure::scaled::{gather, ReplyData, Scope, BATCH};

/// The finding whose report carries the reply.
pub const FINDING: &str = "c18-bound";

/// The reply, gathered with `scope` ([`Scope::full`] for the report).
pub fn reply(registry: &[Variant], scope: &Scope) -> Result<String, String> {
    Ok(render(&gather(registry, scope)?))
}

/// The thread the reply answers: v2's patch 1/7, as its subject reads.
pub const THREAD_SUBJECT: &str =
    "Re: [PATCH v2 1/7] memcg: Scale up vmstats flush threshold with int_sqrt(nr_cpus+2)";

/// v2's patch 1/7, the message replied to (lore).
pub const IN_REPLY_TO: &str = "<20260320204241.1613861-2-longman@redhat.com>";

/// The series' cover letter and the patch, for `References:`.
pub const REFERENCES: &[&str] = &[
    "<20260320204241.1613861-1-longman@redhat.com>",
    "<20260320204241.1613861-2-longman@redhat.com>",
];

/// The author, and those in the thread who asked what the reply answers:
/// the ln scaling (Michal Koutný) and a test against flushing too eagerly
/// (Yosry Ahmed).
pub const THREAD_PEOPLE: &[&str] = &[
    "Waiman Long <longman@redhat.com>",
    "Michal Koutný <mkoutny@suse.com>",
    "Yosry Ahmed <yosry@kernel.org>",
];

/// Words of `text` wrapped to `width` columns, each line after `indent`;
/// a parenthesised group is never split.
fn para(out: &mut String, indent: &str, text: &str) {
    let width = 80 - indent.len();
    let mut depth = 0i32;
    let mut words: Vec<String> = Vec::new();
    for w in text.split_whitespace() {
        if depth > 0 {
            let last = words.last_mut().expect("a group has an opening word");
            last.push(' ');
            last.push_str(w);
        } else {
            words.push(w.to_string());
        }
        depth += w.matches('(').count() as i32 - w.matches(')').count() as i32;
    }
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.len() + 1 + w.len() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&w);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
}

/// `text` as a list item: "  - ", its other lines indented to match.
fn item(out: &mut String, text: &str) {
    let mut body = String::new();
    para(&mut body, "    ", text);
    out.push_str("  - ");
    out.push_str(body.trim_start());
}

/// `text` as quoted lines of the thread.
fn quote(out: &mut String, text: &str) {
    for l in text.lines() {
        let _ = writeln!(out, "> {l}");
    }
}

/// Pages at 4 KiB in MiB.
fn mib(pages: i64) -> String {
    format!("{:.2}", pages as f64 * 4.0 / 1024.0)
}

/// How a configuration reads in the reply.
fn cfg_words(c: &Config) -> String {
    format!(
        "{} CPU{}, MEMCG_CHARGE_BATCH {}, {} one-page charges per CPU",
        c.cpus,
        if c.cpus == 1 { "" } else { "s" },
        c.batch,
        c.updates
    )
}

/// The text of the reply.
pub fn render(d: &ReplyData) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nReply to the thread \"memcg: Scale up vmstats flush threshold\""
    );
    let _ = writeln!(
        out,
        "(v1 with ilog2, v2 with int_sqrt(nr_cpus+2), March 2026)\n"
    );
    worst_case(&mut out, d);
    table(&mut out, d);
    eager(&mut out, d);
    out
}

fn worst_case(out: &mut String, d: &ReplyData) {
    quote(
        out,
        "If so, wouldn't the actual worst-case out-of-sync error be\n\
         N * (MEMCG_CHARGE_BATCH - 1) + vmstats_flush_threshold, which remains\n\
         linear with the number of CPUs rather than scaling logarithmically?",
    );
    out.push('\n');
    para(
        out,
        "",
        "Yes, it stays linear in nr_cpus, and it is nr_cpus pages more than \
         that. With T = vmstats_flush_threshold, N = nr_cpus and B = \
         MEMCG_CHARGE_BATCH, a reader that does not flush can miss at most",
    );
    let _ = writeln!(out, "\n    T + N * B pages (1-page updates)\n");
    para(
        out,
        "",
        "when no flush races the read. The gate lets stats_updates reach T. \
         Every fold of 1-page updates adds exactly B, and T is a multiple of \
         B in all four forms, so T pages are counted. Each CPU can hold B - 1 \
         pages in its per-cpu stats_updates plus one more: the page whose \
         __this_cpu_add() has happened while its fold's atomic_add() has not \
         (memcg_rstat_updated() reaches B, then adds). So the N * B term is \
         there whatever T is, and the review's figure is N pages short. With \
         updates of up to V pages (THP, large folios) each CPU keeps up to B - \
         1 + V: at most T + N * (B - 1 + V). A flush that races the charges \
         can reset counts of pages it did not fold: the flush callback's \
         remote WRITE_ONCE() of stats_updates and its atomic reset. Those \
         pages are behind no count, so only the periodic flush bounds them, \
         in time, not in pages.",
    );
    out.push('\n');
    para(
        out,
        "",
        "The model of the v7.1 code with each trigger was searched \
         exhaustively, every sequentially consistent interleaving, \
         with one reader reading once and no periodic flush. The largest \
         number of pages missing at a decision not to flush, counted or in \
         per-cpu counters, equals T + N * B in every case. nr_cpus is the \
         model's CPU count: it has no hotplug, so num_possible_cpus() and \
         num_online_cpus() agree.",
    );
    out.push('\n');
    for c in &d.confirmed {
        let verdict = if c.exhaustive {
            "exhaustive"
        } else {
            "NOT finished"
        };
        item(
            out,
            &format!(
                "{}: {} (T = {}): {} pages, formula {} ({} executions, {verdict}, {:.1} s)",
                c.form,
                cfg_words(&c.cfg),
                c.trigger,
                c.measured,
                c.formula,
                c.executions,
                c.seconds
            ),
        );
    }
    out.push('\n');
    para(
        out,
        "",
        "Beyond what the search affords, the per-state derivation gives T + \
         N * B at every entry of the table below. That derivation enumerates every state each CPU can be in \
         at the reader's decision and maximises over them with stats_updates \
         at most T.",
    );
}

fn table(out: &mut String, d: &ReplyData) {
    out.push('\n');
    quote(out, "nr_cpus / (log(nr_cpus) + 1)");
    out.push('\n');
    para(
        out,
        "",
        "Taking that as DIV_ROUND_UP(65536 * nr_cpus, 45426 * ilog2(nr_cpus) \
         + 65536) (var2 of your table) times MEMCG_CHARGE_BATCH, the four triggers and \
         their worst cases, B = 64, in pages:",
    );
    out.push('\n');
    let labels = ["linear", "v1 ilog2", "v2 int_sqrt", "n/(ln n + 1)"];
    let mut head = format!("{:>7}", "nr_cpus");
    for l in labels {
        let _ = write!(head, "  {l:>15}");
    }
    let _ = writeln!(out, "{head}");
    let mut sub = format!("{:>7}", "");
    for _ in labels {
        let _ = write!(sub, "  {:>6} {:>8}", "T", "T + N*B");
    }
    let _ = writeln!(out, "{sub}");
    for r in &d.table {
        let mut line = format!("{:>7}", r.cpus);
        for c in &r.cells {
            let _ = write!(line, "  {:>6} {:>8}", c.trigger, c.worst);
        }
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    para(
        out,
        "",
        "The same worst cases in MiB at 4 KiB pages, with the review's N * (B \
         - 1) + T in parentheses:",
    );
    out.push('\n');
    let mut head = format!("{:>7}", "nr_cpus");
    for l in labels {
        let _ = write!(head, "  {l:>15}");
    }
    let _ = writeln!(out, "{head}");
    for r in &d.table {
        let mut line = format!("{:>7}", r.cpus);
        for c in &r.cells {
            let cell = format!("{} ({})", mib(c.worst), mib(c.claimed));
            let _ = write!(line, "  {cell:>15}");
        }
        let _ = writeln!(out, "{line}");
    }
    let (Some(first), Some(last)) = (d.table.first(), d.table.last()) else {
        return;
    };
    out.push('\n');
    // The scaled forms' smallest and largest value of `of`, in MiB.
    let span = |of: fn(&scaled::Cell) -> i64| {
        let v = || last.cells.iter().skip(1).map(of);
        (mib(v().min().unwrap_or(0)), mib(v().max().unwrap_or(0)))
    };
    let (t_min, t_max) = span(|c| c.trigger);
    let (w_min, w_max) = span(|c| c.worst);
    para(
        out,
        "",
        &format!(
            "At {} CPUs the N * B term alone is {} MiB; the scaled forms \
             take T down from {} MiB to {t_min} to {t_max} MiB, but the worst case only \
             from {} MiB to {w_min} to {w_max} MiB. {}",
            last.cpus,
            mib(last.cpus as i64 * BATCH),
            mib(last.cells[0].trigger),
            mib(last.cells[0].worst),
            agree_at(first),
        ),
    );
    let huge = |c: &scaled::Cell| scaled::worst_huge(c.trigger, last.cpus, BATCH, THP);
    let scaled_huge: Vec<i64> = last.cells.iter().skip(1).map(huge).collect();
    para(
        out,
        "",
        &format!(
            "With 2 MiB THP charges, V = {THP}, the bound at {} CPUs grows to \
             {} MiB linear and {} to {} MiB for the scaled forms.",
            last.cpus,
            mib(huge(&last.cells[0])),
            mib(scaled_huge.iter().copied().min().unwrap_or(0)),
            mib(scaled_huge.iter().copied().max().unwrap_or(0)),
        ),
    );
}

/// Pages in a 2 MiB THP at 4 KiB.
const THP: i64 = 512;

/// Whether the forms agree at the table's first CPU count.
fn agree_at(r: &Row) -> String {
    let t: Vec<i64> = r.cells.iter().map(|c| c.trigger).collect();
    if t.windows(2).all(|w| w[0] == w[1]) {
        format!("At {} CPUs all four forms give the same T.", r.cpus)
    } else {
        format!(
            "At {} CPUs the forms differ by at most {} pages.",
            r.cpus,
            t.iter().max().unwrap_or(&0) - t.iter().min().unwrap_or(&0)
        )
    }
}

fn eager(out: &mut String, d: &ReplyData) {
    out.push('\n');
    quote(
        out,
        "We need some performance tests to make sure we're not flushing too\n\
         eagerly with the sqrt scale imo.",
    );
    out.push('\n');
    para(
        out,
        "",
        "Not a performance test, but the flush rate the model gives. The \
         model ran the code with 1-page charges to one memcg, round-robin \
         over all CPUs or on one CPU only, and a reader calling \
         mem_cgroup_flush_stats() after every charge (the most eager reader \
         there is; no periodic flush). Flushes per 1000 charges, measured, \
         with the mean charges between two flushes:",
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "{:<28} {:>7}  {:>19}  {:>19}",
        "trigger", "nr_cpus", "all CPUs charging", "one CPU charging"
    );
    for (label, _) in FORMS {
        for pair in d
            .eager
            .chunks(2)
            .filter(|p| p[0].variant == variant_of(label))
        {
            let cell = |e: &Eagerness| {
                let per = e.last_flush_at.checked_div(e.flushes).unwrap_or(0);
                format!("{:.3} ({per})", e.per_1000)
            };
            let _ = writeln!(
                out,
                "{:<28} {:>7}  {:>19}  {:>19}",
                label,
                pair[0].cpus,
                cell(&pair[0]),
                pair.get(1).map_or(String::new(), cell)
            );
        }
    }
    out.push('\n');
    let agree = d.eager.iter().all(Eagerness::exact);
    let margin = d.eager.iter().all(|e| {
        e.min_pending_at_flush
            .is_some_and(|p| p >= e.trigger + e.batch)
    });
    para(
        out,
        "",
        &format!(
            "Every figure {} predicted by the arithmetic. A flush zeroes \
             every counter, so with one CPU charging a reader flushes every T \
             + B charges, and with N CPUs charging in turn the atomic first \
             exceeds T on charge (q + 1) * B * N - N + 1 + r, where T / B = q \
             * N + r. {} {}",
            if agree {
                "is exact: every flush came the number of charges"
            } else {
                "does NOT match the number of charges"
            },
            ratios(d),
            if margin {
                "In no run did a reader flush with fewer than T + B pages pending."
            } else {
                "Some reader flushed with fewer than T + B pages pending."
            }
        ),
    );
    out.push('\n');
    let clean = d.eager_checks.iter().all(|c| c.violation.is_none());
    let all_exhaustive = d.eager_checks.iter().all(|c| c.exhaustive);
    let execs: u64 = d.eager_checks.iter().map(|c| c.executions).sum();
    let cfgs: Vec<String> = {
        let mut v: Vec<String> = d.eager_checks.iter().map(|c| cfg_words(&c.cfg)).collect();
        v.dedup();
        v
    };
    para(
        out,
        "",
        &format!(
            "As a test that a change does not flush too eagerly: no reader may \
             decide to flush with T or fewer pages pending. The exhaustive \
             search checked it for all four triggers on {} ({} executions in \
             all, {}): {}. A reader that drops MEMCG_CHARGE_BATCH from its \
             gate fails it at once: {} on the one-CPU schedule above, and {} under \
             the search.",
            cfgs.join("; "),
            execs,
            if all_exhaustive {
                "every search finished"
            } else {
                "NOT every search finished"
            },
            if clean { "no violation" } else { "VIOLATED" },
            caught(d.mutant.violation.as_deref(), d.mutant.trigger),
            caught(d.mutant_check.violation.as_deref(), d.mutant_check.trigger),
        ),
    );
    out.push('\n');
    let Some(r) = d.racy_checks.first() else {
        return;
    };
    let same = d
        .racy_checks
        .iter()
        .all(|c| c.pending() == r.pending() && c.trigger == r.trigger);
    let racy = match r.pending() {
        Some(p) => format!(
            "a reader decided on its second flush with {p} page{} pending at T = {}{}: \
             the count included a fold whose page the racing flush had already \
             read",
            if p == 1 { "" } else { "s" },
            r.trigger,
            if same { ", for every form" } else { "" },
        ),
        None => "no reader flushed with T or fewer pages pending".to_string(),
    };
    para(
        out,
        "",
        &format!(
            "This is so only when no flush races the charges. With two reads \
             on {}, so that the first flush can race a charge, {racy}. By the \
             argument for the residue, a racing flush can leave the count up \
             to one fold per CPU ahead of what is pending, N * B pages for \
             1-page updates, so the next flush can come that much early; it \
             is the same race that leaves other pages behind no count.",
            cfg_words(&r.cfg)
        ),
    );
}

/// How a violation of the eagerness check reads in the reply.
fn caught(v: Option<&str>, trigger: i64) -> String {
    match v.and_then(eagerness::pending_in) {
        Some(p) => format!("a reader flushed with {p} pages pending at T = {trigger}"),
        None => "it did not fail".to_string(),
    }
}

/// The variant running the form called `label`.
fn variant_of(label: &str) -> &'static str {
    FORMS
        .iter()
        .find(|(l, _)| *l == label)
        .map_or("", |(_, v)| v)
}

/// How much more often the scaled forms flush than the linear one at the
/// largest CPU count up to 64, beside how much smaller their T is.
fn ratios(d: &ReplyData) -> String {
    let Some(n) = d.eager.iter().map(|e| e.cpus).filter(|&n| n <= 64).max() else {
        return String::new();
    };
    let at = |variant: &str, all: bool| {
        d.eager
            .iter()
            .find(|e| e.variant == variant && e.cpus == n && (e.active == n) == all)
    };
    let span = |all: bool| {
        let lin = at(FORMS[0].1, all)?;
        let r: Vec<(f64, f64)> = FORMS[1..]
            .iter()
            .filter_map(|(_, v)| at(v, all))
            .map(|e| {
                (
                    e.per_1000 / lin.per_1000,
                    lin.trigger as f64 / e.trigger as f64,
                )
            })
            .collect();
        let lo = |f: fn(&(f64, f64)) -> f64| r.iter().map(f).fold(f64::MAX, f64::min);
        let hi = |f: fn(&(f64, f64)) -> f64| r.iter().map(f).fold(0.0, f64::max);
        Some((lo(|x| x.0), hi(|x| x.0), lo(|x| x.1), hi(|x| x.1)))
    };
    let (Some(all), Some(one)) = (span(true), span(false)) else {
        return String::new();
    };
    format!(
        "At {n} CPUs, with T {} times smaller, the scaled forms flush {} \
         times as often as the linear one when all CPUs charge, because the \
         N * (B - 1) pages the per-cpu counters take first dominate, and {} \
         times as often when one CPU charges.",
        range(all.2, all.3),
        range(all.0, all.1),
        range(one.0, one.1)
    )
}

/// `lo to hi`, or one figure when they agree to a decimal.
fn range(lo: f64, hi: f64) -> String {
    if format!("{lo:.1}") == format!("{hi:.1}") {
        format!("{lo:.1}")
    } else {
        format!("{lo:.1} to {hi:.1}")
    }
}
