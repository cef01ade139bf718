//! Saved and fresh consoles judged: one row per chosen scenario and the
//! reproducer's row, per boot (`flushcheck kernels`, docs/real-kernels.md).

use std::path::{Path, PathBuf};

use crate::guest::{cache, console};
use crate::oracle::{judge, Observation, Row, Verdict};

use crate::publish::kernels::{count, Outcome};

/// What `--kernel`, `--cpus` and `--scenario` picked.
pub struct Picked<'a> {
    /// `--kernel` (empty: every kernel).
    pub kernel: &'a [String],
    /// `--cpus` (empty: every count).
    pub cpus: &'a [usize],
    /// Whether `--scenario` was given.
    pub scenario_given: bool,
}

/// Judge one console: the rows of every chosen scenario, a `Failed` row
/// for each the console has no record of (with the boot's error, if it
/// failed).
pub fn outcome(kernel: &str, cpus: usize, text: &str, names: &[String]) -> Outcome {
    let (c, error) = match console::parse(text) {
        Ok(c) => (c, None),
        Err(e) => (
            console::read(text),
            Some(e.lines().next().unwrap_or("").to_string()),
        ),
    };
    let mut rows = rows_of(kernel, cpus, &c.obs, names, error.as_deref());
    rows.extend(repro_row(&c.obs));
    Outcome {
        kernel: kernel.to_string(),
        cpus,
        accel: None,
        seconds: 0.0,
        error,
        garbled: c.garbled.len(),
        rows,
        retried: Vec::new(),
        loss: crate::oracle::loss::loss(&c.obs),
    }
}

fn rows_of(
    kernel: &str,
    cpus: usize,
    obs: &Observation,
    names: &[String],
    error: Option<&str>,
) -> Vec<Row> {
    let done = |n: &str| obs.done.iter().any(|d| d.s == n);
    let judged = if obs.hello.release.is_empty() {
        Vec::new()
    } else {
        judge(obs)
    };
    let mut rows = Vec::new();
    for n in names {
        let mine: Vec<&Row> = judged.iter().filter(|r| &r.scenario == n).collect();
        if !mine.is_empty() && (error.is_none() || done(n)) {
            rows.extend(mine.into_iter().cloned());
            continue;
        }
        let note = match error {
            Some(e) if !done(n) => format!("the boot failed before it ended: {e}"),
            _ if !done(n) => "not in this console: the probe did not run it".to_string(),
            _ => "the oracle gave no row for it".to_string(),
        };
        rows.push(Row {
            kernel: judged
                .first()
                .map_or_else(|| kernel.to_string(), |r| r.kernel.clone()),
            cpus: if obs.hello.cpus > 0 {
                obs.hello.cpus
            } else {
                cpus
            },
            scenario: n.clone(),
            observable: "-".into(),
            predicted: "-".into(),
            observed: "-".into(),
            verdict: Verdict::Failed,
            note,
            judged: crate::oracle::Judged::Fitted,
            discriminating: false,
        });
    }
    rows
}

/// The saved consoles in `dir` (`<kernel>-<cpus>.txt`), judged, in kernel
/// and vCPU order; `--kernel` and `--cpus` ([`Picked`]) pick among them.
pub fn from_saved(dir: &Path, a: &Picked, names: &[String]) -> Result<Vec<Outcome>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("--from {}: {e}", dir.display()))?;
    let mut found: Vec<(String, Option<usize>, PathBuf)> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            let stem = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let (k, n) = match stem.rsplit_once('-') {
                Some((k, n)) if n.parse::<usize>().is_ok() => (k.to_string(), n.parse().ok()),
                Some((k, _)) => (k.to_string(), None),
                None => (stem.clone(), None),
            };
            (k, n, p)
        })
        .collect();
    if found.is_empty() {
        return Err(format!(
            "--from {}: no saved consoles (*.txt) there",
            dir.display()
        ));
    }
    for k in a.kernel {
        if !found.iter().any(|(f, _, _)| f == k) {
            let mut known: Vec<&str> = found.iter().map(|(f, _, _)| f.as_str()).collect();
            known.dedup();
            return Err(format!(
                "unknown kernel {k:?} in {}: expected one of {}",
                dir.display(),
                known.join(", ")
            ));
        }
    }
    found.retain(|(k, n, _)| {
        (a.kernel.is_empty() || a.kernel.contains(k))
            && (a.cpus.is_empty() || n.is_some_and(|n| a.cpus.contains(&n)))
    });
    found.sort_by(|x, y| {
        cache::version_key(&x.0)
            .cmp(&cache::version_key(&y.0))
            .then(x.0.cmp(&y.0))
            .then(x.1.cmp(&y.1))
    });
    let mut out = Vec::new();
    for (k, n, p) in found {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let seen = console::read(&text);
        let cpus = n.unwrap_or(seen.obs.hello.cpus);
        // Without --scenario, a console that ended is judged on the
        // scenarios it ran.
        let ran = |n: &&String| seen.obs.done.iter().any(|d| &d.s == *n);
        let here: Vec<String> = if !a.scenario_given && seen.ended {
            names.iter().filter(ran).cloned().collect()
        } else {
            names.to_vec()
        };
        let o = outcome(&k, cpus, &text, &here);
        eprintln!(
            "{}: {} at {}, {}{}",
            p.display(),
            o.kernel,
            count(o.cpus, "vCPU"),
            count(o.rows.len(), "scenario"),
            o.error
                .as_ref()
                .map_or(String::new(), |e| format!(", FAILED: {e}"))
        );
        out.push(o);
    }
    Ok(out)
}

/// The reproducer's row of one boot, if it ran: the model's forecast for
/// the `-k` it ran with, beside what it printed, and the exact replay of
/// its trace.
fn repro_row(obs: &Observation) -> Option<Row> {
    if !obs.repro.ran {
        return None;
    }
    let (release, cpus) = (&obs.hello.release, obs.hello.cpus);
    let forecast = obs
        .repro
        .k1
        .parse::<usize>()
        .map_err(|e| format!("the reproducer's -k {:?}: {e}", obs.repro.k1))
        .and_then(|k1| crate::oracle::plan::forecast(release, cpus, k1));
    Some(match forecast {
        Ok(f) => crate::oracle::judge::judge_reproducer(obs, f),
        Err(e) => crate::oracle::judge::failed_row(release, cpus, "reproducer", &e),
    })
}
