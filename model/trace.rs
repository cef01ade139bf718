//! Kernel-level traces of one execution, and their rendering as the
//! `CPU 0 / CPU 1` column diagrams of Documentation/memory-barriers.txt.
//!
//! Steps are recorded right after the model operation they describe, in the
//! same atomic step under loom and shuttle, so their order is the execution
//! order. Under loom a load may still return an older value than the one
//! last written in that order (weak memory); the step shows the value the
//! load actually returned.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::platform::ghost::Mutex;

/// Who runs a step: one column of the diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Actor {
    /// An updater CPU.
    Cpu(usize),
    /// A memory.stat-style reader.
    Reader(usize),
    /// `flush_memcg_stats_dwork()`.
    Periodic,
    /// The main thread: the quiescent read and the final flush.
    Main,
    /// The timer interrupt advancing `jiffies_64` (abstract time).
    Clock,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Cpu(c) => write!(f, "CPU {c}"),
            Actor::Reader(r) => write!(f, "reader {r}"),
            Actor::Periodic => f.write_str("periodic"),
            Actor::Main => f.write_str("main"),
            Actor::Clock => f.write_str("clock"),
        }
    }
}

/// One kernel-level step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Who ran it.
    pub actor: Actor,
    /// What it did, in kernel terms, with the values involved.
    pub text: String,
}

/// The step log of the current execution (disabled unless explaining).
#[derive(Debug, Default)]
pub struct Tracer {
    enabled: bool,
    steps: Mutex<Vec<Step>>,
}

impl Tracer {
    /// A tracer that records only if `enabled`.
    pub fn new(enabled: bool) -> Self {
        Tracer {
            enabled,
            steps: Mutex::new(Vec::new()),
        }
    }

    /// Record a step; `text` is only evaluated when tracing.
    pub fn record(&self, actor: Actor, text: impl FnOnce() -> String) {
        if self.enabled {
            let step = Step {
                actor,
                text: text(),
            };
            self.lock().push(step);
        }
    }

    /// Forget the previous execution's steps.
    pub fn clear(&self) {
        if self.enabled {
            self.lock().clear();
        }
    }

    /// The steps recorded so far.
    pub fn steps(&self) -> Vec<Step> {
        self.lock().clone()
    }

    fn lock(&self) -> crate::platform::ghost::MutexGuard<'_, Vec<Step>> {
        self.steps.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The narrowest column: wide enough for `&stats_flush_threshold)`.
pub const MIN_COLUMN: usize = 23;

/// Render `steps` as a column diagram: one column per actor, one row per
/// step in execution order, an initial-state line above and the violated
/// predicate below. Columns are wrapped to fit `width` where they can.
pub fn render_columns(initial: &str, steps: &[Step], predicate: &str, width: usize) -> String {
    let mut actors: Vec<Actor> = steps.iter().map(|s| s.actor).collect();
    actors.sort();
    actors.dedup();
    let n = actors.len().max(1);
    let num_w = steps.len().to_string().len().max(2);
    // Four columns at the minimum width still fit 100; five do not (the
    // diagram is then wider, as the threads require).
    let gutter = if n >= 4 { 1 } else { 2 };
    let natural = steps.iter().map(|s| s.text.len()).max().unwrap_or(8);
    let avail = width.saturating_sub(num_w + 1 + gutter * (n - 1)) / n;
    // Below MIN_COLUMN kernel identifiers would be cut; go wider instead.
    let col = natural.min(avail.max(MIN_COLUMN));
    let mut out = String::new();
    for line in wrap(initial, width) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    let mut header = format!("{:>num_w$} ", "");
    for (i, a) in actors.iter().enumerate() {
        if i > 0 {
            header.push_str(&" ".repeat(gutter));
        }
        header.push_str(&format!("{:<col$}", a.to_string()));
    }
    out.push_str(header.trim_end());
    out.push('\n');
    let mut rule = format!("{:>num_w$} ", "");
    for i in 0..n {
        if i > 0 {
            rule.push_str(&" ".repeat(gutter));
        }
        rule.push_str(&"-".repeat(col));
    }
    out.push_str(&rule);
    out.push('\n');
    for (k, s) in steps.iter().enumerate() {
        let idx = actors.iter().position(|a| *a == s.actor).unwrap_or(0);
        for (j, piece) in wrap(&s.text, col).into_iter().enumerate() {
            let mut line = if j == 0 {
                format!("{:>num_w$} ", k + 1)
            } else {
                format!("{:>num_w$} ", "")
            };
            line.push_str(&" ".repeat(idx * (col + gutter)));
            line.push_str(&piece);
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out.push('\n');
    for line in wrap(predicate, width) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Break `text` into lines of at most `width` characters: at spaces, or
/// after `(` and `,`, and only inside a name when nothing else fits.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    // Atoms end after a space, '(' or ','; the space itself is dropped at a
    // line break.
    let mut atoms: Vec<String> = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        cur.push(ch);
        if ch == ' ' || ch == '(' || ch == ',' {
            atoms.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        atoms.push(cur);
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    for mut atom in atoms {
        if line.len() + atom.trim_end().len() > width && !line.is_empty() {
            lines.push(line.trim_end().to_string());
            line.clear();
        }
        while atom.trim_end().len() > width {
            let rest = atom.split_off(width);
            lines.push(atom);
            atom = rest;
        }
        line.push_str(&atom);
    }
    if !line.trim_end().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}
