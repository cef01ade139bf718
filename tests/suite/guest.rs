//! The VM harness without a VM: the initramfs writer read back, the serial
//! console read with the junk a real one carries, the kernel cache named,
//! and `flushcheck kernels` rejecting bad input in one line and judging a
//! saved console (`--from`). Nothing here boots qemu or builds the probe.

use std::path::PathBuf;

use memcg_flush_model::cli::kernels::{outcome, table};
use memcg_flush_model::guest::{cache, console, cpio, plan_json};
use memcg_flush_model::oracle::spec::{scenarios, SCENARIOS_JSON};
use memcg_flush_model::oracle::Verdict;

use crate::common;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flushcheck-guest-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The offsets of every header in a newc archive, walked by hand.
fn header_offsets(bytes: &[u8]) -> Vec<usize> {
    let hex = |at: usize, i: usize| {
        let s = std::str::from_utf8(&bytes[at + 6 + 8 * i..at + 14 + 8 * i]).unwrap();
        usize::from_str_radix(s, 16).unwrap()
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        assert_eq!(&bytes[at..at + 6], b"070701", "magic at {at}");
        out.push(at);
        let (size, namesize) = (hex(at, 6), hex(at, 11));
        let name = &bytes[at + 110..at + 110 + namesize];
        assert_eq!(name.last(), Some(&0), "name NUL-terminated at {at}");
        at = (at + 110 + namesize).next_multiple_of(4) + size;
        at = at.next_multiple_of(4);
    }
    assert_eq!(at, bytes.len());
    out
}

#[test]
fn the_initramfs_reads_back() {
    // An odd size, so that the data needs padding.
    let probe: Vec<u8> = (0..4099u32).map(|i| (i * 7) as u8).collect();
    let plan = plan_json(&["step".into(), "slab".into()]);
    assert_eq!(plan, r#"{"scenarios":["step","slab"]}"#);
    let bytes = cpio::initrd(&probe, &plan, Some(SCENARIOS_JSON));
    assert_eq!(bytes.len() % 4, 0);
    let entries = cpio::parse(&bytes).expect("parses");
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "dev",
            "dev/console",
            "dev/null",
            "init",
            "plan.json",
            "scenarios.json"
        ]
    );
    let by = |n: &str| entries.iter().find(|e| e.name == n).unwrap();
    assert_eq!(by("dev").mode, 0o040755);
    assert_eq!(by("dev/console").mode, 0o020600);
    assert_eq!(by("dev/console").rdev, (5, 1));
    assert_eq!(by("init").mode, 0o100755);
    assert_eq!(by("init").data, probe);
    assert_eq!(by("plan.json").data, plan.as_bytes());
    assert_eq!(by("scenarios.json").data.len(), SCENARIOS_JSON.len());
    // Every header 4-byte aligned, the last one the trailer.
    let offsets = header_offsets(&bytes);
    assert_eq!(offsets.len(), 7);
    assert!(offsets.iter().all(|o| o % 4 == 0), "{offsets:?}");
    let last = *offsets.last().unwrap();
    assert_eq!(&bytes[last + 110..last + 120], b"TRAILER!!!");
    // Without a scenario file there is none in the archive.
    let bare = cpio::parse(&cpio::initrd(b"x", "{}", None)).unwrap();
    assert!(bare.iter().all(|e| e.name != "scenarios.json"));
}

#[test]
fn every_name_and_data_length_pads_to_four_bytes() {
    for len in 1..=9 {
        let name = "n".repeat(len);
        let entries: Vec<cpio::Entry> = (0..4)
            .map(|d| cpio::Entry::file(&name, 0o644, vec![b'a'; len + d]))
            .collect();
        let bytes = cpio::write(&entries);
        assert!(header_offsets(&bytes).iter().all(|o| o % 4 == 0));
        assert_eq!(cpio::parse(&bytes).unwrap(), entries, "name length {len}");
    }
}

#[test]
fn a_damaged_archive_is_an_error() {
    let bytes = cpio::initrd(b"probe", "{}", None);
    let e = cpio::parse(&bytes[..bytes.len() - 8]).unwrap_err();
    assert!(e.contains("TRAILER!!!") || e.contains("offset"), "{e}");
    let mut bad = bytes.clone();
    bad[0] = b'1';
    assert!(cpio::parse(&bad).unwrap_err().contains("magic at offset 0"));
}

const HELLO: &str = r#"FCP {"hello":{"release":"6.12.107+deb12-amd64","cpus":2,"kprobes":["cgroup_rstat_flush"],"thp":"always [madvise] never"}}"#;

/// A console as qemu prints it: firmware escape codes, `\r\n`, kernel
/// messages between and inside the probe's lines, `FCT` diagnosis lines.
fn console_text(end: bool) -> String {
    let mut t = String::from(
        "\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16.2)\r\n\r\nBooting from ROM...\r\n",
    );
    t.push_str(&format!("\x1bc\x1b[?7l\x1b[2J{HELLO}\r\n"));
    t.push_str("[    1.234567] random: crng init done\r\n");
    t.push_str("FCP {\"start\":{\"s\":\"step\",\"anon\":1,\"thp\":0,\"filp\":184}}\r\n");
    t.push_str("FCT mod_memcg_state m=0xffff idx=3 val=1\r\n");
    t.push_str(r#"FCP {"read":{"s":"step","op":3,"n":1,"cg":"a","t":6203,"anon":0,"shmem":0,"slab":0,"cur":64}}"#);
    t.push_str("\r\n");
    // A kernel message inside a probe line: that line is lost, counted.
    t.push_str(r#"FCP {"read":{"s":"step","op":3,"n":2,"cg":"a","t":9[    2.0] hrtimer: interrupt took 1 ns"#);
    t.push_str("\r\n");
    // Junk after a whole record is ignored.
    t.push_str(r#"junk FCP {"read":{"s":"step","op":3,"n":3,"cg":"a","t":9790,"anon":64,"shmem":0,"slab":0,"cur":64,"flushed":1}}[    2.1] tail"#);
    t.push_str("\r\n");
    t.push_str("FCP {\"done\":{\"s\":\"step\",\"ok\":true,\"t\":2318325}}\r\n");
    if end {
        t.push_str("FCP {\"end\":true}\r\n[    8.264501] reboot: Power down\r\n");
    }
    t
}

#[test]
fn the_console_is_read_through_junk() {
    let c = console::parse(&console_text(true)).expect("a whole run");
    assert!(c.started && c.ended && c.fatal.is_none());
    assert_eq!(c.obs.hello.release, "6.12.107+deb12-amd64");
    assert_eq!(c.obs.hello.cpus, 2);
    assert_eq!(c.obs.starts.len(), 1);
    assert_eq!(c.obs.starts[0].filp, 184);
    let ns: Vec<usize> = c.obs.reads.iter().map(|r| r.n).collect();
    assert_eq!(ns, [1, 3]);
    assert_eq!(c.obs.reads[1].flushed, Some(1));
    assert_eq!(c.obs.done.len(), 1);
    assert_eq!(c.garbled.len(), 1, "{:?}", c.garbled);
    assert!(c.garbled[0].contains("hrtimer"));
}

#[test]
fn a_console_without_its_end_or_hello_is_an_error_with_its_tail() {
    let e = console::parse(&console_text(false)).unwrap_err();
    assert!(e.contains("did not finish"), "{e}");
    assert!(e.contains("1 of its scenarios done"), "{e}");
    assert!(e.contains("| FCP {\"done\""), "the last lines: {e}");
    assert!(!e.contains('\x1b') && !e.contains('\r'), "cleaned: {e:?}");
    // Still readable for what it holds.
    assert_eq!(console::read(&console_text(false)).obs.done.len(), 1);

    let lines: String = (0..40)
        .map(|i| format!("[ {i}.0] Kernel panic line {i}\r\n"))
        .collect();
    let e = console::parse(&lines).unwrap_err();
    assert!(e.contains("never started"), "{e}");
    assert!(
        e.contains("line 39") && e.contains("line 20") && !e.contains("line 19"),
        "20 lines: {e}"
    );

    let fatal =
        format!("{HELLO}\nFCP {{\"fatal\":\"no cgroup v2 hierarchy at /sys/fs/cgroup\"}}\n");
    let e = console::parse(&fatal).unwrap_err();
    assert!(
        e.contains("the probe failed: no cgroup v2 hierarchy"),
        "{e}"
    );
}

#[test]
fn kernels_are_named_by_major_minor() {
    assert_eq!(cache::short_name("6.1.0-57-amd64").as_deref(), Some("6.1"));
    assert_eq!(
        cache::short_name("6.12.107+deb12-amd64").as_deref(),
        Some("6.12")
    );
    assert_eq!(cache::short_name("vmlinux"), None);
    let dir = temp_dir("cache");
    let boot = dir.join("img/boot");
    std::fs::create_dir_all(&boot).unwrap();
    for r in ["6.12.107+deb12-amd64", "6.1.0-57-amd64", "6.1.0-58-amd64"] {
        std::fs::write(boot.join(format!("vmlinuz-{r}")), "x").unwrap();
    }
    std::fs::write(boot.join("config-6.1.0-57-amd64"), "x").unwrap();
    let ks = cache::find(&dir).unwrap();
    let names: Vec<&str> = ks.iter().map(|k| k.name.as_str()).collect();
    // Two images of 6.1: each goes by its release.
    assert_eq!(names, ["6.1.0-57-amd64", "6.1.0-58-amd64", "6.12"]);
    let picked = cache::select(&ks, &["6.12".into()]).unwrap();
    assert_eq!(picked[0].vmlinuz, boot.join("vmlinuz-6.12.107+deb12-amd64"));
    let e = cache::select(&ks, &["5.10".into()]).unwrap_err();
    assert!(
        e.contains("unknown kernel \"5.10\": expected one of 6.1.0-57-amd64"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `flushcheck kernels ARGS` fails with exit 2 and one line.
fn error_of(args: &[&str]) -> String {
    let mut all = vec!["kernels"];
    all.extend_from_slice(args);
    let out = common::flushcheck(&all);
    assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_eq!(
        out.stderr.trim_end().lines().count(),
        1,
        "one line: {}",
        out.stderr
    );
    out.stderr
}

#[test]
fn bad_input_is_one_line_naming_it() {
    let e = error_of(&["--scenario", "step,nope"]);
    assert!(
        e.contains("unknown scenario \"nope\": expected one of quiet, step, step-reopen"),
        "{e}"
    );
    let e = error_of(&["--cache", "/nonexistent/kcache"]);
    assert!(e.contains("no kernels in /nonexistent/kcache"), "{e}");
    assert!(
        e.contains("probe/fetch-kernels.sh /nonexistent/kcache"),
        "{e}"
    );
    let dir = temp_dir("cli");
    std::fs::create_dir_all(dir.join("img/boot")).unwrap();
    std::fs::write(dir.join("img/boot/vmlinuz-6.1.0-57-amd64"), "x").unwrap();
    let e = error_of(&["--cache", dir.to_str().unwrap(), "--kernel", "6.6"]);
    assert!(
        e.contains("unknown kernel \"6.6\": expected one of 6.1"),
        "{e}"
    );
    assert!(error_of(&["--cpus", "0"]).contains("--cpus 0"));
    assert!(error_of(&["--timeout", "0"]).contains("--timeout 0"));
    assert!(error_of(&["--accel", "xen"]).contains("xen"));
    assert!(error_of(&["--host", "--kernel", "6.1"]).contains("--host"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_saved_console_that_did_not_end_fails_every_scenario_it_did_not_finish() {
    let dir = temp_dir("from");
    std::fs::write(dir.join("6.12-2.txt"), console_text(false)).unwrap();
    let out = common::flushcheck(&["kernels", "--from", dir.to_str().unwrap(), "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v = crate::schemas::data(&out.stdout, "kernels");
    let boot = &v["boots"][0];
    assert_eq!(boot["kernel"], "6.12");
    assert_eq!(boot["cpus"], 2);
    assert!(boot["error"].as_str().unwrap().contains("did not finish"));
    assert_eq!(boot["garbled"], 1);
    let rows = boot["rows"].as_array().unwrap();
    assert_eq!(rows.len(), scenarios().len(), "a row per scenario");
    for r in rows.iter().filter(|r| r["scenario"] != "step") {
        assert_eq!(r["verdict"], "failed", "{r}");
        assert!(
            r["note"].as_str().unwrap().contains("the boot failed"),
            "{r}"
        );
    }
    let text = common::flushcheck(&["kernels", "--from", dir.to_str().unwrap()]);
    assert!(text
        .stdout
        .contains("boot 6.12 at 2 vCPUs FAILED: the probe did not finish"));
    assert!(
        text.stdout.contains("1 saved console (1 FAILED)"),
        "{}",
        text.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_table_numbers_its_notes() {
    let mut o = outcome(
        "6.12",
        2,
        &console_text(false),
        &["slab".into(), "periodic".into()],
    );
    assert!(o.error.is_some());
    assert!(o.rows.iter().all(|r| r.verdict == Verdict::Failed));
    o.rows[1].note = "second".into();
    let t = table(&o.rows.iter().collect::<Vec<_>>());
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("kernel"), "{t}");
    assert!(
        lines[1].contains("slab") && lines[1].ends_with("FAILED [1]"),
        "{t}"
    );
    assert!(lines[2].ends_with("FAILED [2]"), "{t}");
    assert!(
        t.contains("notes:\n  [1] the boot failed before it ended") && t.contains("  [2] second"),
        "{t}"
    );
}
