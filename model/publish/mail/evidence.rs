//! The early break's loss on real kernels, read from recorded consoles
//! (`flushcheck kernels --save DIR`; the project keeps them in
//! tests/consoles/): per boot, the kernel, its vCPUs and what
//! [`crate::oracle::loss::loss`] finds in its `c12-decisive` scenario. The
//! c12 mail prints these figures, never figures of its own.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::guest::cache::version_key;
use crate::oracle::loss::{loss, Loss, DECISIVE};

/// The consoles the project keeps, in its source tree.
pub fn default_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/consoles"))
}

/// One boot that ran the decisive scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boot {
    /// `uname -r` (`7.3.4+deb13-amd64`).
    pub release: String,
    /// vCPUs.
    pub cpus: usize,
    /// The parent's loss, if it fell short.
    pub loss: Option<Loss>,
}

impl Boot {
    /// `7.3.4` of `7.3.4+deb13-amd64`; `6.1.0-57` of `6.1.0-57-amd64`
    /// (Debian names its 6.1 kernels by ABI, not by sublevel).
    pub fn version(&self) -> String {
        let r = self.release.split('+').next().unwrap_or(&self.release);
        let r = r.strip_suffix("-amd64").unwrap_or(r);
        match r.split_once('-') {
            Some((v, abi)) if v.ends_with(".0") && abi.chars().all(|c| c.is_ascii_digit()) => {
                r.to_string()
            }
            Some((v, _)) => v.to_string(),
            None => r.to_string(),
        }
    }
}

/// Every boot in `dir` (`*.txt`) whose console records the decisive
/// scenario, in kernel and vCPU order. Consoles that do not (a boot that
/// failed, a probe that did not run it) are left out.
pub fn boots(dir: &Path) -> Result<Vec<Boot>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let c = crate::guest::console::read(&text);
        let obs = &c.obs;
        if obs.hello.release.is_empty() || !obs.reads.iter().any(|r| r.s == DECISIVE) {
            continue;
        }
        out.push(Boot {
            release: obs.hello.release.clone(),
            cpus: obs.hello.cpus,
            loss: loss(obs),
        });
    }
    out.sort_by(|a, b| {
        version_key(&a.release)
            .cmp(&version_key(&b.release))
            .then(a.cpus.cmp(&b.cpus))
    });
    out.dedup_by(|a, b| a.release == b.release && a.cpus == b.cpus);
    Ok(out)
}

/// One cell of the table: `0 of 287, 2.04 s`, `no loss`.
pub fn cell(b: &Boot) -> String {
    match &b.loss {
        None => "no loss".into(),
        Some(l) => match l.lasted_ms {
            Some(ms) => format!("{} of {}, {:.2} s", l.parent, l.child, ms as f64 / 1000.0),
            None => format!("{} of {}, to the end*", l.parent, l.child),
        },
    }
}

/// The table of `boots`: a row per kernel, a column per vCPU count; each
/// cell the parent's pages of the child's and how long until the parent
/// caught up. `break_from` marks the kernels with the break.
pub fn table(boots: &[Boot]) -> String {
    let mut cpus: Vec<usize> = boots.iter().map(|b| b.cpus).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut kernels: Vec<String> = boots.iter().map(Boot::version).collect();
    kernels.dedup();
    let w = 18;
    let mut out = String::new();
    let mut head = format!("  {:<9}", "kernel");
    for c in &cpus {
        let _ = write!(
            head,
            " {:<w$}",
            format!("{c} vCPU{}", if *c == 1 { "" } else { "s" })
        );
    }
    let _ = writeln!(out, "{}", head.trim_end());
    for k in &kernels {
        let mut line = format!("  {k:<9}");
        for c in &cpus {
            let cell = boots
                .iter()
                .find(|b| &b.version() == k && b.cpus == *c)
                .map_or_else(|| "-".to_string(), cell);
            let _ = write!(line, " {cell:<w$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}
