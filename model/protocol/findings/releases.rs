//! The releases each finding affects, as data: the first and last affected
//! release, the newest tree read, the release that ended it, the
//! introducing and closing commits with their releases, and where each fact
//! was read. The findings' `affected`, `introduced`, `first`, `last` and
//! `closed_by` come from here, and the release ranges of README.md and
//! docs/ are compared with it (tests/suite/releases.rs); docs/releases.md
//! gives the table with its evidence.
//!
//! A tree is named `owner/repo@commit:path:line`, its release read from the
//! Makefile's `VERSION`/`PATCHLEVEL`/`SUBLEVEL`; in every tree cited only the
//! import commit touches mm/memcontrol.c, kernel/cgroup/rstat.c and
//! kernel/cgroup/cgroup.c. The newest releases, v7.2 and v7.3, are read from
//! Debian's source packages, named `linux-source-7.3 (Debian VERSION):path:line`
//! (their Makefiles say 7.2.13 and 7.3.4). A mail is named by its lore
//! Message-ID.

/// How a fact is known, as docs/claims.md tags it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Read in a tree, a commit or a mail that names the release.
    Verified,
    /// Inferred from verified text; no stored tree or mail settles it.
    Inferred,
    /// Unverified: nothing stored settles it.
    Unverified,
}

impl Tag {
    /// The tag as the docs write it.
    pub fn mark(self) -> &'static str {
        match self {
            Tag::Verified => "[V]",
            Tag::Inferred => "[I]",
            Tag::Unverified => "[U]",
        }
    }
}

/// One fact and where it was read.
#[derive(Clone, Copy, Debug)]
pub struct Fact {
    /// How it is known.
    pub tag: Tag,
    /// The trees, commits or mails read, or why nothing settles it.
    pub source: &'static str,
}

/// A commit, its subject and the first release that contains it.
#[derive(Clone, Copy, Debug)]
pub struct Commit {
    /// The id, 12 hex digits.
    pub id: &'static str,
    /// The subject line.
    pub subject: &'static str,
    /// The first release that contains it.
    pub release: &'static str,
}

/// A finding's releases.
#[derive(Clone, Copy, Debug)]
pub struct Releases {
    /// The first affected release (`"none"`: never merged).
    pub first: &'static str,
    /// How `first` is known (it is the introducing commit's release).
    pub first_fact: Fact,
    /// The last affected release: the one before the release that ended
    /// it, else the newest release read.
    pub last: &'static str,
    /// How `last` is known.
    pub last_fact: Fact,
    /// The newest tree read that shows the affected code.
    pub last_read: &'static str,
    /// The release that ended it, if one did.
    pub closed: Option<&'static str>,
    /// How `closed` is known (`None` with `closed`).
    pub closed_fact: Option<Fact>,
    /// The commit that introduced it (`None`: an unmerged proposal).
    pub introduced: Option<Commit>,
    /// The commit that ended it, where its id is known.
    pub closing: Option<Commit>,
    /// Whether the newest releases read, v7.2 and v7.3 (Debian's
    /// linux-source-7.2 and linux-source-7.3), changed the finding's code.
    pub newest: Fact,
    /// The report's "affected releases" text: the range, then a note.
    pub affected: &'static str,
    /// The report's "introduced by" text: the commit and its release.
    pub introduced_text: &'static str,
    /// The report's "ended upstream by" text: `release: what`.
    pub closed_by: Option<&'static str>,
    /// The introducing commit as a `Fixes:` tag names it, `id ("subject")`.
    pub fixes_tag: Option<&'static str>,
}

impl Releases {
    /// The affected range as the docs write it: `first-last`, or `first`
    /// alone when they are equal.
    pub fn range(&self) -> String {
        if self.first == self.last {
            self.first.to_string()
        } else {
            format!("{}-{}", self.first, self.last)
        }
    }

    /// Every fact with what it is about, for the docs table and the tests.
    pub fn facts(&self) -> Vec<(&'static str, Fact)> {
        let mut v = vec![("first", self.first_fact), ("last", self.last_fact)];
        if let Some(f) = self.closed_fact {
            v.push(("closed", f));
        }
        v.push(("v7.2 and v7.3", self.newest));
        v
    }
}

/// The builder: every text of a finding's releases from the same literals.
/// `introduced` gives the commit (id, subject, release) and a note the
/// report adds; `closed` the release, optionally the commit, and a note.
macro_rules! releases {
    (
        first: $first:literal, $ftag:ident, $fsrc:expr;
        last: $last:literal, $ltag:ident, $lsrc:expr;
        read: $read:literal;
        introduced: $iid:literal, $isubj:literal, $irel:literal, $inote:literal;
        $( closed: $crel:literal, $ctag:ident, $csrc:expr;
           $( closing: $cid:literal, $csubj:literal; )?
           closed_note: $cnote:literal; )?
        newest: $ntag:ident, $nsrc:expr;
        affected: $anote:literal;
    ) => {
        Releases {
            first: $first,
            first_fact: Fact { tag: Tag::$ftag, source: $fsrc },
            last: $last,
            last_fact: Fact { tag: Tag::$ltag, source: $lsrc },
            last_read: $read,
            closed: releases!(@opt $( $crel )?),
            closed_fact: releases!(@opt $( Fact { tag: Tag::$ctag, source: $csrc } )?),
            introduced: Some(Commit { id: $iid, subject: $isubj, release: $irel }),
            closing: releases!(@opt $( $( Commit { id: $cid, subject: $csubj, release: $crel } )? )?),
            newest: Fact { tag: Tag::$ntag, source: $nsrc },
            affected: concat!($first, " to ", $last, $anote),
            introduced_text: concat!($iid, " (\"", $isubj, "\"), ", $irel, $inote),
            closed_by: releases!(@opt $( concat!($crel, ": ", $( $cid, " (\"", $csubj, "\")", )? $cnote) )?),
            fixes_tag: Some(concat!($iid, " (\"", $isubj, "\")")),
        }
    };
    (@opt) => { None };
    (@opt $e:expr) => { Some($e) };
}

/// The trees read, by release (docs/releases.md lists them).
pub const TREES: &[(&str, &str)] = &[
    ("v5.6.4", "shmily1012/linux-5.6.4@93830a5cf2aa"),
    ("v5.7.14", "a5221985/linux-5.7.14@5d0b54d93391"),
    ("v5.12.9", "zhangyinjun/linux-5.12.9@38c16b0cce67"),
    ("v5.14.0", "lsk-legends/linux-5.14@45477c32dd5d"),
    ("v5.15.0", "sndrzt/linux-5.15@75c6ad16ec64"),
    ("v5.17.0", "dunli/linux-5.17@a5835cacde99"),
    (
        "v6.6.9",
        "mihaelbh/adding-new-sched-policy-to-linux-6.6.9@b0e4488ba24c",
    ),
    ("v6.8.0", "vivo50kff/linux-6.8@bc4fae0d3fa3"),
    ("v6.14.0", "perishh/linux-6.14@347b100ec166"),
    (
        "v6.17.0",
        "busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8",
    ),
    ("v6.18.19", "6952350/linux-6.18.y@f3fce0151d48"),
    ("v7.0.0", "julianw1010/WASP-linux-7.0.0@d0b9a1a6ae15"),
    ("v7.1.5", "danayer/linux-7.1.5@9d1745cf8134"),
    ("v7.2.13", SRC_7_2),
    ("v7.3.4", SRC_7_3),
];

/// Debian's linux-source-7.2 package, unpacked (its Makefile: 7.2.13).
pub const SRC_7_2: &str = "linux-source-7.2 (Debian 7.2.13-1)";

/// Debian's linux-source-7.3 package, unpacked (its Makefile: 7.3.4).
pub const SRC_7_3: &str = "linux-source-7.3 (Debian 7.3.4-1~bpo13+1)";

/// The early break (C12): both of its mechanisms, and the merged finding.
pub const C12: Releases = releases! {
    first: "v6.16", Verified,
        "\"[GIT PULL] MM updates for 6.16-rc1\" (Andrew Morton, 2025-05-31, lore \
         20250531145342.383090aa5ed5bcefee0740d5@linux-foundation.org, \
         tags/mm-stable-2025-05-31-14-50) lists \"memcg: optimize memcg_rstat_updated\" \
         under Shakeel Butt; pr-tracker-bot: merged into torvalds/linux master as \
         00c010e130e5 on 2025-06-01; 60cada258dfe was in mm-stable on 2025-05-21 (lore \
         20250521174958.0b7354da@canb.auug.org.au). Absent in v6.14.0 \
         (perishh/linux-6.14@347b100ec166:mm/memcontrol.c:594, the skip-add \
         `if (!memcg_vmstats_needs_flush())`), present in v6.17.0 \
         (busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8:mm/memcontrol.c:582-583)";
    last: "v7.3.4", Verified,
        "the break, with its comment \"If @memcg is already flushable then all its \
         ancestors are flushable as well\", in linux-source-7.3 (Debian \
         7.3.4-1~bpo13+1):mm/memcontrol.c:745-751; also linux-source-7.2 (Debian \
         7.2.13-1):mm/memcontrol.c:686-692, danayer/linux-7.1.5@9d1745cf8134:\
         mm/memcontrol.c:691-692, 6952350/linux-6.18.y@f3fce0151d48:mm/memcontrol.c:584-585 \
         (v6.18.19) and julianw1010/WASP-linux-7.0.0@d0b9a1a6ae15:mm/memcontrol.c:586-587 \
         (v7.0.0); booted: Debian's 7.2.13 and 7.3.4 lose the parent's pages in \
         docs/reproducers/test_c12_skew.c (issue 38)";
    read: "v7.3.4";
    introduced: "60cada258dfe", "memcg: optimize memcg_rstat_updated", "v6.16",
        ", with ff9798e05d33 (\"memcg: memcg_rstat_updated re-entrant safe against \
         irqs\") in the same pull";
    newest: Verified,
        "unchanged: memcg_rstat_updated() in linux-source-7.2 (Debian 7.2.13-1):\
         mm/memcontrol.c:672-702 and linux-source-7.3 (Debian 7.3.4-1~bpo13+1):\
         mm/memcontrol.c:731-761 is danayer/linux-7.1.5@9d1745cf8134:mm/memcontrol.c:672-702 \
         line for line (the break, this_cpu_add_return(), this_cpu_xchg(), \
         atomic_long_add())";
    affected: " (newest read), and the 2026 proposal";
};

/// The updater/flusher store-buffering race on the rstat updated tree.
pub const TREE_SB: Releases = releases! {
    first: "v5.7", Verified,
        "shmily1012/linux-5.6.4@93830a5cf2aa:kernel/cgroup/rstat.c:39 has the smp_mb() \
         in cgroup_rstat_updated(); a5221985/linux-5.7.14@5d0b54d93391:\
         kernel/cgroup/rstat.c:43 has the lockless test without it";
    last: "v7.3.4", Verified,
        "linux-source-7.3 (Debian 7.3.4-1~bpo13+1):kernel/cgroup/rstat.c:92-98: \"This \
         check is racy and smp_mb() is needed to pair it with the smp_mb() in \
         css_process_update_tree()\", then the llist_on_list() test and no barrier; the \
         same lines in linux-source-7.2 (Debian 7.2.13-1) and \
         danayer/linux-7.1.5@9d1745cf8134:kernel/cgroup/rstat.c:92-95";
    read: "v7.3.4";
    introduced: "d8ef4b38cb69",
        "Revert \"cgroup: Add memory barriers to plug cgroup_rstat_updated() race window\"",
        "v5.7", " (the revert of 9a9e97b2f1f2's smp_mb() pair)";
    newest: Verified,
        "unchanged: linux-source-7.2 (Debian 7.2.13-1):kernel/cgroup/rstat.c and \
         linux-source-7.3 (Debian 7.3.4-1~bpo13+1):kernel/cgroup/rstat.c are \
         danayer/linux-7.1.5@9d1745cf8134's file byte for byte";
    affected: " (memcg statistics ride rstat from v5.13, 2d146aa3aa84)";
};

/// A page charged while its memcg dies.
pub const DEATH: Releases = releases! {
    first: "v5.13", Verified,
        "memcg's css_rstat_flush callback is absent in v5.12.9 \
         (zhangyinjun/linux-5.12.9@38c16b0cce67:mm/memcontrol.c) and present in v5.14.0 \
         (lsk-legends/linux-5.14@45477c32dd5d:mm/memcontrol.c:5556); \"[PATCH 5.13 \
         012/104]\" (lore 20210802134344.419426208@linuxfoundation.org) backports a fix \
         \"Fixes: 2d146aa3aa84\" to 5.13, whose context is 2d146aa3aa84's \
         cgroup_rstat_flush() in mem_cgroup_usage(). The release path (flush, then \
         list_del_rcu(&css->rstat_css_node)) is older: \
         shmily1012/linux-5.6.4@93830a5cf2aa:kernel/cgroup/cgroup.c:4969-4971";
    last: "v6.15", Inferred,
        "no v6.15 tree is stored; the release path still flushes, then \
         list_del_rcu(&css->rstat_css_node) in v6.14.0 \
         (perishh/linux-6.14@347b100ec166:kernel/cgroup/cgroup.c:5464-5465), and \
         5da3bfa029d6's diff (v6.16) removes exactly those lines, so the tree it applied \
         to still had them";
    read: "v6.14.0";
    introduced: "2d146aa3aa84", "mm: memcontrol: switch to rstat", "v5.13",
        ", on rstat's css release path (the flush, then list_del_rcu of rstat_css_node)";
    closed: "v6.16", Verified,
        "5da3bfa029d6 is on tj/cgroup for-6.16 (gitolite post-receive of 2025-05-19); \
         its v5 mail (lore 20250503001222.146355-3-inwardvessel@gmail.com) drops the \
         list_del_rcu() from css_release_work_fn() and calls css_rstat_exit(css) first \
         in css_free_rwork_fn(); present in v6.17.0 \
         (busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8:kernel/cgroup/cgroup.c:5583, \
         before ss->css_free() at :5590; css_rstat_exit() flushes at \
         kernel/cgroup/rstat.c:485) and v7.1.5 (cgroup.c:5568, 5575)";
        closing: "5da3bfa029d6", "cgroup: use separate rstat trees for each subsystem";
        closed_note: ", whose css_rstat_exit() flushes the css with its callback in \
         css_free_rwork_fn() before ss->css_free()";
    newest: Verified,
        "still closed: css_free_rwork_fn() calls css_rstat_exit(css), which flushes \
         (kernel/cgroup/rstat.c:487, 497), before ss->css_free(css) in linux-source-7.2 \
         (Debian 7.2.13-1):kernel/cgroup/cgroup.c:5627, 5634 and linux-source-7.3 (Debian \
         7.3.4-1~bpo13+1):kernel/cgroup/cgroup.c:5702, 5709";
    affected: " (memcg on rstat from v5.13; v6.15 inferred: no v6.15 tree is stored; \
         the newest read, v6.14.0, shows it)";
};

/// A read after quiescence returns 0 (B9), from the per-memcg threshold.
pub const QUIESCENT: Releases = releases! {
    first: "v6.8", Verified, PER_MEMCG;
    last: "v7.3.4", Verified, GATE_7_3;
    read: "v7.3.4";
    introduced: "8d59d2214c23", "mm: memcg: make stats flushing threshold per-memcg", "v6.8",
        ", with 7d7ef0a4686a (\"mm: memcg: restore subtree stats flushing\")";
    newest: Verified, GATE_UNCHANGED;
    affected: "; 6.6.y from about 6.6.117 (a stable backport; the first such 6.6.y \
         release [U])";
};

/// How the per-memcg threshold's release is known.
const PER_MEMCG: &str = "absent in v6.6.9 (the global `static atomic_t \
     stats_flush_threshold`, mihaelbh/adding-new-sched-policy-to-linux-6.6.9@b0e4488ba24c:\
     mm/memcontrol.c:592), present in v6.8.0 (the per-memcg `atomic64_t stats_updates`, \
     vivo50kff/linux-6.8@bc4fae0d3fa3:mm/memcontrol.c:660, and memcg_vmstats_needs_flush() \
     at :707); v6.8-rc1 (kernel-history.md, section 1 [V])";

/// The gate in v7.3.4.
const GATE_7_3: &str = "memcg_vmstats_needs_flush() at linux-source-7.3 (Debian \
     7.3.4-1~bpo13+1):mm/memcontrol.c:725-729 and at \
     danayer/linux-7.1.5@9d1745cf8134:mm/memcontrol.c:666-670, unchanged since v6.8 but \
     for the atomic's type";

/// The gate in v7.2 and v7.3.
const GATE_UNCHANGED: &str = "unchanged: memcg_vmstats_needs_flush() compares the \
     atomic_long_t with MEMCG_CHARGE_BATCH * num_online_cpus() in linux-source-7.2 \
     (Debian 7.2.13-1):mm/memcontrol.c:666-670 and linux-source-7.3 (Debian \
     7.3.4-1~bpo13+1):mm/memcontrol.c:725-729, as in danayer/linux-7.1.5@9d1745cf8134";

/// Flushers that skip because another flush is running (B7).
pub const B7: Releases = releases! {
    first: "v5.15", Verified,
        "absent in v5.14.0 (lsk-legends/linux-5.14@45477c32dd5d:mm/memcontrol.c has no \
         stats_flush_lock or flush_memcg_stats_dwork), present in v5.15.0 \
         (sndrzt/linux-5.15@75c6ad16ec64:mm/memcontrol.c:107-109, the spin_trylock() at \
         :5346); the stable thread \"Backport memcg flush improvements into 5.15\" (lore \
         CALvZod76vX94jG0W9f-RJGu9pSYi_uMw5BE6xfL9p30pgLShUQ@mail.gmail.com) names \
         aa48e47e3906 as the 5.10-to-5.15 regression";
    last: "v6.7", Inferred,
        "no v6.7 tree is stored; v6.6.9 skips \
         (mihaelbh/adding-new-sched-policy-to-linux-6.6.9@b0e4488ba24c:mm/memcontrol.c:591, \
         649-650: atomic_read(&stats_flush_ongoing) || atomic_xchg()), and the commit that \
         ended it is in v6.8-rc1";
    read: "v6.6.9";
    introduced: "aa48e47e3906", "memcg: infrastructure to flush memcg stats", "v5.15", "";
    closed: "v6.8", Verified,
        "v6.8.0 has no stats_flush_ongoing and flushes the memcg's own subtree \
         (vivo50kff/linux-6.8@bc4fae0d3fa3:mm/memcontrol.c:744); v6.8-rc1 \
         (kernel-history.md, section 1 [V])";
        closing: "7d7ef0a4686a", "mm: memcg: restore subtree stats flushing";
        closed_note: ": nobody skips";
    newest: Verified,
        "still closed: no stats_flush_ongoing; a reader flushes its own subtree with \
         css_rstat_flush(&memcg->css) at linux-source-7.2 (Debian 7.2.13-1):\
         mm/memcontrol.c:717 and linux-source-7.3 (Debian 7.3.4-1~bpo13+1):\
         mm/memcontrol.c:776, blocking on the rstat lock";
    affected: " (the trylock losers of v5.15-v6.3, the stats_flush_ongoing losers of \
         v6.4-v6.7; the newest read, v6.6.9, shows it)";
};

/// A flush the count triggered reads none of its pages (weak memory).
pub const WEAK_READ: Releases = releases! {
    first: "v6.17", Verified,
        "36df6e3dbd7e is on cgroup for-6.17 (sashal/linus-next post-receive of \
         2025-07-31, after \"Merge branch 'for-6.16-fixes' into for-6.17\"); absent in \
         v6.14.0 (perishh/linux-6.14@347b100ec166:kernel/cgroup/rstat.c:98-101, the \
         data_race() test and the per-CPU lock), present in v6.17.0 \
         (busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8:kernel/cgroup/rstat.c:118-122, \
         this_cpu_cmpxchg() then llist_add())";
    last: "v7.3.4", Verified,
        "linux-source-7.3 (Debian 7.3.4-1~bpo13+1):kernel/cgroup/rstat.c:118-122 \
         (try_cmpxchg(), then llist_add()), as in linux-source-7.2 (Debian 7.2.13-1) and \
         danayer/linux-7.1.5@9d1745cf8134:kernel/cgroup/rstat.c:118-122 (try_cmpxchg() \
         from v6.18.19, 6952350/linux-6.18.y@f3fce0151d48:kernel/cgroup/rstat.c:121)";
    read: "v7.3.4";
    introduced: "36df6e3dbd7e", "cgroup: make css_rstat_updated nmi safe", "v6.17",
        ", with 1257b8786ac6, 6af89c6ca717 and 8dcb0ed834a3 of the same series (the \
         llist form; before it the per-CPU lock orders a memcg's first insertion and only the \
         updater/flusher race remains)";
    newest: Verified,
        "unchanged: linux-source-7.2 (Debian 7.2.13-1):kernel/cgroup/rstat.c and \
         linux-source-7.3 (Debian 7.3.4-1~bpo13+1):kernel/cgroup/rstat.c are \
         danayer/linux-7.1.5@9d1745cf8134's file byte for byte";
    affected: " (the llist form)";
};

/// The documented bound (MEMCG_CHARGE_BATCH * nr_cpus), C1.
pub const C1: Releases = releases! {
    first: "v5.16", Verified,
        "absent in v5.15.0 (sndrzt/linux-5.15@75c6ad16ec64:mm/memcontrol.c has no \
         stats_flush_threshold), present in v5.17.0 \
         (dunli/linux-5.17@a5835cacde99:mm/memcontrol.c:622-623); Ivan Babrou, stable, \
         2022-01-19, quoted in lore \
         CALvZod76vX94jG0W9f-RJGu9pSYi_uMw5BE6xfL9p30pgLShUQ@mail.gmail.com: \"a couple \
         of commits that helps to bridge the gap in 5.16: 11192d9c124d\"";
    last: "v7.3.4", Verified,
        "the comment at linux-source-7.3 (Debian 7.3.4-1~bpo13+1):mm/memcontrol.c:715-716 \
         and danayer/linux-7.1.5@9d1745cf8134:mm/memcontrol.c:656-657";
    read: "v7.3.4";
    introduced: "11192d9c124d", "memcg: flush stats only if updated", "v5.16",
        " (also 5.15.y: Greg Kroah-Hartman queued it for 5.15 stable on 2022-01-27)";
    newest: Verified,
        "unchanged: \"will let stats be out of sync by atmost (MEMCG_CHARGE_BATCH * \
         nr_cpus)\" at linux-source-7.2 (Debian 7.2.13-1):mm/memcontrol.c:656-657 and \
         linux-source-7.3 (Debian 7.3.4-1~bpo13+1):mm/memcontrol.c:715-716";
    affected: " (the comment is unchanged)";
};

/// The per-memcg error margin of 8d59d2214c23's message, C10.
pub const C10: Releases = releases! {
    first: "v6.8", Verified, PER_MEMCG;
    last: "v7.3.4", Verified, GATE_7_3;
    read: "v7.3.4";
    introduced: "8d59d2214c23", "mm: memcg: make stats flushing threshold per-memcg", "v6.8", "";
    newest: Verified, GATE_UNCHANGED;
    affected: "";
};

/// The bound that justified the 32-bit counter, C14.
pub const C14: Releases = releases! {
    first: "v6.16", Verified,
        "\"[GIT PULL] Additional MM updates for 6.16-rc1\" (Andrew Morton, 2025-06-01, \
         lore 20250601151222.60ead71e7d8492a18c711a05@linux-foundation.org, \
         tags/mm-stable-2025-06-01-14-06) lists \"memcg: make memcg_rstat_updated nmi \
         safe\" under Shakeel Butt; the counter is `atomic64_t` in v6.14.0 \
         (perishh/linux-6.14@347b100ec166:mm/memcontrol.c:520) and `atomic_t` in v6.17.0 \
         (busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8:mm/memcontrol.c:533)";
    last: "v7.0", Verified,
        "`atomic_t` in julianw1010/WASP-linux-7.0.0@d0b9a1a6ae15:mm/memcontrol.c:537 (and \
         6952350/linux-6.18.y@f3fce0151d48:mm/memcontrol.c:535)";
    read: "v7.0.0";
    introduced: "3ac4638a734a", "memcg: make memcg_rstat_updated nmi safe", "v6.16", "";
    closed: "v7.1", Verified,
        "`atomic_long_t` in danayer/linux-7.1.5@9d1745cf8134:mm/memcontrol.c:642, the \
         per-CPU count `unsigned long` at :611; the widening commit's id is not recorded \
         [U]";
        closed_note: "the counter is atomic_long_t again";
    newest: Verified,
        "still closed: `atomic_long_t stats_updates` and the per-CPU `unsigned long` at \
         linux-source-7.2 (Debian 7.2.13-1):mm/memcontrol.c:642, 611 and linux-source-7.3 \
         (Debian 7.3.4-1~bpo13+1):mm/memcontrol.c:701, 670";
    affected: " (the atomic_t it justified; v7.1 widened it to atomic_long_t)";
};

/// Why C18 affects no release.
const C18_UNMERGED: &str = "no tree read holds vmstats_flush_threshold, the newest \
     (linux-source-7.3 (Debian 7.3.4-1~bpo13+1):mm/memcontrol.c, whose gate at :725-729 is \
     still MEMCG_CHARGE_BATCH * num_online_cpus(); linux-source-7.2 (Debian 7.2.13-1):\
     mm/memcontrol.c:666-670 and danayer/linux-7.1.5@9d1745cf8134:mm/memcontrol.c:666-670 \
     alike) included; the name is only in \
     the patch mails (lore 20260319173752.1472864-1-longman@redhat.com and its v2)";

/// The 2026 proposal's bound, C18: never merged.
pub const C18: Releases = Releases {
    first: "none",
    first_fact: Fact {
        tag: Tag::Verified,
        source: C18_UNMERGED,
    },
    last: "none",
    last_fact: Fact {
        tag: Tag::Verified,
        source: C18_UNMERGED,
    },
    last_read: "v7.3.4",
    closed: None,
    closed_fact: None,
    introduced: None,
    closing: None,
    newest: Fact {
        tag: Tag::Verified,
        source: C18_UNMERGED,
    },
    affected: "the 2026 proposal (not merged as of v7.3.4)",
    introduced_text: "the 2026 proposal's review",
    closed_by: None,
    fixes_tag: None,
};

/// The releases of finding `id` (`c12` or any `c12-` finding: the early
/// break's), or `None`.
pub fn of(id: &str) -> Option<&'static Releases> {
    Some(match id {
        _ if id == "c12" || id.starts_with("c12-") => &C12,
        "tree-sb-lost-update" => &TREE_SB,
        "death-lost-page" => &DEATH,
        "quiescent-read-zero" => &QUIESCENT,
        "b7-skipped-flusher" => &B7,
        "weak-triggered-read" => &WEAK_READ,
        "c1-bound" => &C1,
        "c10-bound" => &C10,
        "c14-bound" => &C14,
        "c18-bound" => &C18,
        _ => return None,
    })
}
