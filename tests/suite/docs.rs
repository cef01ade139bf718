//! Every command example in docs/*.md is run, so the docs cannot drift from
//! the code.
//!
//! Convention: inside a fenced block tagged `sh`, each line that starts with
//! `flushcheck ` is run with the built binary. It must exit 0, unless the
//! line ends with `# exits N`, in which case it must exit N. Examples must be
//! quick (each well under 20 s on 2 cores); slow commands go in `text`
//! blocks, which are not run. Each command's time is printed (run with
//! `--nocapture` to see it); no time is asserted.

use std::path::Path;
use std::time::Instant;

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
        }
    }
    assert!(
        ran >= 5,
        "expected the docs to show at least 5 commands, found {ran}"
    );
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
