//! Prediction against observation, one row per scenario and boot.

use super::charge::Kernel;
use super::predict::{predict_with, uses_slab, Predicted, ReadAt, Setup};
pub use super::record::{Observation, Row, Verdict};
pub use super::replay::Judged;
use super::replay::{Lineage, Replay, Replayed};
use super::spec::{Done, ReadRecord, Scenario, Start};

/// Judge every scenario of one boot against the scenarios that ship
/// ([`super::spec::scenarios`]).
pub fn judge(obs: &Observation) -> Vec<Row> {
    judge_with(obs, &super::spec::scenarios())
}

/// Judge every scenario of one boot that `scenarios` defines.
pub fn judge_with(obs: &Observation, scenarios: &[Scenario]) -> Vec<Row> {
    let cpus = obs.hello.cpus;
    let kernel = Kernel::from_release(&obs.hello.release);
    let mut rows = Vec::new();
    for done in &obs.done {
        let mut row = Row {
            kernel: obs.hello.release.clone(),
            cpus,
            scenario: done.s.clone(),
            observable: String::new(),
            predicted: String::new(),
            observed: String::new(),
            verdict: Verdict::Failed,
            note: String::new(),
            judged: Judged::Fitted,
            discriminating: false,
        };
        let Some(s) = scenarios.iter().find(|s| s.name == done.s) else {
            row.note = format!("no scenario {:?} in the scenario file", done.s);
            rows.push(row);
            continue;
        };
        row.observable = observable(s).to_string();
        if !done.ok {
            row.note = format!("the probe: {}", done.error);
            rows.push(row);
            continue;
        }
        let kernel = match &kernel {
            Ok(k) => *k,
            Err(e) => {
                row.note = e.clone();
                rows.push(row);
                continue;
            }
        };
        let reads: Vec<&ReadRecord> = obs.reads.iter().filter(|r| r.s == s.name).collect();
        if obs.hello.trace == "none" {
            row.note = format!(
                "this kernel gives the probe no way to see a flush ({}): a row it cannot judge",
                obs.hello.trace_why
            );
            rows.push(row);
            continue;
        }
        if !obs.events.is_empty() {
            match exact(s, obs, &reads, done) {
                Ok(x) => {
                    row.predicted = x.predicted;
                    row.observed = x.observed;
                    row.verdict = x.verdict;
                    row.note = x.note;
                    row.judged = x.judged;
                    row.discriminating = x.discriminating;
                }
                Err(e) => row.note = e,
            }
            rows.push(row);
            continue;
        }
        let slots = obs
            .starts
            .iter()
            .find(|x| x.s == s.name)
            .map(|x| (x.filp as i64, x.dentry as i64))
            .unwrap_or((0, 0));
        match compare(s, kernel, cpus, &reads, slots) {
            Ok(c) => {
                row.predicted = c.predicted;
                row.observed = c.observed;
                row.verdict = c.verdict;
                row.note = c.note;
            }
            Err(e) => row.note = e,
        }
        rows.push(row);
    }
    rows
}

/// What a scenario's rows compare, one phrase.
pub fn observable(s: &Scenario) -> &'static str {
    match s.item.as_str() {
        "a" => "reads that flush, and what each shows",
        "b" => "the sibling's anon as the other memcg charges",
        "c" => "the parent's anon as its children charge",
        "d" => "a quiescent read after 65 pages",
        "e" => "when a read first shows the charges",
        "f" => "reads that flush as slab bytes accumulate",
        "g" => "the probe's own footprint: reads, moves, zero units",
        "h" => "reads as pages are charged and freed",
        _ => "what each read shows",
    }
}

/// The outcome of one comparison.
pub struct Comparison {
    /// The model's prediction, summarised.
    pub predicted: String,
    /// What the kernel showed, summarised the same way.
    pub observed: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, for anything but a plain agreement; the setups that agree
    /// otherwise.
    pub note: String,
}

/// Compare the probe's reads of scenario `s` with the model's prediction
/// for every [`Setup`] the kernel may have started it in.
pub fn compare(
    s: &Scenario,
    kernel: Kernel,
    cpus: usize,
    reads: &[&ReadRecord],
    slots: (i64, i64),
) -> Result<Comparison, String> {
    let mut at = Vec::new();
    let mut dwork_prev = 0;
    for r in reads {
        // Periodic runs counted before the read (`k`, sampled before it);
        // `dwork` is sampled after it and may count a run that began after
        // the read had its value.
        let d = r.k.get("dwork").copied().or(r.dwork).unwrap_or(0);
        at.push(ReadAt {
            op: r.op,
            n: r.n,
            periodic_before: d > dwork_prev,
        });
        dwork_prev = d;
    }
    let observed: Vec<(i64, Option<bool>)> = reads
        .iter()
        .map(|r| (r.anon as i64, r.flushed.map(|f| f > 0)))
        .collect();
    let mut agree = Vec::new();
    let mut best: Option<(usize, Setup, Vec<Predicted>)> = None;
    let setups = Setup::all(kernel, uses_slab(s), cpus);
    let variant = kernel.variant()?;
    for &setup in &setups {
        let p = predict_with(&variant, s, kernel, cpus, setup, &at, slots)?;
        let same = first_difference(&p, &observed);
        match same {
            None => agree.push((setup, p)),
            Some(i) => {
                if best.as_ref().map(|(j, _, _)| i > *j).unwrap_or(true) {
                    best = Some((i, setup, p));
                }
            }
        }
    }
    let obs_summary = summary(observed.iter().map(|(a, f)| (*a, f.unwrap_or(false))));
    // Of the start states that agree, the one whose derived calls are
    // nearest the kprobes' counts.
    agree.sort_by_key(|(_, p)| {
        p.iter()
            .zip(reads)
            .filter_map(|(x, r)| {
                observed_calls(r).map(|o| (o as i64 - x.calls as i64).unsigned_abs())
            })
            .sum::<u64>()
    });
    if let Some((setup, p)) = agree.first() {
        let setups = format!("{} of {} start states agree", agree.len(), setups.len());
        return Ok(Comparison {
            predicted: summary(p.iter().map(|x| (x.anon, x.flushed))),
            observed: obs_summary,
            verdict: Verdict::Agree,
            note: format!(
                "{} (nearest the kprobes: {}); {}",
                setups,
                describe_setup(kernel, *setup),
                calls_check(p, reads)
            ),
        });
    }
    let (i, setup, p) = best.expect("at least one setup");
    let r = reads.get(i);
    let note = format!(
        "first difference at read {} (op {}, unit {}): predicted anon {}{}, observed {}{} (closest setup: {})",
        i + 1,
        r.map(|r| r.op).unwrap_or(0),
        r.map(|r| r.n).unwrap_or(0),
        p.get(i).map(|x| x.anon).unwrap_or(-1),
        if p.get(i).map(|x| x.flushed).unwrap_or(false) { " (flushed)" } else { "" },
        observed.get(i).map(|x| x.0).unwrap_or(-1),
        if observed.get(i).and_then(|x| x.1).unwrap_or(false) { " (flushed)" } else { "" },
        describe_setup(kernel, setup)
    );
    // Without a trace the start state is unknown: no explanation is
    // offered for a difference (an earlier version's were fitted to the
    // row; the traces showed every one of them to be the probe's own
    // charges or state the trace now records).
    Ok(Comparison {
        predicted: summary(p.iter().map(|x| (x.anon, x.flushed))),
        observed: obs_summary,
        verdict: Verdict::Disagree,
        note,
    })
}

/// The update calls the probe's kprobes counted before a read (on every
/// CPU), if it could count all three functions.
fn observed_calls(r: &ReadRecord) -> Option<u64> {
    let k = |n: &str| r.k.get(n).copied();
    Some(k("mod_memcg_state")? + k("mod_memcg_lruvec_state")? + k("count_memcg_events")?)
}

/// How the derived calls compare with the kprobes' counts, read by read.
fn calls_check(p: &[Predicted], reads: &[&ReadRecord]) -> String {
    let pairs: Vec<(u64, u64)> = p
        .iter()
        .zip(reads)
        .filter_map(|(x, r)| observed_calls(r).map(|o| (x.calls, o)))
        .collect();
    if pairs.is_empty() {
        return "no kprobe counts".to_string();
    }
    let equal = pairs.iter().filter(|(a, b)| a == b).count();
    let extra = pairs
        .iter()
        .map(|(a, b)| *b as i64 - *a as i64)
        .max()
        .unwrap_or(0);
    format!(
        "update calls: the derivation equals the kprobes' count at {equal} of {} reads (most extra: {extra})",
        pairs.len()
    )
}

/// The index of the first read where a prediction and the observation
/// differ (the anon shown, and the flush where the probe could count it).
fn first_difference(p: &[Predicted], obs: &[(i64, Option<bool>)]) -> Option<usize> {
    if p.len() != obs.len() {
        return Some(p.len().min(obs.len()));
    }
    p.iter()
        .zip(obs)
        .position(|(x, (anon, fl))| x.anon != *anon || fl.map(|f| f != x.flushed).unwrap_or(false))
}

/// Reads summarised: how many, which flushed (by read number), and the
/// last value shown.
fn summary(reads: impl Iterator<Item = (i64, bool)>) -> String {
    let v: Vec<(i64, bool)> = reads.collect();
    let flushes: Vec<String> = v
        .iter()
        .enumerate()
        .filter(|(_, (_, f))| *f)
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    let last = v.last().map(|x| x.0).unwrap_or(0);
    let shown = if flushes.len() > 12 {
        format!("{} of {} reads flush", flushes.len(), v.len())
    } else if flushes.is_empty() {
        format!("no read of {} flushes", v.len())
    } else {
        format!("reads {} of {} flush", flushes.join(","), v.len())
    };
    format!("{shown}; last shows {last}")
}

fn describe_setup(kernel: Kernel, s: Setup) -> String {
    let tables = if s.own_tables > 0 {
        format!(", {} pairs of the probe's own updates", s.own_tables)
    } else {
        String::new()
    };
    if kernel.global() {
        format!(
            "LRU batch held {} other folios, stats_updates {}, old slab bytes {}{tables}",
            s.lru_fill, s.residual, s.old_slab
        )
    } else {
        format!("LRU batch held {} other folios{tables}", s.lru_fill)
    }
}

/// The outcome of an exact (traced) comparison.
pub struct Exact {
    /// The model's reads, summarised.
    pub predicted: String,
    /// The kernel's reads, summarised the same way.
    pub observed: String,
    /// Agree, or disagree at the first difference.
    pub verdict: Verdict,
    /// What was compared; the first difference.
    pub note: String,
    /// Exact or calibrated.
    pub judged: Judged,
    /// Whether another lineage's protocol disagrees with the same trace.
    pub discriminating: bool,
}

/// The release (major, minor) of a `uname -r` string.
pub fn release_of(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// The lineage of a release.
pub fn lineage_of(release: (u32, u32)) -> Lineage {
    if release < (6, 8) {
        Lineage::Global
    } else {
        Lineage::PerMemcg
    }
}

/// The releases whose protocols (the catalogue's, by release) a trace is
/// replayed with to see whether a row discriminates: one release of each
/// protocol the model has for real kernels (v6.0, v6.8, v6.17).
pub const LINEAGES: [(u32, u32); 3] = [(6, 1), (6, 12), (6, 16)];

/// Judge scenario `s` of one boot from the kernel's trace.
pub fn exact(
    s: &Scenario,
    obs: &Observation,
    reads: &[&ReadRecord],
    done: &Done,
) -> Result<Exact, String> {
    let release = release_of(&obs.hello.release)
        .ok_or_else(|| format!("kernel release {:?}: no major.minor", obs.hello.release))?;
    let variant = crate::protocol::catalogue::for_release(release.0, release.1)?;
    let start = obs
        .starts
        .iter()
        .find(|x| x.s == s.name)
        .ok_or_else(|| format!("no start record for {}", s.name))?;
    let replay = |variant: &crate::protocol::Variant, lineage: Lineage| -> Replayed {
        Replay {
            hello: &obs.hello,
            release,
            variant,
            lineage,
            start,
            reads,
            reader_pid: Some(1),
            name: &s.name,
        }
        .run(&obs.events)
    };
    let own = replay(&variant, lineage_of(release));
    let discriminating = LINEAGES.iter().any(|&(major, minor)| {
        crate::protocol::catalogue::for_release(major, minor).is_ok_and(|v| {
            v.name != variant.name && !replay(&v, lineage_of((major, minor))).agrees()
        })
    });
    let judged = if lineage_of(release) == Lineage::Global && !own.uncalibrated.is_empty() {
        Judged::Calibrated
    } else {
        Judged::Exact
    };
    let mut note = format!(
        "{}: {} updates, {} gates ({} flushed), {} reads compared with {}",
        judged.name(),
        own.updates,
        own.gates,
        own.flushes,
        own.reads,
        variant.name
    );
    if own.foreign > 0 {
        note.push_str(&format!(
            "; {} flushes of the scenario's memcgs that no gate decided",
            own.foreign
        ));
    }
    if judged == Judged::Calibrated {
        note.push_str(&format!(
            "; 6.1's stats_updates of CPU {:?} not calibrated, taken as 0",
            own.uncalibrated
        ));
    }
    if done.overrun > 0 {
        note.push_str(&format!(
            "; {} trace events lost to a full ring buffer",
            done.overrun
        ));
    }
    if !discriminating {
        note.push_str("; every lineage's protocol agrees (not discriminating)");
    }
    let verdict = match &own.difference {
        None if done.overrun == 0 => Verdict::Agree,
        None => Verdict::Disagree,
        Some(d) => {
            note = format!("{note}; first difference: {d}");
            Verdict::Disagree
        }
    };
    Ok(Exact {
        predicted: summary(own.predicted.iter().copied()),
        observed: summary(own.observed.iter().copied()),
        verdict,
        note,
        judged,
        discriminating,
    })
}

/// A row that could not be judged, with why.
pub fn failed_row(kernel: &str, cpus: usize, scenario: &str, why: &str) -> Row {
    Row {
        kernel: kernel.to_string(),
        cpus,
        scenario: scenario.to_string(),
        observable: "-".into(),
        predicted: "-".into(),
        observed: "-".into(),
        verdict: Verdict::Failed,
        note: why.to_string(),
        judged: Judged::Fitted,
        discriminating: false,
    }
}

/// The C reproducer's row of one boot: the model's forecast (made before
/// the boot, from the release's derived updates) beside what the program
/// printed, and the exact replay of its trace, whose last gates of `p` and
/// `p/a` must show what it printed.
pub fn judge_reproducer(obs: &Observation, forecast: super::plan::Forecast) -> Row {
    let r = &obs.repro;
    let mut row = failed_row(&obs.hello.release, obs.hello.cpus, "reproducer", "");
    row.observable = "what docs/reproducers/test_c12_skew.c prints".into();
    row.predicted = format!(
        "{} (p {} / p/a {}, -k {} -m {})",
        forecast.verdict(),
        forecast.p,
        forecast.a,
        forecast.k1,
        forecast.m
    );
    if !r.ran {
        row.note = if r.error.is_empty() {
            "the reproducer did not run (no FCR start record)".into()
        } else {
            r.error.clone()
        };
        return row;
    }
    let (Some(verdict), Some((p, a))) = (r.verdict(), r.anon()) else {
        row.note = format!(
            "the reproducer printed no verdict or values (exit {:?}): {}",
            r.exit,
            r.lines.last().cloned().unwrap_or_default()
        );
        return row;
    };
    row.observed = format!("{verdict} (p {p} / p/a {a})");
    let Some(release) = release_of(&obs.hello.release) else {
        row.note = "no release".into();
        return row;
    };
    let start = Start {
        s: "repro".into(),
        ids: r.ids.clone(),
        ..Start::default()
    };
    let replayed = crate::protocol::catalogue::for_release(release.0, release.1).map(|v| {
        Replay {
            hello: &obs.hello,
            release,
            variant: &v,
            lineage: lineage_of(release),
            start: &start,
            reads: &[],
            reader_pid: None,
            name: "repro",
        }
        .run(&obs.events)
    });
    let replayed = match replayed {
        Ok(x) => x,
        Err(e) => {
            row.note = e;
            return row;
        }
    };
    // Its reads after the child's further pages: the last read of p/a, and
    // the read of p just before it (the parent's reads after that are its
    // wait for the periodic flush).
    let log = &replayed.gate_log;
    let child = log.iter().rposition(|(_, path, _, _)| path == "p/a");
    let parent = child.and_then(|j| log[..j].iter().rposition(|(_, path, _, _)| path == "p"));
    let replay_note = match (&replayed.difference, parent, child) {
        (Some(d), _, _) => Err(format!("the replay of its trace: {d}")),
        (None, Some(i), Some(j)) if (log[i].3, log[j].3) == (p, a) => Ok(format!(
            "exact: its trace replayed ({} updates, {} gates) shows p {} / p/a {} as it printed",
            replayed.updates, replayed.gates, log[i].3, log[j].3
        )),
        (None, Some(i), Some(j)) => Err(format!(
            "the replay of its trace shows p {} / p/a {}, it printed p {p} / p/a {a}",
            log[i].3, log[j].3
        )),
        _ => Err("its trace has no read of p before its last read of p/a".to_string()),
    };
    row.judged = Judged::Exact;
    row.discriminating = true;
    let forecast_ok = forecast.verdict() == verdict && (forecast.p, forecast.a) == (p, a);
    match replay_note {
        Ok(n) if forecast_ok => {
            row.verdict = Verdict::Agree;
            row.note = format!("the forecast holds; {n}");
        }
        Ok(n) => {
            row.verdict = Verdict::Disagree;
            row.note = format!(
                "the forecast from the derived updates differs (the derivation misses what this \
                 kernel does); {n}"
            );
        }
        Err(n) => {
            row.verdict = Verdict::Disagree;
            row.note = n;
        }
    }
    row
}
