//! Shrinking a configuration: its neighbours one step smaller.

use crate::config::Config;

use super::draw::{canonical, VALS};

/// The configurations one step smaller than `c`, each with what changed,
/// fewest threads first. Every field of each is at most `c`'s.
pub fn neighbours(c: &Config) -> Vec<(String, Config)> {
    let mut out: Vec<(String, Config)> = Vec::new();
    let mut push = |what: String, n: Config| {
        let n = canonical(n);
        if n != *c && n.validate(usize::MAX, "shuttle").is_ok() && !out.iter().any(|(_, o)| *o == n)
        {
            out.push((what, n));
        }
    };
    if c.cpus > 1 {
        push(
            format!("cpus {} -> {}", c.cpus, c.cpus - 1),
            Config {
                cpus: c.cpus - 1,
                ..c.clone()
            },
        );
    }
    if c.readers > 0 {
        push(
            format!("readers {} -> {}", c.readers, c.readers - 1),
            Config {
                readers: c.readers - 1,
                ratelimited: c.ratelimited.min(c.readers - 1),
                ..c.clone()
            },
        );
    }
    if c.periodic {
        push(
            "periodic off".into(),
            Config {
                periodic: false,
                ticks: 0,
                late: 0,
                ratelimited: 0,
                ..c.clone()
            },
        );
    }
    if c.ticks > 0 {
        push(
            "time off".into(),
            Config {
                ticks: 0,
                late: 0,
                ratelimited: 0,
                ..c.clone()
            },
        );
    }
    if c.updates > 1 {
        push(
            format!("updates {} -> {}", c.updates, c.updates - 1),
            Config {
                updates: c.updates - 1,
                ..c.clone()
            },
        );
    }
    if c.readers > 0 && c.reads > 1 {
        push(
            format!("reads {} -> {}", c.reads, c.reads - 1),
            Config {
                reads: c.reads - 1,
                ..c.clone()
            },
        );
    }
    if c.vals.len() > 1 {
        for i in 0..c.vals.len() {
            let mut vals = c.vals.clone();
            let v = vals.remove(i);
            push(format!("drop val {v}"), Config { vals, ..c.clone() });
        }
    }
    for i in 0..c.vals.len() {
        let v = c.vals[i];
        for w in VALS.into_iter().filter(|w| *w < v.abs()) {
            let mut vals = c.vals.clone();
            vals[i] = w * v.signum();
            push(
                format!("val {v} -> {}", vals[i]),
                Config { vals, ..c.clone() },
            );
        }
    }
    if c.batch > 1 {
        push(
            format!("batch {} -> {}", c.batch, c.batch - 1),
            Config {
                batch: c.batch - 1,
                ..c.clone()
            },
        );
    }
    if c.ticks > 1 {
        push(
            format!("ticks {} -> {}", c.ticks, c.ticks - 1),
            Config {
                ticks: c.ticks - 1,
                ..c.clone()
            },
        );
    }
    if c.late > 0 {
        push(
            format!("late {} -> {}", c.late, c.late - 1),
            Config {
                late: c.late - 1,
                ..c.clone()
            },
        );
    }
    out
}
