//! The witness configurations of the behavioural findings, and the larger
//! ones their fix candidates are also checked on.

use crate::config::{Config, Death};
use crate::protocol::per_memcg::fold_skew;

pub(super) fn tree_sb() -> Config {
    Config {
        cpus: 1,
        batch: 1,
        updates: 2,
        vals: vec![1],
        readers: 0,
        periodic: true,
        settle: 2,
        settle_update: true,
        ..Config::default()
    }
}

pub(super) fn tree_sb_larger() -> Config {
    Config {
        tree: vec![0],
        charge: vec![1],
        ..tree_sb()
    }
}

pub(super) fn life_child() -> Config {
    Config::lifetime(1, Death::default()).vals(&[1])
}

pub(super) fn life_parent() -> Config {
    Config::lifetime(
        1,
        Death {
            parent_dies: true,
            folio: true,
            relink: false,
        },
    )
    .vals(&[1])
    .periodic(false)
}

pub(super) fn life_relink() -> Config {
    Config::lifetime(
        1,
        Death {
            relink: true,
            ..Death::default()
        },
    )
    .vals(&[1])
    .periodic(false)
}

pub(super) fn b9() -> Config {
    Config {
        cpus: 2,
        batch: 64,
        updates: 1,
        vals: vec![200, 65],
        readers: 0,
        periodic: false,
        tree: vec![0, 0],
        charge: vec![1, 2],
        read: vec![2],
        ..Config::default()
    }
}

pub(super) fn b9_larger() -> Config {
    Config { updates: 2, ..b9() }
}

pub(super) fn b7() -> Config {
    Config {
        cpus: 1,
        batch: 1,
        updates: 2,
        vals: vec![1],
        readers: 1,
        periodic: true,
        ..Config::default()
    }
}

pub(super) fn b7_larger() -> Config {
    Config { updates: 3, ..b7() }
}

pub(super) fn trigger() -> Config {
    Config {
        cpus: 1,
        batch: 2,
        updates: 2,
        vals: vec![2],
        readers: 1,
        periodic: false,
        tree: vec![0, 1],
        charge: vec![2],
        read: vec![1],
        settle: 2,
        settle_update: true,
        ..Config::default()
    }
}

pub(super) fn trigger_larger() -> Config {
    Config {
        settle: 0,
        settle_update: false,
        read: vec![0],
        ..trigger()
    }
}

/// The racy form at 1-page charges: one CPU charging a child of the root
/// three times while the periodic work flushes, MEMCG_CHARGE_BATCH 1 (the
/// smallest batch; the shortest such witness the DFS finds is 2 * batch + 1
/// charges).
pub(super) fn c12_witness() -> Config {
    Config {
        cpus: 1,
        batch: 1,
        updates: 3,
        vals: vec![1],
        readers: 0,
        periodic: true,
        tree: vec![0],
        charge: vec![1],
        read: vec![0],
        ..Config::default()
    }
}

/// [`c12_witness`] with one more charge.
pub(super) fn c12_larger() -> Config {
    Config {
        updates: 4,
        ..c12_witness()
    }
}

/// Where keeping the break at a flushable level loses a flush with no
/// tree at all (`v6.17-fix-break-if-ancestors`, found by `flushcheck
/// fuzz`): two CPUs charging the root only, 5 and 2 pages in turn, batch 3
/// (trigger 6), the periodic flush. Its walk takes the rstat lock per CPU
/// (`__css_rstat_lock(css, cpu)`): it visits CPU 0 before CPU 0's charges, then in CPU 1's callback
/// resets the root's atomic, which CPU 1's fold had made flushable; CPU 0's
/// charges in between took the break and are neither flushed nor counted.
pub(super) fn c12_root_two_cpus() -> Config {
    Config {
        cpus: 2,
        batch: 3,
        updates: 3,
        vals: vec![5, 2],
        readers: 0,
        periodic: true,
        ..Config::default()
    }
}

/// [`c12_witness`] with six charges.
pub(super) fn c12_six() -> Config {
    Config {
        updates: 6,
        ..c12_witness()
    }
}

/// The race-free form on `cpus` CPUs, each charging the child and its
/// sibling as [`fold_skew`]'s CPU does (the trigger is 64 * cpus, each
/// CPU's child is 6 pages ahead of its parent).
fn fold_skew_on(cpus: usize) -> Config {
    Config {
        cpus,
        ..fold_skew()
    }
}

/// The race-free form on 2 CPUs.
pub(super) fn fold_skew_2() -> Config {
    fold_skew_on(2)
}

/// The race-free form on 3 CPUs.
pub(super) fn fold_skew_3() -> Config {
    fold_skew_on(3)
}

// The configurations at scale: 2 and 3 CPUs, and witnesses larger than
// the minimal one, each checked to still show the finding unfixed. Only
// those whose candidates' searches finish are listed: at 3 CPUs loom (the
// weak-memory findings) and the lifetime DFS do not within 120 s, as each
// candidate's text says.

pub(super) fn tree_sb_cpus2() -> Config {
    Config {
        cpus: 2,
        ..tree_sb()
    }
}

// The lifetime wing's CPUs each charge the dying child once; the periodic
// flush is off (the release flush is the one that misses the child).

pub(super) fn life_child_cpus2() -> Config {
    Config::lifetime(2, Death::default())
        .vals(&[1])
        .periodic(false)
}

pub(super) fn b9_cpus3() -> Config {
    Config {
        cpus: 3,
        vals: vec![200, 65, 200],
        charge: vec![1, 2, 1],
        ..b9()
    }
}

pub(super) fn b9_cpus3_larger() -> Config {
    Config {
        updates: 2,
        vals: vec![100, 100, 40, 25, 100, 100],
        ..b9_cpus3()
    }
}

pub(super) fn b7_cpus2() -> Config {
    Config { cpus: 2, ..b7() }
}

pub(super) fn b7_cpus3() -> Config {
    Config { cpus: 3, ..b7() }
}

pub(super) fn b7_cpus2_larger() -> Config {
    Config {
        updates: 3,
        ..b7_cpus2()
    }
}

// The reader's gate must fire only once every update of memcg 1's subtree
// has folded (`raised` in drive/findings.rs): CPU 0 charges memcg 2 with two
// updates of which the first stays at or below MEMCG_CHARGE_BATCH * n and
// the second crosses it; the other CPUs charge the root, outside memcg 1.

pub(super) fn trigger_cpus2() -> Config {
    Config {
        cpus: 2,
        vals: vec![3],
        charge: vec![2, 0],
        ..trigger()
    }
}

pub(super) fn trigger_cpus2_larger() -> Config {
    Config {
        tree: vec![0, 1, 2],
        charge: vec![3, 0],
        ..trigger_cpus2()
    }
}
