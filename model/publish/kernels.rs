//! `flushcheck kernels`'s outcomes, table and summary line.

use std::time::Duration;

use serde::Serialize;

use crate::oracle::{Judged, Row, Verdict};

/// One boot (or saved console): what ran, how long, how it ended, and its
/// rows.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The kernel's short name (`6.12`), or `host`.
    pub kernel: String,
    /// vCPUs asked for (the guest's own count for `--from` and `--host`).
    pub cpus: usize,
    /// The accelerator, if it booted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accel: Option<&'static str>,
    /// Wall time of the boot, in seconds (0 for `--from`).
    pub seconds: f64,
    /// Why the boot failed, if it did (first line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Probe lines of the console that did not read.
    pub garbled: usize,
    /// Its rows, one per scenario.
    pub rows: Vec<Row>,
    /// Earlier boots of the same kernel and vCPUs that went wrong
    /// (`--retries`): their summaries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<String>,
    /// The early break's loss on this boot (`c12-decisive`), if the parent
    /// fell short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<crate::oracle::loss::Loss>,
}

/// `n` and `what`, plural past one.
pub fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn verdict_name(v: &Verdict) -> &'static str {
    match v {
        Verdict::Agree => "agree",
        Verdict::Disagree => "DISAGREE",
        Verdict::Failed => "FAILED",
    }
}

/// The rows as a table (kernel, vCPUs, scenario, observable, predicted,
/// observed, verdict), the notes numbered below it.
pub fn table(rows: &[&Row]) -> String {
    let mut notes = Vec::new();
    let mut cells: Vec<[String; 7]> = vec![[
        "kernel",
        "vCPUs",
        "scenario",
        "observable",
        "predicted",
        "observed",
        "verdict",
    ]
    .map(String::from)];
    for r in rows {
        let mut verdict = verdict_name(&r.verdict).to_string();
        if r.verdict != Verdict::Failed {
            verdict.push(' ');
            verdict.push_str(r.judged.name());
            if r.verdict == Verdict::Agree && !r.discriminating && r.judged != Judged::Fitted {
                verdict.push_str(", not discriminating");
            }
        }
        if !r.note.is_empty() {
            // A note several rows share (a failed boot's) is listed once.
            let i = match notes.iter().position(|n| n == &r.note) {
                Some(i) => i,
                None => {
                    notes.push(r.note.clone());
                    notes.len() - 1
                }
            };
            verdict.push_str(&format!(" [{}]", i + 1));
        }
        cells.push([
            r.kernel.clone(),
            r.cpus.to_string(),
            r.scenario.clone(),
            r.observable.clone(),
            r.predicted.clone(),
            r.observed.clone(),
            verdict,
        ]);
    }
    let mut width = [0usize; 7];
    for c in &cells {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let mut out = String::new();
    for c in &cells {
        let line: Vec<String> = c
            .iter()
            .zip(width)
            .map(|(s, w)| format!("{s:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    if !notes.is_empty() {
        out.push_str("\nnotes:\n");
        for (i, n) in notes.iter().enumerate() {
            out.push_str(&format!("  [{}] {n}\n", i + 1));
        }
    }
    out
}

/// The summary line: rows per verdict, boots (or saved consoles), time.
pub fn summary(outcomes: &[Outcome], booted: bool, elapsed: Duration) -> String {
    let rows: Vec<&Row> = outcomes.iter().flat_map(|o| &o.rows).collect();
    let c = Counts::of(&rows);
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    let in_boots: f64 = outcomes.iter().map(|o| o.seconds).sum();
    format!(
        "{}: {} agree exactly ({} of them not discriminating), {} agree calibrated, {} disagree, {} failed{}; {}{}; {:.1} s{}",
        count(rows.len(), "row"),
        c.exact,
        c.not_discriminating,
        c.calibrated,
        c.disagree,
        c.failed,
        if c.fitted > 0 {
            format!(", {} fitted (no trace: a diagnosis, not an agreement)", c.fitted)
        } else {
            String::new()
        },
        count(
            outcomes.len(),
            if booted { "boot" } else { "saved console" }
        ),
        if failed > 0 {
            format!(" ({failed} FAILED)")
        } else {
            String::new()
        },
        elapsed.as_secs_f64(),
        if booted {
            format!(" ({in_boots:.1} s in boots)")
        } else {
            String::new()
        }
    )
}

/// Rows counted by how they were judged and what they found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Exact (traced) agreements.
    pub exact: usize,
    /// Of those (and the calibrated ones), agreements every lineage's
    /// protocol shares.
    pub not_discriminating: usize,
    /// Calibrated agreements.
    pub calibrated: usize,
    /// Disagreements.
    pub disagree: usize,
    /// Rows that could not be judged.
    pub failed: usize,
    /// Rows without a trace, judged the old way (never counted above).
    pub fitted: usize,
}

impl Counts {
    /// Count `rows`.
    pub fn of(rows: &[&Row]) -> Counts {
        let mut c = Counts::default();
        for r in rows {
            match (r.judged, &r.verdict) {
                (_, Verdict::Failed) => c.failed += 1,
                (Judged::Fitted, _) => c.fitted += 1,
                (_, Verdict::Disagree) => c.disagree += 1,
                (Judged::Exact, Verdict::Agree) => c.exact += 1,
                (Judged::Calibrated, Verdict::Agree) => c.calibrated += 1,
            }
            if r.verdict == Verdict::Agree && r.judged != Judged::Fitted && !r.discriminating {
                c.not_discriminating += 1;
            }
        }
        c
    }
}

/// The rows as Markdown, for docs/real-kernels.md: one table per kernel
/// (a row per scenario, a column per vCPU count: the verdict, how it was
/// judged, and which reads flushed), then the early break's loss per boot.
pub fn markdown(outcomes: &[Outcome]) -> String {
    let mut kernels: Vec<&str> = Vec::new();
    for o in outcomes {
        let k = o
            .rows
            .first()
            .map_or(o.kernel.as_str(), |r| r.kernel.as_str());
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    let mut out = String::new();
    for k in &kernels {
        let boots: Vec<&Outcome> = outcomes
            .iter()
            .filter(|o| o.rows.first().is_some_and(|r| r.kernel == *k))
            .collect();
        let mut cpus: Vec<usize> = boots.iter().map(|o| o.cpus).collect();
        cpus.sort_unstable();
        cpus.dedup();
        out.push_str(&format!("### {k}\n\n| scenario |"));
        for c in &cpus {
            out.push_str(&format!(" {} |", count(*c, "vCPU")));
        }
        out.push_str("\n|---|");
        for _ in &cpus {
            out.push_str("---|");
        }
        out.push('\n');
        let mut scenarios: Vec<&str> = Vec::new();
        for o in &boots {
            for r in &o.rows {
                if !scenarios.contains(&r.scenario.as_str()) {
                    scenarios.push(&r.scenario);
                }
            }
        }
        for s in scenarios {
            out.push_str(&format!("| {s} |"));
            for c in &cpus {
                let cell = boots
                    .iter()
                    .filter(|o| o.cpus == *c)
                    .flat_map(|o| &o.rows)
                    .find(|r| r.scenario == s)
                    .map_or("-".to_string(), |r| {
                        let mut v = format!("{} {}", verdict_name(&r.verdict), r.judged.name());
                        if r.verdict == Verdict::Agree && !r.discriminating {
                            v.push_str(" (nd)");
                        }
                        format!("{v}: {}", r.observed.replace('|', "/"))
                    });
                out.push_str(&format!(" {cell} |"));
            }
            out.push('\n');
        }
        out.push('\n');
    }
    let losses: Vec<&crate::oracle::loss::Loss> =
        outcomes.iter().filter_map(|o| o.loss.as_ref()).collect();
    if !losses.is_empty() {
        out.push_str(
            "### The early break's loss (`c12-decisive`)\n\n\
             | kernel | vCPUs | child shows | parent shows | pages missed | parent reads short | until the periodic flush |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for l in losses {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                l.release,
                l.cpus,
                l.child,
                l.parent,
                l.missed(),
                l.short_reads,
                l.lasted_ms.map_or(
                    format!(
                        "more than {} ms (still short at the last read)",
                        l.watched_ms
                    ),
                    |ms| format!("{ms} ms")
                )
            ));
        }
    }
    out
}
