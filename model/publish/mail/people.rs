//! People a mail goes to besides the MAINTAINERS entries of its files: the
//! authors of the claims it answers and of the work it builds on, as their
//! own mails sign (the lore messages cited beside each).

/// Shakeel Butt: 60cada258dfe, "cgroup: explain the race between updater
/// and flusher" (lore 20250703200012.3734798-2-shakeel.butt@linux.dev).
pub const SHAKEEL: &str = "Shakeel Butt <shakeel.butt@linux.dev>";
/// Tejun Heo: rstat, and the kerneldoc of cgroup_rstat_flush(); the `To:`
/// of the July 2025 patch above.
pub const TEJUN: &str = "Tejun Heo <tj@kernel.org>";
/// Michal Koutný: reviews in the stat_refresh thread and the 2026 one.
pub const KOUTNY: &str = "Michal Koutný <mkoutny@suse.com>";
/// Waiman Long: the 2026 scaled-threshold series (lore
/// 20260319173752.1472864-1-longman@redhat.com), its report of the
/// periodic flush running late.
pub const WAIMAN: &str = "Waiman Long <longman@redhat.com>";
/// Yosry Ahmed: 8d59d2214c23 and 7d7ef0a4686a; in the 2026 thread.
pub const YOSRY: &str = "Yosry Ahmed <yosry@kernel.org>";
/// JP Kobryn: 5da3bfa029d6, the per-subsystem rstat rework that ended the
/// death loss upstream (lore 20250503001222.146355-3-inwardvessel@gmail.com).
pub const JP: &str = "JP Kobryn <inwardvessel@gmail.com>";
/// Leon Huang Fu: "mm/memcontrol: Add memory.stat_refresh for on-demand
/// stats flushing" (lore 20251110101948.19277-1-leon.huangfu@shopee.com).
pub const LEON: &str = "Leon Huang Fu <leon.huangfu@shopee.com>";
/// Chen Ridong: the LTP memcg_stat_rss failures in that thread (lore
/// 7d46ef17-684b-4603-be7a-a9428149da05@huaweicloud.com).
pub const RIDONG: &str = "Chen Ridong <chenridong@huaweicloud.com>";
/// The stable list.
pub const STABLE: &str = "stable@vger.kernel.org";
/// linux-mm.
pub const LINUX_MM: &str = "linux-mm@kvack.org";
/// cgroups.
pub const CGROUPS: &str = "cgroups@vger.kernel.org";
