//! `flushcheck litmus`: write the litmus corpus (docs/litmus/), and check
//! it with herd7 and the Linux-kernel memory model where the user has both.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::explore::quiet_panics;

use crate::report::litmus::herd as litmus_herd;
use crate::report::litmus::judge;

pub mod corpus;
mod edit;
pub mod findings;
pub mod found;
pub mod trigger;

use corpus as litmus_corpus;

/// `flushcheck litmus`.
#[derive(clap::Args, Debug, Clone)]
pub struct LitmusArgs {
    /// Write the corpus (every test and a README) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run herd7 on every .litmus file of the corpus and judge its output
    /// by tools/memory-model/scripts/judgelitmus.sh's rules (the
    /// `Result:` word, `DATARACE` if and only if herd7 flags a data race);
    /// also fail a test named other than its file, or a flag the header
    /// does not name.
    #[arg(long)]
    pub check: bool,
    /// The corpus --check reads [default: --out's DIR, else docs/litmus].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The herd7 binary [default: $HERD7, else herd7 on PATH].
    #[arg(long, value_name = "PATH")]
    pub herd7: Option<PathBuf>,
    /// A kernel tree's tools/memory-model directory [default: $LKMM].
    #[arg(long, value_name = "DIR")]
    pub lkmm: Option<PathBuf>,
    /// Time budget of each search while generating, in seconds.
    #[arg(long, default_value_t = 120)]
    pub budget: u64,
}

/// `name` on PATH, if there.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

/// The herd7 binary: --herd7, $HERD7, then PATH.
fn herd7(a: &LitmusArgs) -> Result<PathBuf, String> {
    let (path, from) = match (&a.herd7, std::env::var_os("HERD7")) {
        (Some(p), _) => (p.clone(), "--herd7"),
        (None, Some(p)) if !p.is_empty() => (PathBuf::from(p), "HERD7"),
        _ => {
            return on_path("herd7").ok_or_else(|| {
                "herd7 not found: give --herd7 PATH or set HERD7 (herd7 is not in this \
                 project's package registries; the corpus is checked without it by \
                 `cargo test --test litmus_corpus`)"
                    .to_string()
            })
        }
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("{from} {}: no such file", path.display()))
    }
}

/// The LKMM directory: --lkmm, then $LKMM; it must hold linux-kernel.cfg.
fn lkmm(a: &LitmusArgs) -> Result<PathBuf, String> {
    let (dir, from) = match (&a.lkmm, std::env::var_os("LKMM")) {
        (Some(d), _) => (d.clone(), "--lkmm"),
        (None, Some(d)) if !d.is_empty() => (PathBuf::from(d), "LKMM"),
        _ => {
            return Err(
                "--check needs the Linux-kernel memory model: give --lkmm DIR or set LKMM \
                 to a kernel tree's tools/memory-model"
                    .into(),
            )
        }
    };
    if dir.join("linux-kernel.cfg").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "{from} {}: no linux-kernel.cfg there (expected a kernel tree's tools/memory-model)",
            dir.display()
        ))
    }
}

/// `flushcheck litmus`.
pub fn litmus(a: &LitmusArgs) -> Result<ExitCode, String> {
    if a.out.is_none() && !a.check {
        return Err(
            "litmus: nothing to do: give --out DIR (write the corpus) or --check (run herd7 on it)"
                .into(),
        );
    }
    if a.budget == 0 {
        return Err("--budget 0: the time budget must be at least 1 second".into());
    }
    // Before generating anything: a missing herd7 is reported at once.
    let tools = if a.check {
        Some((herd7(a)?, lkmm(a)?))
    } else {
        None
    };
    if let Some(dir) = &a.out {
        quiet_panics();
        let entries = corpus(Duration::from_secs(a.budget))?;
        litmus_corpus::write(dir, &entries)?;
        println!(
            "wrote {} litmus tests and README to {}",
            entries.len(),
            dir.display()
        );
    }
    let Some((herd7, lkmm)) = tools else {
        return Ok(ExitCode::SUCCESS);
    };
    let dir = a
        .dir
        .clone()
        .or_else(|| a.out.clone())
        .unwrap_or_else(|| PathBuf::from("docs/litmus"));
    check(&herd7, &lkmm, &dir)
}

/// herd7 on every .litmus file of `dir`, judged as judgelitmus.sh judges
/// it, and by the file's name and flags.
fn check(herd7: &Path, lkmm: &Path, dir: &Path) -> Result<ExitCode, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("--dir {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("--dir {}: no .litmus files there", dir.display()));
    }
    let mut bad = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let file = f.file_name().unwrap_or_default().to_string_lossy();
        if judge::outcome(&text).is_none() {
            println!("{file}: no `Result:` line in the header");
            bad += 1;
            continue;
        }
        let out = match litmus_herd::run(herd7, lkmm, f) {
            Ok(a) => a.stdout,
            Err(why) => {
                println!("{file}: {why}");
                bad += 1;
                continue;
            }
        };
        let mut problems = judge::file_problems(&file, &text, &out);
        let verdict = judge::judge(&text, &out);
        if let Err(why) = &verdict {
            problems.insert(0, why.trim().to_string());
        }
        let seen = litmus_herd::observations(&out)
            .first()
            .map(|(_, o)| o.to_string())
            .unwrap_or_default();
        let race = if judge::predicts_race(&text) {
            " DATARACE"
        } else {
            ""
        };
        if problems.is_empty() {
            match verdict {
                Ok(judge::Passed::Forgiven) => println!(
                    "{file}: {seen}, forgiven (the header expects {}; herd7 flags a data race)",
                    judge::outcome(&text).unwrap_or_default()
                ),
                _ => println!("{file}: {seen}{race}, as expected"),
            }
        } else {
            println!("{file}: {}", problems.join("; "));
            bad += 1;
        }
    }
    println!(
        "{} of {} tests pass judgelitmus.sh's rules and the file checks",
        files.len() - bad,
        files.len()
    );
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The whole corpus: the findings (with the node-found tests), then the
/// shapes.
pub fn corpus(budget: Duration) -> Result<Vec<corpus::Entry>, String> {
    let mut out = findings::tree_race(budget)?;
    out.extend(findings::llist_race(budget)?);
    out.extend(trigger::trigger(budget)?);
    out.extend(trigger::tree_trigger(budget)?);
    out.extend(trigger::llist_trigger(budget)?);
    out.extend(found::found(budget)?);
    out.extend(corpus::shapes(budget)?);
    Ok(out)
}
