//! The MAINTAINERS entries of the files a finding's fix touches, for a
//! report's `To:` and `Cc:` (maintainers `M:` go in `To:`, reviewers `R:`,
//! the mm tree and the lists in `Cc:`).
//!
//! Taken from the entries as get_maintainer.pl prints them in mails to the
//! lists ("open list:CONTROL GROUP - MEMORY RESOURCE CONTROLLER (MEMCG)",
//! "open list:CONTROL GROUP (CGROUP)"), for example lore
//! 20240424131918.GC318022@cmpxchg.org (a memcg patch, 2024) and the
//! cgroup threads of October 2025; the MAINTAINERS file itself is not in
//! the stored index. Re-check with `scripts/get_maintainer.pl` on the tree
//! a patch is written against.

/// One MAINTAINERS entry.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The entry's title line.
    pub title: &'static str,
    /// The path prefixes its `F:` lines cover (those the findings touch).
    pub files: &'static [&'static str],
    /// `M:` lines.
    pub maintainers: &'static [&'static str],
    /// `R:` lines.
    pub reviewers: &'static [&'static str],
    /// `L:` lines.
    pub lists: &'static [&'static str],
}

const HANNES: &str = "Johannes Weiner <hannes@cmpxchg.org>";

/// The entries the findings' files fall under.
pub const ENTRIES: &[Entry] = &[
    Entry {
        title: "CONTROL GROUP - MEMORY RESOURCE CONTROLLER (MEMCG)",
        files: &["mm/memcontrol.c", "include/linux/memcontrol.h"],
        maintainers: &[
            HANNES,
            "Michal Hocko <mhocko@kernel.org>",
            "Roman Gushchin <roman.gushchin@linux.dev>",
            "Shakeel Butt <shakeel.butt@linux.dev>",
        ],
        reviewers: &["Muchun Song <muchun.song@linux.dev>"],
        lists: &["cgroups@vger.kernel.org", "linux-mm@kvack.org"],
    },
    Entry {
        title: "CONTROL GROUP (CGROUP)",
        files: &["kernel/cgroup/", "include/linux/cgroup"],
        maintainers: &[
            "Tejun Heo <tj@kernel.org>",
            HANNES,
            "Michal Koutný <mkoutny@suse.com>",
        ],
        reviewers: &[],
        lists: &["cgroups@vger.kernel.org"],
    },
];

/// Who takes mm patches (memcg fixes go through the mm tree).
pub const MM_TREE: &str = "Andrew Morton <akpm@linux-foundation.org>";

/// The recipients for a change to `files`: `To:` (every maintainer of an
/// entry covering a file), `Cc:` (reviewers, the mm tree for mm/ files,
/// the lists, linux-kernel), and the titles of the entries used.
pub fn recipients(files: &[&str]) -> (Vec<String>, Vec<String>, Vec<&'static str>) {
    let mut to: Vec<String> = Vec::new();
    let mut cc: Vec<String> = Vec::new();
    let mut titles = Vec::new();
    let push = |v: &mut Vec<String>, s: &str| {
        if !v.iter().any(|x| x == s) {
            v.push(s.to_string());
        }
    };
    for e in ENTRIES {
        if !files
            .iter()
            .any(|f| e.files.iter().any(|p| f.starts_with(p)))
        {
            continue;
        }
        titles.push(e.title);
        for m in e.maintainers {
            push(&mut to, m);
        }
    }
    for e in ENTRIES.iter().filter(|e| titles.contains(&e.title)) {
        for r in e.reviewers {
            if !to.iter().any(|t| t == r) {
                push(&mut cc, r);
            }
        }
    }
    if files.iter().any(|f| f.starts_with("mm/")) {
        push(&mut cc, MM_TREE);
    }
    for e in ENTRIES.iter().filter(|e| titles.contains(&e.title)) {
        for l in e.lists {
            push(&mut cc, l);
        }
    }
    if !titles.is_empty() {
        push(&mut cc, "linux-kernel@vger.kernel.org");
    }
    (to, cc, titles)
}
