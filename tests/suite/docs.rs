//! Every command example in docs/*.md is run, so the docs cannot drift from
//! the code.
//!
//! Convention: inside a fenced block tagged `sh`, each line that starts with
//! `flushcheck ` is run with the built binary. It must exit 0, unless the
//! line ends with `# exits N`, in which case it must exit N. Examples must be
//! quick (each well under 20 s on 2 cores); slow commands go in `text`
//! blocks, which are not run. Each command's time is printed (run with
//! `--nocapture` to see it); no time is asserted. The few documented
//! commands over 3 s ([`HEAVY`]) run only with `--ignored`, so that the
//! default `cargo test` stays within its time budget. The LKMM litmus test
//! each `explain` command prints is checked for herd7's syntax, and for a
//! kernel version's trace, for a kernel site behind every access (issue
//! 40); an `explain` that exports none must say why.

use std::path::Path;
use std::time::Instant;

use memcg_flush_model::report::litmus::herd::check_syntax;

use crate::common;

/// The `flushcheck` commands of `md`, without the program name, each with
/// the exit code it must return.
fn commands(md: &str) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && t == "```sh";
            continue;
        }
        if in_sh {
            if let Some(rest) = t.strip_prefix("flushcheck ") {
                let (cmd, code) = match rest.split_once("# exits ") {
                    Some((c, n)) => (c.trim().to_string(), n.trim().parse().expect("exit code")),
                    None => (rest.trim().to_string(), 0),
                };
                out.push((cmd, code));
            }
        }
    }
    out
}

/// The documented commands that take over 3 s on 2 cores (measured while
/// porting to the one test crate, on a shared 2-core machine): run by
/// [`heavy_documented_commands_run_as_documented`], which is ignored by
/// default, not by the default `cargo test`.
const HEAVY: [(&str, &str); 5] = [
    // 3.5 s and 3.1 s: two fuzz runs for a time budget.
    ("running.md", "fuzz --variant mutant-skip-off-by-one --seconds 5"),
    ("running.md", "fuzz --variant v6.0 --seconds 3 --max-cpus 2 --max-updates 3"),
    // 25.1 s: five seeds of time-to-kill for every mutant.
    ("running.md", "perf --seeds 1 --budget 5 --no-growth"),
    // 14.5 s: the lifetime matrix of the three kernel forms.
    (
        "findings.md",
        "lifetime --variant v6.8-life,v7.1-life,v7.1-life-v1",
    ),
    // 11.7 s: three seeded searches and the shrink of a per-memcg trace.
    (
        "findings.md",
        "explain --variant v6.8 --property per_memcg_error_bound --backend shuttle-random --cpus 1 --batch 2 --updates 5 --val 2 --tree 0 --charge 1 --read 0 --reads 2",
    ),
];

/// Every documented command, by file: (file name, command, exit code).
/// Documented commands another test runs and checks more closely:
/// `plot --out docs/figures` is the figures module's regeneration.
const ELSEWHERE: [(&str, &str); 1] = [("findings.md", "plot --out docs/figures")];

fn documented() -> Vec<(String, String, i32)> {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut files: Vec<_> = std::fs::read_dir(&docs)
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let md = std::fs::read_to_string(&path).expect("readable");
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        for (cmd, code) in commands(&md) {
            out.push((name.clone(), cmd, code));
        }
    }
    out
}

fn is_heavy(file: &str, cmd: &str) -> bool {
    HEAVY.iter().any(|(f, c)| *f == file && *c == cmd)
}

/// Whether `cmd` explains a kernel version of the flush protocol (whose
/// every access the release's marking table must know).
fn kernel_flush_variant(cmd: &str) -> bool {
    use memcg_flush_model::protocol::{catalogue, Family, Kind};
    let name = cmd
        .split_whitespace()
        .skip_while(|w| *w != "--variant")
        .nth(1)
        .unwrap_or("");
    catalogue::by_name(name).is_ok_and(|v| v.kind == Kind::Kernel && v.family != Family::Lifetime)
}

/// Run each command, check its exit code, print its time, check the litmus
/// test of each `explain`; the numbers of commands run and of exports checked.
fn run_all(cmds: &[(String, String, i32)]) -> (usize, usize) {
    let mut exports = 0;
    for (file, cmd, expected) in cmds {
        let args: Vec<&str> = cmd.split_whitespace().collect();
        // `plot --out docs/figures` rewrites what the figures module reads.
        let _figures = (args.first() == Some(&"plot")).then(common::figures_lock);
        let start = Instant::now();
        let out = common::flushcheck_once(cmd);
        eprintln!(
            "{:5.1} s  {file}: flushcheck {cmd}",
            start.elapsed().as_secs_f64()
        );
        assert_eq!(
            out.code, *expected,
            "docs/{file}: `flushcheck {cmd}`\n{}{}",
            out.stdout, out.stderr
        );
        if cmd.starts_with("explain ") && out.code == 0 {
            let Some(litmus) = litmus_of(&out.stdout) else {
                assert!(
                    out.stdout.contains("not exported as a litmus test: "),
                    "`flushcheck {cmd}` printed no litmus test and no reason"
                );
                continue;
            };
            check_syntax(&litmus).unwrap_or_else(|e| panic!("`flushcheck {cmd}`: {e}"));
            if kernel_flush_variant(cmd) {
                assert!(
                    !litmus.contains("No kernel site"),
                    "`flushcheck {cmd}`: an access of a kernel version with no site in its marking table\n{litmus}"
                );
            }
            exports += 1;
        }
    }
    (cmds.len(), exports)
}

/// The litmus test in `explain`'s output (text, markdown or JSON).
fn litmus_of(stdout: &str) -> Option<String> {
    if stdout.starts_with('{') {
        let v = crate::schemas::data(stdout, "counterexample");
        return v["litmus"].as_str().map(String::from);
    }
    let rest = stdout
        .split("LKMM litmus test of this trace (herd7):")
        .nth(1)?;
    let start = rest.find("\nC ")? + 1;
    let rest = &rest[start..];
    let end = rest.find("\nexists (")?;
    // The clause may go on over lines: it ends at the line ending in ')'.
    let mut line_end = end + 1;
    loop {
        let next = rest[line_end..]
            .find('\n')
            .map_or(rest.len(), |e| line_end + e);
        if rest[line_end..next].trim_end().ends_with(')') || next == rest.len() {
            line_end = next;
            break;
        }
        line_end = next + 1;
    }
    Some(rest[..line_end].to_string() + "\n")
}

#[test]
fn documented_commands_run_as_documented() {
    let all = documented();
    // Every heavy command is still documented: the list cannot hide a
    // command the docs no longer show.
    for (f, c) in HEAVY {
        assert!(
            all.iter().any(|(file, cmd, _)| file == f && cmd == c),
            "HEAVY lists `flushcheck {c}`, which docs/{f} no longer shows"
        );
    }
    for (f, c) in ELSEWHERE {
        assert!(
            all.iter().any(|(file, cmd, _)| file == f && cmd == c),
            "ELSEWHERE lists `flushcheck {c}`, which docs/{f} no longer shows"
        );
    }
    let quick: Vec<_> = all
        .into_iter()
        .filter(|(f, c, _)| !is_heavy(f, c) && !ELSEWHERE.contains(&(f.as_str(), c.as_str())))
        .collect();
    let (ran, exports) = run_all(&quick);
    assert!(
        ran >= 5,
        "expected the docs to show at least 5 commands, found {ran}"
    );
    assert!(exports >= 15, "{exports} litmus exports checked");
}

#[test]
#[ignore = "the documented commands over 3 s each (58 s together): run with --ignored"]
fn heavy_documented_commands_run_as_documented() {
    let heavy: Vec<_> = documented()
        .into_iter()
        .filter(|(f, c, _)| is_heavy(f, c))
        .collect();
    assert_eq!(run_all(&heavy).0, HEAVY.len());
}

#[test]
fn the_convention_parser_reads_exit_codes() {
    let md = "```sh\nflushcheck --help\nflushcheck explain --variant v6.0 # exits 1\n```\n```text\nflushcheck not-run\n```";
    assert_eq!(
        commands(md),
        vec![
            ("--help".to_string(), 0),
            ("explain --variant v6.0".to_string(), 1)
        ]
    );
}

/// docs/running.md's first table has a row for every subcommand
/// `flushcheck --help` lists (its measured time and what it does), so a new
/// command cannot go undocumented there.
#[test]
fn running_md_has_a_row_for_every_subcommand() {
    let help = common::flushcheck(&["--help"]).stdout;
    let md = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/running.md"))
        .expect("docs/running.md");
    let glance: Vec<&str> = md
        .split("## At a glance")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("the At a glance table")
        .lines()
        .filter(|l| l.starts_with("| `"))
        .collect();
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .and_then(|t| t.split("Options:").next())
        .expect("the command list")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 15, "{commands:?}");
    for c in commands {
        assert!(
            glance
                .iter()
                .any(|row| row.contains(&format!("flushcheck {c}"))),
            "docs/running.md's first table has no row for `flushcheck {c}`"
        );
    }
}
