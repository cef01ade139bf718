//! Every finding's mail (`flushcheck report --finding ID`) in kernel form
//! (report::mail::form): its length bound, a diff where it proposes a
//! change, `Fixes:` only on patches, no `[RFC]`, `In-Reply-To:` on
//! replies, linux-mm among the recipients, no line over 80 columns, none
//! of the model's own words, every quoted kernel function present in the
//! release it names. The diffs apply to a kernel tree when one is here
//! (skipped with a message otherwise) and the generators work on small
//! synthetic files; the c12 mail's figures are the recorded consoles'.
//! The model's whole report (`--model-report`) keeps 80 columns and the
//! kernel's statements.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use memcg_flush_model::protocol::catalogue;
use memcg_flush_model::protocol::findings::{all, by_id, maintainers};
use memcg_flush_model::publish::kdiff::{self, Edit, Tree};
use memcg_flush_model::publish::mail::full::{self, long_lines, Depth};
use memcg_flush_model::publish::mail::text::internal_words;
use memcg_flush_model::publish::mail::{
    self, c12, comment, death, evidence, form, names, Ctx, Diff, Kind,
};

const BUDGET: Duration = Duration::from_secs(120);

fn ctx() -> Ctx {
    Ctx::default()
}

#[test]
fn every_mail_is_in_kernel_form() {
    let ids: Vec<&str> = all().iter().map(|f| f.id).collect();
    let mut failures = Vec::new();
    for f in all() {
        let m = mail::for_finding(&f, &ctx()).expect("mail");
        failures.extend(form::problems(&m, &ids));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The kinds are what the findings call for: patches with a diff for the
/// bug and the comment, a stable-only patch for the death loss, replies
/// in the threads of known behaviour and of review claims.
#[test]
fn each_finding_gets_the_mail_its_kind_calls_for() {
    let kind = |id: &str| mail::for_finding(&by_id(id).unwrap(), &ctx()).unwrap();
    let c12m = kind("c12-lost-flush");
    assert_eq!(c12m.kind, Kind::Patch);
    assert!(c12m
        .trailers
        .iter()
        .any(|t| t.starts_with("Fixes: 60cada258dfe (\"memcg: optimize memcg_rstat_updated\")")));
    assert!(c12m.subject.starts_with("[PATCH] memcg: "));
    let d = kind("death-lost-page");
    assert_eq!(d.kind, Kind::StablePatch);
    assert_eq!(d.to, ["stable@vger.kernel.org"]);
    for p in [
        "linux-mm@kvack.org",
        "cgroups@vger.kernel.org",
        "Shakeel Butt",
    ] {
        assert!(
            d.cc.iter().any(|c| c.contains(p)),
            "death Cc: {p}: {:?}",
            d.cc
        );
    }
    assert!(!d
        .cc
        .iter()
        .any(|c| c.contains("akpm") || c.contains("linux-kernel@")));
    for lts in death::LTS {
        assert!(
            d.body.contains(&format!("{lts}.y")),
            "death: {lts}.y not named"
        );
    }
    for stall in [
        "NMI",
        "preempting the vCPU",
        "PREEMPT_RT",
        "interrupts disabled",
    ] {
        assert!(d.body.contains(stall), "death: {stall:?} not named");
    }
    assert_eq!(kind("c1-bound").kind, Kind::Patch);
    for id in [
        "tree-sb-lost-update",
        "weak-triggered-read",
        "quiescent-read-zero",
        "c18-bound",
    ] {
        let m = kind(id);
        assert_eq!(m.kind, Kind::Reply, "{id}");
        assert!(m.prose_lines() <= 10, "{id}: {} lines", m.prose_lines());
        assert!(m.trailers.is_empty(), "{id}: trailers on a reply");
    }
    for id in ["b7-skipped-flusher", "c10-bound"] {
        assert_eq!(kind(id).kind, Kind::NoMail, "{id}");
    }
    // The author of the disputed claim is a recipient.
    let sb = kind("tree-sb-lost-update");
    assert!(sb.to[0].contains("shakeel.butt@linux.dev"));
    let c18 = kind("c18-bound");
    assert!(c18.to[0].contains("longman@redhat.com"));
}

/// The checker catches what it is for.
#[test]
fn the_form_checks_can_fail() {
    let ids = ["c1-bound"];
    assert_eq!(internal_words("as C12 says", &ids), vec!["C12"]);
    assert_eq!(internal_words("the twin flushes", &ids), vec!["twin"]);
    assert_eq!(internal_words("see c1-bound", &ids), vec!["c1-bound"]);
    assert!(internal_words("loom's C11 model, v6.17, 8d59d2214c23", &ids).is_empty());
    assert_eq!(
        form::functions("flush (1) via foo_bar() and 2) baz(x) memory.stat"),
        ["foo_bar", "baz"]
    );
    let f = by_id("tree-sb-lost-update").unwrap();
    let good = mail::for_finding(&f, &ctx()).unwrap();
    assert!(form::problems(&good, &ids).is_empty());
    let mut bad = good.clone();
    bad.trailers.push("Fixes: 123456789012 (\"x\")".into());
    bad.subject = "[RFC] x".into();
    bad.cc.retain(|c| c != "linux-mm@kvack.org");
    bad.body.push_str("made_up_function() is called. C12.\n");
    bad.body.push_str(&"more words\n".repeat(12));
    let p = form::problems(&bad, &ids).join("\n");
    for want in [
        "Fixes: on a Reply",
        "[RFC] in the subject",
        "a reply without In-Reply-To: or Re:",
        "linux-mm is not among",
        "made_up_function() is not a function of v6.17.0",
        "uses [\"C12\"]",
        "lines of prose, more than 10",
    ] {
        assert!(p.contains(want), "{want:?} not caught:\n{p}");
    }
    let mut nodiff = mail::for_finding(&by_id("c1-bound").unwrap(), &ctx()).unwrap();
    nodiff.diff = None;
    assert!(form::problems(&nodiff, &ids)
        .join("\n")
        .contains("a Patch without a diff"));
}

/// `To:` comes from the MAINTAINERS entries of the files a fix touches.
#[test]
fn recipients_follow_the_files() {
    let (to, cc, titles) = maintainers::recipients(&["mm/memcontrol.c"]);
    assert_eq!(
        titles,
        vec!["CONTROL GROUP - MEMORY RESOURCE CONTROLLER (MEMCG)"]
    );
    assert!(to.iter().any(|t| t.contains("shakeel.butt@linux.dev")));
    assert!(cc.iter().any(|c| c == "linux-mm@kvack.org"));
    let (to, _, titles) = maintainers::recipients(&["kernel/cgroup/rstat.c"]);
    assert_eq!(titles, vec!["CONTROL GROUP (CGROUP)"]);
    assert!(to.iter().any(|t| t.contains("tj@kernel.org")));
}

/// A scratch directory under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flushcheck-mail-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Whether `patches` apply, in order, to the tree at `root`: `git apply
/// --check`, else `patch --dry-run`; `None` when neither tool is here.
fn applies(root: &Path, patches: &[&str]) -> Option<Result<(), String>> {
    let dir = scratch("patches");
    let files: Vec<PathBuf> = patches
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f = dir.join(format!("{i}.diff"));
            std::fs::write(&f, p).expect("write patch");
            f
        })
        .collect();
    let git = Command::new("git")
        .args(["apply", "--check"])
        .args(&files)
        .current_dir(root)
        .output();
    let out = match git {
        Ok(o) => o,
        Err(_) => {
            if patches.len() != 1 {
                return None;
            }
            Command::new("patch")
                .args(["-p1", "--dry-run", "-i"])
                .arg(&files[0])
                .current_dir(root)
                .output()
                .ok()?
        }
    };
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    })
}

/// The diffs apply to the newest tree of their series when one is here
/// (`$FLUSHCHECK_KERNEL_SOURCE`, the kernel cache's src/, /usr/src); c12's
/// and c1's apply together, c1 on top.
#[test]
fn the_patches_apply_to_a_kernel_tree_when_one_is_here() {
    let diff = |id: &str| {
        let m = mail::for_finding(&by_id(id).unwrap(), &ctx()).unwrap();
        match m.diff {
            Some(Diff::Made { edits, .. }) => {
                Some(edits.iter().map(Edit::diff).collect::<String>())
            }
            Some(Diff::Missing { why, .. }) => {
                assert!(why.contains("apt-get install"), "{id}: {why}");
                None
            }
            None => panic!("{id}: no diff"),
        }
    };
    match Tree::find(None, &c12::SERIES) {
        Ok(t) => {
            let (a, b) = (diff("c12-lost-flush").unwrap(), diff("c1-bound").unwrap());
            match applies(&t.root, &[&a, &b]) {
                Some(r) => r.unwrap_or_else(|e| panic!("c12 + c1 on {}: {e}", t.release)),
                None => eprintln!("skipped: neither git nor patch is here"),
            }
        }
        Err(e) => eprintln!("skipped the 7.3 patches: {e}"),
    }
    match Tree::find(None, &death::SERIES) {
        Ok(t) => {
            let d = diff("death-lost-page").unwrap();
            if let Some(r) = applies(&t.root, &[&d]) {
                r.unwrap_or_else(|e| panic!("death on {}: {e}", t.release));
            }
        }
        Err(e) => eprintln!("skipped the 6.12 patch: {e}"),
    }
}

/// A small file shaped as the kernel's, written here (no kernel text).
const TOY_MEMCONTROL: &str = "\
/*
 * memcg and lruvec stats flushing
 *
 * 1) toy item one.
 *
 * 2) Flush the stats synchronously on reader side only when toy words
 *    bound by atmost (MEMCG_CHARGE_BATCH * nr_cpus) but for a toy.
 */
static void toy(void);

static inline void memcg_rstat_updated(struct toy *memcg, long val,
\t\t\t\t       int cpu)
{
\tfor (; x; x = y) {
\t\tstatc = this_cpu_ptr(x);
\t\t/*
\t\t * If @memcg is already flushable then a toy claim.
\t\t */
\t\tif (memcg_vmstats_needs_flush(statc->vmstats))
\t\t\tbreak;

\t\tstats_updates = toy_add(1);
\t\tif (stats_updates < 2)
\t\t\tcontinue;

\t\tstats_updates = this_cpu_xchg(x, 0);
\t\tatomic_long_add(stats_updates, &statc->vmstats->stats_updates);
\t}
}
";

const TOY_RSTAT: &str = "\
static DEFINE_SPINLOCK(cgroup_rstat_lock);

void toy(void)
{
}

int cgroup_rstat_init(struct cgroup *cgrp)
{
\treturn 0;
}
";

const TOY_CGROUP: &str = "\
static void css_free_rwork_fn(struct work_struct *work)
{
\tif (ss) {
\t\tss->css_free(css);
\t}
}

static void css_release_work_fn(struct work_struct *work)
{
\t\tlist_del_rcu(&css->rstat_css_node);
}
";

const TOY_INTERNAL: &str = "int cgroup_rstat_init(struct cgroup *cgrp);\n\
void cgroup_rstat_exit(struct cgroup *cgrp);\nvoid cgroup_rstat_boot(void);\n";

/// The generators on the toy files: what they remove and add, the diff
/// applying with git, and a clear error where the pattern is missing.
#[test]
fn the_diff_generators_work_on_small_synthetic_files() {
    let mut e = Edit::new("mm/memcontrol.c", TOY_MEMCONTROL);
    c12::edit_memcontrol(&mut e).expect("c12 edit");
    let new = kdiff::applied(&e);
    assert!(
        !new.contains("break;") && !new.contains("already flushable"),
        "{new}"
    );
    assert!(new.contains(
        "\t\tif (!memcg_vmstats_needs_flush(statc->vmstats))\n\t\t\tatomic_long_add(stats_updates"
    ));
    assert_eq!(e.counts(), (6, 7));
    let mut c = Edit::new("mm/memcontrol.c", TOY_MEMCONTROL);
    comment::edit_memcontrol(&mut c).expect("c1 edit");
    let new_c = kdiff::applied(&c);
    assert!(new_c.contains("2 * MEMCG_CHARGE_BATCH * nr_cpus pages") && !new_c.contains("atmost"));
    let mut r = Edit::new("kernel/cgroup/rstat.c", TOY_RSTAT);
    death::edit_rstat(&mut r).expect("rstat edit");
    let mut g = Edit::new("kernel/cgroup/cgroup.c", TOY_CGROUP);
    death::edit_cgroup(&mut g).expect("cgroup edit");
    let mut h = Edit::new("kernel/cgroup/cgroup-internal.h", TOY_INTERNAL);
    death::edit_internal(&mut h).expect("header edit");
    assert!(kdiff::applied(&g).contains("\t\tif (ss->css_rstat_flush)\n\t\t\tcgroup_rstat_css_free_flush(css);\n\t\tss->css_free(css);"));
    // The diffs apply to the toy tree.
    let root = scratch("toy");
    for (path, text) in [
        ("mm/memcontrol.c", TOY_MEMCONTROL),
        ("kernel/cgroup/rstat.c", TOY_RSTAT),
        ("kernel/cgroup/cgroup.c", TOY_CGROUP),
        ("kernel/cgroup/cgroup-internal.h", TOY_INTERNAL),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let death_diff: String = [&h, &g, &r].iter().map(|x| x.diff()).collect();
    match applies(&root, &[&e.diff(), &c.diff(), &death_diff]) {
        Some(res) => res.unwrap_or_else(|m| panic!("{m}\n{}{}{death_diff}", e.diff(), c.diff())),
        None => eprintln!("skipped applying: neither git nor patch is here"),
    }
    // Without the break there is nothing to take out: the error says so.
    let mut plain = Edit::new(
        "mm/memcontrol.c",
        &TOY_MEMCONTROL.replace("if (memcg_vmstats_needs_flush(statc->vmstats))", "if (0)"),
    );
    let err = c12::edit_memcontrol(&mut plain).unwrap_err();
    assert!(err.contains("without the early break"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A tree that is not there is reported with how to get one.
#[test]
fn a_missing_tree_says_how_to_get_it() {
    let nowhere = std::env::temp_dir().join("flushcheck-no-such-tree");
    let err = Tree::find(Some(&nowhere), &c12::SERIES).unwrap_err();
    assert!(
        err.contains("no 7.3 kernel source tree")
            && err.contains("apt-get install linux-source-7.3"),
        "{err}"
    );
    let m = mail::for_finding(
        &by_id("c12-lost-flush").unwrap(),
        &Ctx {
            source: Some(nowhere),
            ..Ctx::default()
        },
    )
    .unwrap();
    let text = m.render();
    assert!(
        text.contains("---\n") && text.contains("apt-get install"),
        "{text}"
    );
}

/// The c12 mail prints the losses the recorded consoles hold, as
/// `flushcheck kernels --from tests/consoles --json` reads them.
#[test]
fn the_c12_mail_carries_the_consoles_losses() {
    let dir = evidence::default_dir();
    let boots = evidence::boots(&dir).expect("consoles");
    let m = mail::for_finding(&by_id("c12-lost-flush").unwrap(), &ctx()).unwrap();
    let lossy: Vec<&evidence::Boot> = boots.iter().filter(|b| b.loss.is_some()).collect();
    if lossy.is_empty() {
        assert!(m.body.contains("shows the loss"), "{}", m.body);
        eprintln!(
            "no console in {} shows the loss: the mail says so",
            dir.display()
        );
        return;
    }
    let table = evidence::table(&boots);
    assert!(m.body.contains(table.trim_end()), "{}\n{table}", m.body);
    for b in &lossy {
        let l = b.loss.as_ref().unwrap();
        assert!(m.body.contains(&format!("{} of {}", l.parent, l.child)));
    }
    // The same figures as the kernels command's JSON.
    let out = crate::common::flushcheck(&["kernels", "--from", dir.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let data = v.get("data").unwrap_or(&v);
    let boots_json = data["boots"].as_array().or(data.as_array()).expect("boots");
    let from_json: Vec<(u64, u64, usize)> = boots_json
        .iter()
        .filter(|b| !b["loss"].is_null())
        .map(|b| {
            let l = &b["loss"];
            (
                l["parent"].as_u64().unwrap(),
                l["child"].as_u64().unwrap(),
                l["cpus"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    let mut ours: Vec<(u64, u64, usize)> = lossy
        .iter()
        .map(|b| {
            let l = b.loss.as_ref().unwrap();
            (l.parent, l.child, l.cpus)
        })
        .collect();
    let mut theirs = from_json;
    ours.sort_unstable();
    theirs.sort_unstable();
    assert_eq!(ours, theirs);
}

/// Every name listed for v7.3.4 is in a linux-source-7.3 tree, when one
/// is here.
#[test]
fn the_v7_3_4_names_are_in_the_tree_when_one_is_here() {
    let t = match Tree::find(None, &c12::SERIES) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let mut text = String::new();
    for rel in [
        "mm/memcontrol.c",
        "include/linux/percpu-defs.h",
        "include/linux/cpumask.h",
        "include/linux/smp.h",
        "include/linux/atomic/atomic-long.h",
        "include/linux/atomic/atomic-instrumented.h",
        "kernel/cgroup/rstat.c",
    ] {
        text.push_str(&std::fs::read_to_string(t.root.join(rel)).unwrap_or_default());
    }
    for n in names::of("v7.3.4") {
        assert!(
            text.contains(&format!("{n}(")),
            "{n}() not in {}",
            t.release
        );
    }
}

/// The model's whole report keeps 80 columns and prints the trace as the
/// kernel's statements, in the release's names.
#[test]
fn the_model_report_keeps_80_columns_and_the_kernel_statements() {
    memcg_flush_model::explore::quiet_panics();
    let reg = catalogue::with_bounds();
    let opts = full::Full {
        model_names: false,
        depth: Depth::Form,
        suite: None,
    };
    let mut failures = Vec::new();
    for f in all() {
        let text = full::full(&f, &reg, BUDGET, &opts).expect("report");
        for (n, w) in long_lines(&text) {
            failures.push(format!("{}: line {n} is {w} columns", f.id));
        }
        if f.witness.shown.backend().name() != "loom" && !text.contains("statement\n") {
            failures.push(format!(
                "{}: the trace is not the kernel's statements",
                f.id
            ));
        }
    }
    let c12r = full::full(&by_id("c12-lost-flush").unwrap(), &reg, BUDGET, &opts).unwrap();
    for s in [
        "__css_rstat_lock(css, cpu)",
        "flush_last_time",
        "this_cpu_add(statc",
    ] {
        assert!(c12r.contains(s), "the v6.17 trace lacks {s:?}");
    }
    assert!(!c12r.contains("cgroup_rstat_lock") && !c12r.contains("flush_next_time"));
    drop(std::panic::take_hook());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// With `--model-names` the trace is the model's column diagram.
#[test]
fn model_names_give_the_diagram() {
    let reg = catalogue::with_bounds();
    let f = by_id("quiescent-read-zero").expect("finding");
    let o = |model_names| full::Full {
        model_names,
        depth: Depth::Form,
        suite: None,
    };
    let kernel = full::full(&f, &reg, BUDGET, &o(false)).expect("report");
    let model = full::full(&f, &reg, BUDGET, &o(true)).expect("report");
    assert!(kernel.contains("atomic_read(&vmstats->stats_updates) = 65"));
    assert!(model.contains("atomic_read(thr.2)=65"), "{model}");
}

/// The per-memcg margin's report gives its witness one figure: every
/// "N pages missing" in it is the same N.
#[test]
fn c10_names_one_figure() {
    memcg_flush_model::explore::quiet_panics();
    let reg = catalogue::with_bounds();
    let f = by_id("c10-bound").expect("finding");
    let o = full::Full {
        model_names: false,
        depth: Depth::Form,
        suite: None,
    };
    let text = full::full(&f, &reg, BUDGET, &o).expect("report");
    drop(std::panic::take_hook());
    let flat = text.split_whitespace().collect::<Vec<_>>();
    let figures: Vec<&str> = flat
        .windows(3)
        .filter(|w| w[1] == "pages" && w[2].starts_with("missing"))
        .map(|w| w[0])
        .collect();
    assert!(figures.len() >= 3, "{figures:?}");
    assert!(figures.iter().all(|n| *n == figures[0]), "{figures:?}");
}
