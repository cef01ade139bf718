//! The litmus corpus, docs/litmus/ (issue 20): the checked-in files are
//! what `flushcheck litmus --out` generates, each is in the syntax herd7
//! parses, the model agrees with LKMM's expected result on every finding
//! and fix, and `flushcheck litmus --check` reads herd7's answer (shown
//! with a stand-in herd7; the real one is not installable here) or, without
//! herd7, says so in one line and exits 2.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use memcg_flush_model::cli::litmus::{corpus, corpus::write};
use memcg_flush_model::explore::quiet_panics;
use memcg_flush_model::report::litmus::herd::{
    check_syntax, expected, expected_flags, observations,
};
use memcg_flush_model::report::litmus::prog::Observation::{self, Never, Sometimes};

fn docs_litmus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/litmus")
}

/// A fresh directory under the system's temporary directory, removed when
/// dropped.
fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("flushcheck-{tag}-"))
        .tempdir()
        .expect("temp dir")
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .expect("readable dir")
        .map(|e| e.expect("entry").path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("text"))
        })
        .collect()
}

#[test]
fn the_checked_in_corpus_is_what_the_code_generates() {
    quiet_panics();
    let entries = corpus(Duration::from_secs(120)).expect("the corpus");
    let dir_dir = temp_dir("corpus");
    let dir = dir_dir.path();
    write(dir, &entries).expect("written");
    let (made, kept) = (files(dir), files(&docs_litmus()));
    assert_eq!(
        made.keys().collect::<Vec<_>>(),
        kept.keys().collect::<Vec<_>>(),
        "docs/litmus/ has other files than the code generates: run `flushcheck litmus --out docs/litmus`"
    );
    for (name, text) in &made {
        assert!(
            kept[name] == *text,
            "docs/litmus/{name} differs from what the code generates: run `flushcheck litmus --out docs/litmus`"
        );
        if name.ends_with(".litmus") {
            check_syntax(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    // Every finding and fix: the model agrees with LKMM's expected result.
    // A witness's outcome is weak memory only (loom at bound 2, never the
    // SC DFS); a fix's is found by no search.
    let findings: Vec<_> = entries.iter().filter(|e| e.group == "findings").collect();
    assert!(findings.len() >= 6, "{} findings", findings.len());
    let (mut witnesses, mut fixes) = (0, 0);
    for e in findings {
        let t = e.prog.target();
        let obs: Vec<Observation> = e.measured.iter().map(|m| m.observation(&t)).collect();
        match e.prog.expected {
            Some(Sometimes) => {
                assert_eq!(obs[1..], [Sometimes, Never], "{}: {obs:?}", e.prog.name);
                witnesses += 1;
            }
            Some(Never) => {
                assert_eq!(obs, [Never, Never, Never], "{}", e.prog.name);
                fixes += 1;
            }
            o => panic!("{}: expected {o:?}", e.prog.name),
        }
    }
    assert!(
        witnesses >= 5 && fixes >= 5,
        "{witnesses} witnesses, {fixes} fixes"
    );
}

#[test]
fn herd7_output_and_headers_are_read() {
    let out = "Test SB Allowed\nStates 4\nObservation SB+poonceonces Sometimes 1 3\nTime SB 0.01\n\
               Observation MP+polocks Never 0 3\n";
    assert_eq!(
        observations(out),
        [
            ("SB+poonceonces".to_string(), Sometimes),
            ("MP+polocks".to_string(), Never)
        ]
    );
    assert_eq!(
        expected("C x\n\n(*\n * Result: Never\n *)\n\n{}\n"),
        Some(Never)
    );
    assert_eq!(expected("C x\n\n{}\n\nP0(int *x)\n"), None);
    let bad = "C t\n\n(*\n * Result: Never\n *)\n\n{ x=0; }\n\nP0(int *x)\n{\n\tint r0, r1;\n\n\tr0 = READ_ONCE(*x);\n}\n\nexists (0:r0=0)\n";
    assert!(check_syntax(bad)
        .unwrap_err()
        .contains("one register per declaration"));
    let no_init = bad.replace("{ x=0; }", "{}").replace("r0, r1", "r0");
    assert!(check_syntax(&no_init)
        .unwrap_err()
        .contains("x has no initial value"));
    let undeclared = bad.replace("r0, r1", "r0").replace("0:r0=0", "0:r1=0");
    assert!(check_syntax(&undeclared).unwrap_err().contains("0:r1"));
}

/// `flushcheck litmus` with `args`, herd7 hidden from PATH and the
/// environment.
fn litmus(args: &[&str], env: &[(&str, &Path)]) -> (i32, String, String) {
    let empty_dir = temp_dir("path");
    let empty = empty_dir.path();
    let mut c = Command::new(env!("CARGO_BIN_EXE_flushcheck"));
    c.arg("litmus")
        .args(args)
        .env_remove("HERD7")
        .env_remove("LKMM")
        .env("PATH", empty);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run flushcheck");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn one_line(stderr: &str) -> &str {
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr.trim()
}

#[test]
fn without_herd7_or_the_lkmm_check_exits_2_with_one_line() {
    let (code, _, err) = litmus(&["--check"], &[]);
    assert_eq!(code, 2);
    assert!(
        one_line(&err).contains("herd7 not found: give --herd7 PATH or set HERD7"),
        "{err}"
    );
    let (code, _, err) = litmus(&["--check", "--herd7", "/nonexistent/herd7"], &[]);
    assert_eq!(code, 2);
    assert!(
        one_line(&err).contains("--herd7 /nonexistent/herd7: no such file"),
        "{err}"
    );
    let fake = fake_herd7("Sometimes");
    let (code, _, err) = litmus(&["--check"], &[("HERD7", &fake)]);
    assert_eq!(code, 2);
    assert!(
        one_line(&err).contains("give --lkmm DIR or set LKMM"),
        "{err}"
    );
    let (code, _, err) = litmus(&["--check", "--lkmm", "/nonexistent"], &[("HERD7", &fake)]);
    assert_eq!(code, 2);
    assert!(
        one_line(&err).contains("--lkmm /nonexistent: no linux-kernel.cfg there"),
        "{err}"
    );
    let (code, _, err) = litmus(&[], &[]);
    assert_eq!(code, 2);
    assert!(one_line(&err).contains("nothing to do"), "{err}");
}

/// A stand-in for herd7 that answers `answer` for every test, as herd7
/// prints it (shell builtins only: the tests run it with an empty PATH).
fn fake_herd7(answer: &str) -> PathBuf {
    fake_herd7_printing(answer, &format!("Observation $n {answer} 1 3"))
}

/// A stand-in for herd7 that prints `lines` (one `echo` each; `$n` is
/// the file's test name) for every test.
fn fake_herd7_printing(tag: &str, lines: &str) -> PathBuf {
    // Kept: the caller runs it after this returns.
    let dir = temp_dir(&format!("fake-{tag}")).keep();
    let path = dir.join("herd7");
    let echo: Vec<String> = lines.lines().map(|l| format!("echo \"{l}\"")).collect();
    let script = format!(
        "#!/bin/sh\nfor f; do case \"$f\" in *.litmus) read -r c n < \"$f\"; \
         {};; esac; done\n",
        echo.join("; ")
    );
    std::fs::write(&path, script).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[test]
fn check_compares_herd7s_observation_with_each_header() {
    let lkmm_dir = temp_dir("lkmm");
    let lkmm = lkmm_dir.path();
    std::fs::write(lkmm.join("linux-kernel.cfg"), "").expect("cfg");
    let fake = fake_herd7("Sometimes");
    let dir = docs_litmus();
    let (code, out, err) = litmus(
        &[
            "--check",
            "--dir",
            dir.to_str().unwrap(),
            "--lkmm",
            lkmm.to_str().unwrap(),
        ],
        &[("HERD7", &fake)],
    );
    // The stand-in answers Sometimes: the tests expecting Never mismatch.
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("SB+poonceonces.litmus: Sometimes, as expected"),
        "{out}"
    );
    assert!(
        out.contains("SB+fencembonceonces.litmus: herd7 says Sometimes, the header expects Never"),
        "{out}"
    );
    let total = files(&dir)
        .keys()
        .filter(|n| n.ends_with(".litmus"))
        .count();
    let never = files(&dir)
        .values()
        .filter(|t| expected(t) == Some(Never))
        .count();
    assert!(
        out.contains(&format!(
            "{} of {total} tests give herd7's expected result",
            total - never
        )),
        "{out}"
    );
}

/// docs/findings.md section 15 quotes the store-buffering export as
/// `explain` prints it, not abridged.
#[test]
fn findings_quote_the_export_as_printed() {
    let out = Command::new(env!("CARGO_BIN_EXE_flushcheck"))
        .args("explain --variant v6.8-tree --property conservation --backend loom --cpus 1 --updates 2 --val 1 --readers 0 --periodic --format json".split(' '))
        .output()
        .expect("run flushcheck");
    assert_eq!(out.status.code(), Some(0));
    let v = crate::schemas::data(&String::from_utf8_lossy(&out.stdout), "counterexample");
    let litmus = v["litmus"].as_str().expect("a litmus test");
    let findings =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/findings.md"))
            .expect("findings");
    assert!(
        findings.contains(&format!("```text\n{litmus}```")),
        "docs/findings.md section 15 does not quote:\n{litmus}"
    );
}

/// `litmus --check` over the one file `text` with a stand-in herd7
/// printing `lines`.
fn check_one(tag: &str, text: &str, lines: &str) -> (i32, String) {
    let lkmm_dir = temp_dir(&format!("lkmm-{tag}"));
    let lkmm = lkmm_dir.path();
    std::fs::write(lkmm.join("linux-kernel.cfg"), "").expect("cfg");
    let dir_dir = temp_dir(&format!("one-{tag}"));
    let dir = dir_dir.path();
    std::fs::write(dir.join("SB+poonceonces.litmus"), text).expect("file");
    let fake = fake_herd7_printing(tag, lines);
    let (code, out, err) = litmus(
        &[
            "--check",
            "--dir",
            dir.to_str().unwrap(),
            "--lkmm",
            lkmm.to_str().unwrap(),
        ],
        &[("HERD7", &fake)],
    );
    (code, format!("{out}{err}"))
}

/// herd7's `Flag` lines: a flag the header does not name fails the check,
/// one it names passes; an Observation of another test fails.
#[test]
fn check_reads_herd7s_flags_and_the_test_name() {
    let sb = files(&docs_litmus())["SB+poonceonces.litmus"].clone();
    let racy = "Flag data-race\nObservation $n Sometimes 1 3";
    let (code, out) = check_one("flag", &sb, racy);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("SB+poonceonces.litmus: herd7 flags data-race (the header expects no flag)"),
        "{out}"
    );
    let (code, out) = check_one("clean", &sb, "Observation $n Sometimes 1 3");
    assert_eq!(code, 0, "{out}");
    let accepted = sb.replacen(
        " * Result: Sometimes\n",
        " * Result: Sometimes\n * Flag: data-race (accepted)\n",
        1,
    );
    assert_eq!(expected_flags(&accepted), ["data-race"]);
    let (code, out) = check_one("accepted", &accepted, racy);
    assert_eq!(code, 0, "{out}");
    let (code, out) = check_one("name", &sb, "Observation SB+other Sometimes 1 3");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("herd7's Observation names the test SB+other, the file is SB+poonceonces"),
        "{out}"
    );
}

/// Issue 31: docs/weak-memory.md's count of weak-memory results is the
/// number of corpus files whose outcome LKMM allows and SC forbids.
#[test]
fn the_docs_count_of_weak_memory_results_is_the_sc_forbidden_ones() {
    let all = files(&docs_litmus());
    let tests: Vec<&String> = all
        .iter()
        .filter(|(n, _)| n.ends_with(".litmus"))
        .map(|(_, t)| t)
        .collect();
    let sc = |t: &str| {
        t.lines()
            .find_map(|l| l.split("every SC interleaving (DFS): ").nth(1))
            .and_then(|r| Observation::parse(r.split_whitespace().next()?))
    };
    let weak = tests
        .iter()
        .filter(|t| expected(t) == Some(Sometimes) && sc(t) == Some(Never))
        .count();
    let md =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/weak-memory.md"))
            .expect("weak-memory.md")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
    let claim = format!(
        "{weak} of the {} tests are weak-memory results",
        tests.len()
    );
    assert!(
        md.contains(&claim),
        "docs/weak-memory.md does not say {claim:?}"
    );
    assert!(
        tests.iter().all(|t| sc(t).is_some()),
        "a corpus file without an SC line"
    );
}
