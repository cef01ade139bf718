//! The litmus corpus, docs/litmus/ (issues 20 and 40): the checked-in
//! files are what `flushcheck litmus --out` generates, each is in the
//! syntax herd7 parses and follows tools/memory-model/scripts/
//! judgelitmus.sh's Result/DATARACE rules (re-implemented here, herd7 not
//! being installable), no declared race is a plain access the analysis
//! finds race-free, the model agrees with LKMM's expected result on every
//! finding and fix except where LKMM's answer rests on a data race, and
//! `flushcheck litmus --check` judges herd7's answer by the same rules
//! (shown with a stand-in herd7) or, without herd7, says so in one line and
//! exits 2.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use memcg_flush_model::cli::litmus::{corpus, corpus::write};
use memcg_flush_model::explore::quiet_panics;
use memcg_flush_model::report::litmus::herd::{check_syntax, observations, plain_races};
use memcg_flush_model::report::litmus::judge::{
    declared_flags, expected, file_problems, judge, outcome, predicts_race, Passed,
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
    // SC DFS); a fix's is found by no search; where LKMM allows what loom
    // does not, LKMM's answer rests on a data race (plain accesses, which
    // loom runs as relaxed atomics), and the file says DATARACE.
    let findings: Vec<_> = entries.iter().filter(|e| e.group == "findings").collect();
    assert!(findings.len() >= 6, "{} findings", findings.len());
    let (mut witnesses, mut fixes, mut racy_only) = (0, 0, 0);
    for e in findings {
        let t = e.prog.target();
        let obs: Vec<Observation> = e.measured.iter().map(|m| m.observation(&t)).collect();
        match e.prog.expected {
            Some(Sometimes) if obs[1] == Sometimes => {
                assert_eq!(obs[2], Never, "{}: {obs:?}", e.prog.name);
                witnesses += 1;
            }
            Some(Sometimes) => {
                assert_eq!(obs, [Never, Never, Never], "{}", e.prog.name);
                assert!(
                    e.prog.datarace,
                    "{}: LKMM's Sometimes, loom's Never, no race",
                    e.prog.name
                );
                racy_only += 1;
            }
            Some(Never) => {
                assert_eq!(obs, [Never, Never, Never], "{}", e.prog.name);
                fixes += 1;
            }
            o => panic!("{}: expected {o:?}", e.prog.name),
        }
    }
    assert!(
        witnesses >= 5 && fixes >= 5 && racy_only >= 1,
        "{witnesses} witnesses, {fixes} fixes, {racy_only} racy only"
    );
    // No flag is an artefact: a declared race is a plain access the crate's
    // analysis (which sees only locks, so names every race herd7 can flag)
    // finds racing, and a test it finds racing that is declared race-free
    // says why in its header.
    for e in &entries {
        let races = plain_races(&e.prog);
        let text = e.prog.render().expect("rendered");
        if e.prog.datarace {
            assert!(
                !races.is_empty(),
                "{}: DATARACE, but no plain race",
                e.prog.name
            );
        } else if !races.is_empty() {
            assert!(
                text.contains(" * No data race: "),
                "{}: plain accesses to {races:?} may race and the header does not say why not",
                e.prog.name
            );
        }
    }
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
    // judgelitmus.sh reads the first `Result:` line's third word, and
    // DATARACE anywhere after `Result: ` on such a line.
    let racy = "C x\n\n(*\n * Result: Sometimes DATARACE\n *)\n";
    assert_eq!(outcome(racy), Some("Sometimes"));
    assert!(predicts_race(racy));
    assert!(!predicts_race(
        "C x\n\n(*\n * Result: Sometimes\n * DATARACE\n *)\n"
    ));
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
    let echo: Vec<String> = lines.lines().map(|l| format!("echo \"{l}\"")).collect();
    fake_herd7_running(tag, &echo.join("; "))
}

/// A stand-in for herd7 that runs the shell `commands` for every test,
/// with `$n` its test name, `$w` the word of its first `Result:` line and
/// `$r` set if that line says DATARACE (shell builtins only: the tests run
/// it with an empty PATH).
fn fake_herd7_running(tag: &str, commands: &str) -> PathBuf {
    // Kept: the caller runs it after this returns.
    let dir = temp_dir(&format!("fake-{tag}")).keep();
    let path = dir.join("herd7");
    let script = format!(
        "#!/bin/sh\nfor f; do case \"$f\" in *.litmus)\n\
         read -r c n < \"$f\"; w=; r=\n\
         while IFS= read -r l; do case \"$l\" in \" * Result: \"*)\n\
         if [ -z \"$w\" ]; then set -- $l; w=$3; case \"$l\" in *DATARACE*) r=1;; esac; fi;;\n\
         esac; done < \"$f\"\n\
         {commands};; esac; done\n"
    );
    std::fs::write(&path, script).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A stand-in for herd7 that answers what each file expects, its
/// `Result:` word, and flags a data race where the file says DATARACE
/// (`flags` "as-declared"), never ("never"), or always ("always").
fn herd7_answering(tag: &str, flags: &str) -> PathBuf {
    let flag = match flags {
        "as-declared" => "if [ -n \"$r\" ]; then echo Flag data-race; fi",
        "never" => "true",
        _ => "echo Flag data-race",
    };
    fake_herd7_running(tag, &format!("echo \"Observation $n $w 1 3\"; {flag}"))
}

/// `litmus --check` over `dir` with the stand-in `fake`.
fn check_dir(dir: &Path, fake: &Path) -> (i32, String) {
    // One LKMM directory per stand-in: tests run in parallel.
    let tag = fake
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lkmm_dir = temp_dir(&format!("lkmm-{tag}"));
    let lkmm = lkmm_dir.path();
    std::fs::write(lkmm.join("linux-kernel.cfg"), "").expect("cfg");
    let (code, out, err) = litmus(
        &[
            "--check",
            "--dir",
            dir.to_str().unwrap(),
            "--lkmm",
            lkmm.to_str().unwrap(),
        ],
        &[("HERD7", fake)],
    );
    (code, format!("{out}{err}"))
}

/// A herd7 that answers every file of docs/litmus as the file expects
/// passes them all; one that answers Sometimes for every test fails the
/// tests expecting Never, unless it flags a data race (judgelitmus.sh
/// forgives a racy test's verdict), and the race-free ones for the flag.
#[test]
fn check_judges_herd7s_output_by_judgelitmus_rules() {
    let dir = docs_litmus();
    let total = files(&dir)
        .keys()
        .filter(|n| n.ends_with(".litmus"))
        .count();
    let (code, out) = check_dir(&dir, &herd7_answering("expected", "as-declared"));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "{total} of {total} tests pass judgelitmus.sh's rules and the file checks"
        )),
        "{out}"
    );
    assert!(
        out.contains(
            "SB+poplainplain+poplainonce+rstat-tree.litmus: Sometimes DATARACE, as expected"
        ),
        "{out}"
    );
    // A herd7 that flags no race: every DATARACE file fails, as
    // judgelitmus.sh fails it.
    let racy = files(&dir).values().filter(|t| predicts_race(t)).count();
    let (code, out) = check_dir(&dir, &herd7_answering("no-flags", "never"));
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out.matches("!!! Predicted data race not modeled").count(),
        racy,
        "{out}"
    );
    // A herd7 that flags every test: every race-free file fails.
    let (code, out) = check_dir(&dir, &herd7_answering("all-flags", "always"));
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out.matches("!!! Unexpected data race modeled").count(),
        total - racy,
        "{out}"
    );
    // Sometimes for every test: the tests expecting Never mismatch.
    let (code, out) = check_dir(&dir, &fake_herd7("Sometimes"));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("SB+fencembonceonces.litmus: !!! Unexpected non-Never verification"),
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

/// `litmus --check` over the one file `text`, saved as `file`, with a
/// stand-in herd7 printing `lines`.
fn check_one(tag: &str, file: &str, text: &str, lines: &str) -> (i32, String) {
    let dir_dir = temp_dir(&format!("one-{tag}"));
    let dir = dir_dir.path();
    std::fs::write(dir.join(file), text).expect("file");
    check_dir(dir, &fake_herd7_printing(tag, lines))
}

/// The project's own checks beside judgelitmus.sh's: a flag other than
/// data-race fails unless the header names it (` * Flag:`); a test whose
/// `C` line differs from its file name fails, whatever herd7 echoes (it
/// echoes the `C` line); an Observation of another test fails; a declared
/// race herd7 does not raise fails (judgelitmus.sh's "Predicted data race
/// not modeled").
#[test]
fn check_reads_herd7s_flags_and_the_test_name() {
    const SB: &str = "SB+poonceonces.litmus";
    let sb = files(&docs_litmus())[SB].clone();
    let clean = "Observation $n Sometimes 1 3";
    let (code, out) = check_one("clean", SB, &sb, clean);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("SB+poonceonces.litmus: Sometimes, as expected"),
        "{out}"
    );
    // A data race the header does not declare.
    let racy = "Flag data-race\nObservation $n Sometimes 1 3";
    let (code, out) = check_one("flag", SB, &sb, racy);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("SB+poonceonces.litmus: !!! Unexpected data race modeled"),
        "{out}"
    );
    // Declared, and raised: passes; declared, not raised: fails.
    let declared = sb.replacen(
        " * Result: Sometimes\n",
        " * Result: Sometimes DATARACE\n",
        1,
    );
    let (code, out) = check_one("declared", SB, &declared, racy);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Sometimes DATARACE, as expected"), "{out}");
    let (code, out) = check_one("not-raised", SB, &declared, clean);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("SB+poonceonces.litmus: !!! Predicted data race not modeled"),
        "{out}"
    );
    // Another flag: fails unless the header names it.
    let mixed = "Flag mixed-accesses\nObservation $n Sometimes 1 3";
    let (code, out) = check_one("mixed", SB, &sb, mixed);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("herd7 flags mixed-accesses"), "{out}");
    let named = sb.replacen(
        " * Result: Sometimes\n",
        " * Result: Sometimes\n * Flag: mixed-accesses (accepted)\n",
        1,
    );
    assert_eq!(declared_flags(&named), ["mixed-accesses"]);
    let (code, out) = check_one("named", SB, &named, mixed);
    assert_eq!(code, 0, "{out}");
    // herd7 echoes the `C` line, so a file renamed without its `C` line
    // passes herd7's name but not the file's.
    let (code, out) = check_one("renamed", "SB+renamed.litmus", &sb, clean);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "SB+renamed.litmus: the test is named SB+poonceonces, the file SB+renamed.litmus"
        ),
        "{out}"
    );
    let (code, out) = check_one("name", SB, &sb, "Observation SB+other Sometimes 1 3");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "herd7's Observation names the test SB+other, the file's C line SB+poonceonces"
        ),
        "{out}"
    );
}

/// judgelitmus.sh's rules, each branch: DATARACE against `Flag
/// data-race` both ways, the missing Observation (unknown macro, timeout,
/// anything else), DEADLOCK and the unexpected deadlock, the expected word,
/// the mismatch forgiven for a racy test, and a file without `Result:`.
#[test]
fn judge_follows_judgelitmus_sh() {
    let file = |result: &str| format!("C t\n\n(*\n * Result: {result}\n *)\n\n{{}}\n");
    let obs = |o: &str| format!("Test t Allowed\nObservation t {o}\n");
    let racy = |o: &str| format!("Flag data-race\n{}", obs(o));
    assert_eq!(
        judge(&file("Never"), &obs("Never 0 3")),
        Ok(Passed::AsExpected)
    );
    assert_eq!(
        judge(&file("Sometimes DATARACE"), &racy("Sometimes 1 3")),
        Ok(Passed::AsExpected)
    );
    assert_eq!(
        judge(&file("Sometimes DATARACE"), &obs("Sometimes 1 3")),
        Err("!!! Predicted data race not modeled".into())
    );
    assert_eq!(
        judge(&file("Sometimes"), &racy("Sometimes 1 3")),
        Err("!!! Unexpected data race modeled".into())
    );
    assert_eq!(
        judge(&file("Never DATARACE"), &racy("Sometimes 1 3")),
        Ok(Passed::Forgiven)
    );
    assert_eq!(
        judge(&file("Never"), &obs("Sometimes 1 3")),
        Err(" !!! Unexpected non-Never verification".into())
    );
    assert_eq!(
        judge(&file("DEADLOCK"), &obs("Never 0 0")),
        Ok(Passed::AsExpected)
    );
    assert_eq!(
        judge(&file("DEADLOCK"), &obs("Never 0 3")),
        Err(" !!! Unexpected non-DEADLOCK verification".into())
    );
    assert_eq!(
        judge(&file("Never"), &obs("Never 0 0")),
        Err(" !!! Unexpected non-Never deadlock".into())
    );
    assert_eq!(
        judge(&file("Maybe"), &obs("Sometimes 1 3")),
        Ok(Passed::AsExpected)
    );
    assert_eq!(
        judge(
            &file("Never"),
            "File \"t.litmus\", line 9: Unknown macro foo (User error)\n"
        ),
        Err(" !!! Current LKMM version does not know \"foo\"".into())
    );
    assert_eq!(
        judge(&file("Never"), "Command exited with non-zero status 124\n"),
        Err(" !!! Timeout".into())
    );
    assert_eq!(
        judge(&file("Never"), "garbage\n"),
        Err(" !!! Verification error".into())
    );
    // No Result line: the word is "specified", which no Observation has.
    assert_eq!(
        judge("C t\n\n{}\n", &obs("Never 0 3")),
        Err(" !!! Unexpected non-specified verification".into())
    );
}

/// Issue 40: every file of docs/litmus passes judgelitmus.sh's rules
/// against the output herd7 gives when LKMM answers as the file says (its
/// `Result:` word, and `Flag data-race` if and only if it says DATARACE),
/// names its test as its file, and has one `Result:` line; and the old
/// `Flag: data-race` header lines are gone.
#[test]
fn every_corpus_file_follows_judgelitmus_sh() {
    let all = files(&docs_litmus());
    let mut n = 0;
    for (name, text) in all.iter().filter(|(n, _)| n.ends_with(".litmus")) {
        let word = outcome(text).unwrap_or_else(|| panic!("{name}: no Result line"));
        assert!(
            ["Never", "Sometimes", "Always"].contains(&word),
            "{name}: Result word {word}"
        );
        let results = text
            .lines()
            .filter(|l| l.starts_with(" * Result: ") || l.starts_with("(* Result: "))
            .count();
        assert_eq!(results, 1, "{name}: {results} Result lines");
        let test = name.trim_end_matches(".litmus");
        let mut out = format!("Test {test} Allowed\nObservation {test} {word} 1 3\n");
        if predicts_race(text) {
            out = format!("Flag data-race\n{out}");
        }
        assert_eq!(judge(text, &out), Ok(Passed::AsExpected), "{name}");
        assert_eq!(
            file_problems(name, text, &out),
            Vec::<String>::new(),
            "{name}"
        );
        assert!(declared_flags(text).is_empty(), "{name}: a Flag: line");
        n += 1;
    }
    assert!(n >= 40, "{n} files");
}

/// Issues 31 and 40: docs/weak-memory.md's and docs/litmus/README's
/// figures are the corpus's: the count of weak-memory results (files whose
/// outcome LKMM allows and SC forbids), of files, of findings and shapes,
/// and of files that declare a data race.
#[test]
fn the_docs_counts_are_the_corpus_counts() {
    let all = files(&docs_litmus());
    let tests: Vec<(&String, &String)> =
        all.iter().filter(|(n, _)| n.ends_with(".litmus")).collect();
    let sc = |t: &str| {
        t.lines()
            .find_map(|l| l.split("every SC interleaving (DFS): ").nth(1))
            .and_then(|r| Observation::parse(r.split_whitespace().next()?))
    };
    let weak = tests
        .iter()
        .filter(|(_, t)| expected(t) == Some(Sometimes) && sc(t) == Some(Never))
        .count();
    let racy = tests.iter().filter(|(_, t)| predicts_race(t)).count();
    let findings = tests
        .iter()
        .filter(|(n, _)| n.contains("rstat-") || n.ends_with("+trigger.litmus"))
        .count();
    let words = |f: &str| {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(f))
            .expect("readable")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let md = words("docs/weak-memory.md");
    for claim in [
        format!(
            "{weak} of the {} tests are weak-memory results",
            tests.len()
        ),
        format!("{racy} of the {} tests declare a data race", tests.len()),
    ] {
        assert!(
            md.contains(&claim),
            "docs/weak-memory.md does not say {claim:?}"
        );
    }
    for stale in [
        "44 of 44",
        "every `explain` export the docs' commands print parsed and gave `Sometimes`",
    ] {
        assert!(
            !md.contains(stale),
            "docs/weak-memory.md still says {stale:?}"
        );
    }
    let readme = words("docs/litmus/README");
    let claim = format!(
        "{} tests, {findings} for the weak-memory findings and their fixes, {} classic shapes; {racy} expect herd7 to flag a data race",
        tests.len(),
        tests.len() - findings
    );
    assert!(
        readme.contains(&claim),
        "docs/litmus/README does not say {claim:?}"
    );
    assert!(
        readme.contains("judgelitmus.sh"),
        "the README does not say how --check judges"
    );
    assert!(
        tests.iter().all(|(_, t)| sc(t).is_some()),
        "a corpus file without an SC line"
    );
}
