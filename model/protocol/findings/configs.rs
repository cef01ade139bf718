//! The witness configurations of the behavioural findings, and the larger
//! ones their fix candidates are also checked on.

use crate::config::{Config, Death};
use crate::protocol::per_memcg::fold_skew;

pub(super) fn c12_witness() -> Config {
    Config {
        cpus: 1,
        batch: 2,
        updates: 3,
        vals: vec![2],
        readers: 0,
        periodic: true,
        tree: vec![0],
        charge: vec![1],
        read: vec![0],
        ..Config::default()
    }
}

pub(super) fn c12_larger() -> Config {
    Config {
        updates: 4,
        ..c12_witness()
    }
}

pub(super) fn fold_skew_larger() -> Config {
    Config {
        periodic: true,
        ..fold_skew()
    }
}

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
