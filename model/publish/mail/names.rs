//! The kernel functions (and function-like macros and callbacks) each mail
//! may name, per release, each found as `name(` in that release's tree
//! when the list was written ([`TREES`] names the trees). A mail names a
//! release ([`super::Mail::release`]) and every `name()` in its prose must
//! be in that release's list; tests/suite/mail_form.rs also checks the
//! v7.3.4 list against a linux-source-7.3 tree when one is here.

/// The tree each list was checked against.
pub const TREES: &[(&str, &str)] = &[
    ("v7.3.4", "linux-source-7.3 (Debian 7.3.4-1~bpo13+1)"),
    ("v7.1.5", "danayer/linux-7.1.5@9d1745cf8134"),
    ("v6.18", "6952350/linux-6.18.y@f3fce0151d48 (6.18.19)"),
    (
        "v6.17.0",
        "busysteve/linux-6.17.0-rust-ported-c@1e9822c103f8",
    ),
    (
        "v6.12",
        "shilei-massclouds/linux-6.12@e02d6450498d (6.12.0)",
    ),
];

/// The names checked in each release.
pub const NAMES: &[(&str, &[&str])] = &[
    (
        "v7.3.4",
        &[
            "__mod_memcg_state",
            "atomic_long_add",
            "atomic_long_read",
            "css_rstat_flush",
            "css_rstat_updated",
            "flush_memcg_stats_dwork",
            "get_cpu",
            "mem_cgroup_css_rstat_flush",
            "mem_cgroup_flush_stats",
            "mem_cgroup_flush_stats_ratelimited",
            "memcg_rstat_updated",
            "memcg_vmstats_needs_flush",
            "mod_memcg_state",
            "num_online_cpus",
            "put_cpu",
            "this_cpu_add",
            "this_cpu_add_return",
            "this_cpu_xchg",
        ],
    ),
    (
        "v7.1.5",
        &["ilog2", "int_sqrt", "num_online_cpus", "num_possible_cpus"],
    ),
    (
        "v6.18",
        &[
            "mem_cgroup_flush_stats",
            "memcg_vmstats_needs_flush",
            "num_online_cpus",
        ],
    ),
    (
        "v6.17.0",
        &[
            "atomic_read",
            "css_process_update_tree",
            "css_rstat_updated",
            "llist_add",
            "llist_del_first_init",
            "llist_on_list",
            "mem_cgroup_flush_stats",
            "smp_load_acquire",
            "smp_mb",
        ],
    ),
    (
        "v6.12",
        &[
            "__mod_objcg_mlstate",
            "cgroup_parent",
            "cgroup_rstat_exit",
            "cgroup_rstat_flush",
            "cgroup_rstat_init",
            "cgroup_rstat_updated",
            "css_free",
            "css_free_rwork_fn",
            "css_killed_work_fn",
            "css_put",
            "css_release_work_fn",
            "css_rstat_flush",
            "for_each_possible_cpu",
            "init_and_link_css",
            "list_add_rcu",
            "list_del_rcu",
            "local_lock_irqsave",
            "mem_cgroup_css_rstat_flush",
            "mod_objcg_state",
            "obj_cgroup_memcg",
            "rcu_read_lock",
            "smp_processor_id",
            "spin_lock_irq",
        ],
    ),
];

/// Whether `name` is listed for `release`.
pub fn known(release: &str, name: &str) -> bool {
    NAMES
        .iter()
        .any(|(r, names)| *r == release && names.contains(&name))
}

/// The names listed for `release`.
pub fn of(release: &str) -> &'static [&'static str] {
    NAMES
        .iter()
        .find(|(r, _)| *r == release)
        .map_or(&[], |(_, n)| n)
}
