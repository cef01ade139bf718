//! Every command example in docs/*.md is run, so the docs cannot drift from
//! the code.
//!
//! Convention: inside a fenced block tagged `sh`, each line that starts with
//! `flushcheck ` is run with the built binary. It must exit 0, unless the
//! line ends with `# exits N`, in which case it must exit N. Examples must be
//! quick (each well under 20 s on 2 cores); slow commands go in `text`
//! blocks, which are not run. Each command's time is printed (run with
//! `--nocapture` to see it); no time is asserted. The LKMM litmus test
//! each `explain` command prints is checked for herd7's syntax (issue 20).

use std::path::Path;
use std::time::Instant;

use memcg_flush_model::report::litmus_herd::check_syntax;

mod common;

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

#[test]
fn documented_commands_run_as_documented() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut files: Vec<_> = std::fs::read_dir(&docs)
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut ran = 0;
    let mut exports = 0;
    for path in files {
        let md = std::fs::read_to_string(&path).expect("readable");
        for (cmd, expected) in commands(&md) {
            let args: Vec<&str> = cmd.split_whitespace().collect();
            let start = Instant::now();
            let out = common::flushcheck(&args);
            eprintln!(
                "{:5.1} s  {}: flushcheck {cmd}",
                start.elapsed().as_secs_f64(),
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            assert_eq!(
                out.code,
                expected,
                "{}: `flushcheck {cmd}`\n{}{}",
                path.display(),
                out.stdout,
                out.stderr
            );
            ran += 1;
            if cmd.starts_with("explain ") && out.code == 0 {
                let litmus = litmus_of(&out.stdout)
                    .unwrap_or_else(|| panic!("`flushcheck {cmd}` printed no litmus test"));
                check_syntax(&litmus).unwrap_or_else(|e| panic!("`flushcheck {cmd}`: {e}"));
                exports += 1;
            }
        }
    }
    assert!(
        ran >= 5,
        "expected the docs to show at least 5 commands, found {ran}"
    );
    assert!(exports >= 18, "{exports} litmus exports checked");
}

/// The litmus test in `explain`'s output (text, markdown or JSON).
fn litmus_of(stdout: &str) -> Option<String> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(stdout) {
        return v["litmus"].as_str().map(String::from);
    }
    let rest = stdout
        .split("LKMM litmus test of this trace (herd7):")
        .nth(1)?;
    let start = rest.find("\nC ")? + 1;
    let rest = &rest[start..];
    let end = rest.find("\nexists (")?;
    let line_end = rest[end + 1..]
        .find('\n')
        .map_or(rest.len(), |e| end + 1 + e);
    Some(rest[..line_end].to_string() + "\n")
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
