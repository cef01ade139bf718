//! The wrong bounds: documented or reviewed error bounds that the model's
//! exhaustive searches exceed, each with the exact bound as a corrected
//! comment, its derivation (check/derived.rs computes it) and the search
//! that confirms it. None calls for a code change.

use crate::config::Config;
use crate::explore::BackendName::{ShuttleDfs, ShuttleRandom};
use crate::observe::property::Property;

use super::{releases, Claim, Class, CorrectedBound, Finding, Shown, Witness};

fn c1() -> Config {
    Config {
        cpus: 2,
        batch: 2,
        updates: 3,
        vals: vec![1],
        readers: 1,
        reads: 1,
        periodic: false,
        ..Config::default()
    }
}

fn c10() -> Config {
    Config {
        cpus: 1,
        batch: 2,
        updates: 5,
        vals: vec![2],
        readers: 1,
        reads: 2,
        periodic: true,
        tree: vec![0],
        charge: vec![1],
        read: vec![0],
        ..Config::default()
    }
}

fn c18() -> Config {
    Config {
        cpus: 1,
        batch: 1,
        updates: 2,
        vals: vec![1],
        readers: 1,
        reads: 1,
        periodic: false,
        ..Config::default()
    }
}

const PER_MEMCG: &str = "At a decision not to flush memcg m: residue <= s per CPU (what \
     its counter holds below the batch plus the update in flight between __this_cpu_add() \
     and the atomic add of its fold, s = ceil(B / v) * v), counted <= floor(T / s) * s, \
     skipped = 0 (v6.8's skip and v6.17's break act only above T, and only a reset lowers \
     the atomic); for 1-page updates T + n * B. check/derived.rs derives it for a flat \
     tree and one value per CPU. A flush that races the updates resets counts of pages it did not \
     fold (the threshold reset after the walk up to v6.7, the callbacks' resets from v6.8): \
     those pages are behind no count, so no bound in MEMCG_CHARGE_BATCH and nr_cpus covers \
     them; only the periodic flush does, in time.";

/// The wrong bounds.
pub(super) fn findings() -> Vec<Finding> {
    vec![
        Finding {
            id: "c1-bound",
            subject: "memcg: the documented stats error bound is exceeded",
            class: Class::CommentInaccuracy,
            claim: Claim {
                quote: "will let stats be out of sync by atmost (MEMCG_CHARGE_BATCH * \
                        nr_cpus) but only for 2 seconds",
                source: "mm/memcontrol.c, comment \"memcg and lruvec stats flushing\"; \
                         11192d9c124d (\"memcg: flush stats only if updated\"), Shakeel Butt",
            },
            affected: releases::C1.affected,
            introduced: releases::C1.introduced_text,
            first: releases::C1.first,
            last: releases::C1.last,
            closed_by: releases::C1.closed_by,
            witness: Witness {
                variant: "v6.0",
                cfg: c1,
                command: "flushcheck bounds --custom --cpus 2 --batch 2 --updates 3 --val 1 \
                          --no-periodic --variant v6.0 --witness",
                shown: Shown::Property {
                    property: Property::DocumentedErrorBound,
                    backend: ShuttleDfs,
                },
                loom_bound: None,
            },
            larger: None,
            scale: &[],
            also: &[],
            fixes_tag: Some("11192d9c124d (\"memcg: flush stats only if updated\")"),
            files: &["mm/memcontrol.c"],
            weak_memory: false,
            mechanism: "A batch is counted only when the per-CPU count exceeds \
                 MEMCG_CHARGE_BATCH (v5.16-v6.7), so each counted unit stands for up to \
                 B + 1 pages and the threshold may hold n units without triggering a reader, \
                 while each CPU holds up to B + 1 more pages between \
                 __this_cpu_add_return() and atomic_add(). On 2 CPUs with B = 2 a reader \
                 skips with 6 pages missing against a documented 4.",
            impact: "The comment understates the staleness a reader that skips its flush \
                 can see: by more than twice, and by any amount with huge pages or a racing \
                 flush.",
            magnitude: "v5.16-v6.7 with 1-page updates: 2 * n * (B + 1), 8320 pages against \
                 the documented 4096 on 64 CPUs at B = 64; v6.8 on: 2 * n * B, 8192 pages.",
            likelihood: "The bound is reached only by an adversarial schedule; exceeding the \
                 documented figure needs no race.",
            preconditions: "None (sequential consistency, no race for the 2 * n * (B + 1) \
                 part).",
            abstractions: "One statistic item; 1-page updates unless stated.",
            fixes: &[],
            bound: Some(CorrectedBound {
                comment: "Flushing on the reader side only above the threshold lets the \
                    stats be out of sync, when no flush races the read, by at most \
                    2 * nr_cpus * (MEMCG_CHARGE_BATCH + 1) pages for 1-page updates (v5.16 \
                    to v6.7; 2 * nr_cpus * MEMCG_CHARGE_BATCH from v6.8), plus nr_cpus times \
                    the largest update for huge pages; a flush racing the updates can leave \
                    anything written during its walk out of sync until the next flush.",
                derivation: "At a decision not to flush: residue <= n * s (every CPU between \
                    __this_cpu_add_return() and atomic_add(), s <= B + max val), counted <= \
                    floor(n / u) * s (at most n units of u = s / B each), skipped = 0 (a skip \
                    reads a threshold above n; only a reset lowers it); for 1-page updates \
                    s = B + 1, u = 1: 2 * n * (B + 1). check/derived.rs enumerates the \
                    per-CPU states for any configuration.",
                confirm: "flushcheck bounds --exhaustive --variant v5.19,v6.0",
            }),
        },
        Finding {
            id: "c10-bound",
            subject: "memcg: the per-memcg stats error margin does not hold",
            class: Class::CommentInaccuracy,
            claim: Claim {
                quote: "increases from NR_CPUS * MEMCG_CHARGE_BATCH to NR_CPUS * \
                        MEMCG_CHARGE_BATCH * NR_MEMCGS",
                source: "commit message of 8d59d2214c23 (\"mm: memcg: make stats flushing \
                         threshold per-memcg\"), Yosry Ahmed, v6.8-rc1",
            },
            affected: releases::C10.affected,
            introduced: releases::C10.introduced_text,
            first: releases::C10.first,
            last: releases::C10.last,
            closed_by: releases::C10.closed_by,
            witness: Witness {
                variant: "v6.8",
                cfg: c10,
                command: "flushcheck explain --variant v6.8 --property per_memcg_error_bound \
                          --backend shuttle-random --cpus 1 --batch 2 --updates 5 --val 2 \
                          --tree 0 --charge 1 --read 0 --reads 2",
                shown: Shown::Property {
                    property: Property::PerMemcgErrorBound,
                    backend: ShuttleRandom,
                },
                loom_bound: None,
            },
            larger: None,
            scale: &[],
            also: &[],
            fixes_tag: None,
            files: &["mm/memcontrol.c"],
            weak_memory: false,
            mechanism: "The callbacks reset a memcg's counts mid-walk: charges landing \
                 during a flush, on CPUs the walk has passed, are counted and then reset \
                 without being folded. On one CPU and two memcgs: the periodic flush reads \
                 CPU 0's counter of the child, four more charges of 2 pages land and are \
                 counted (the last two skip the add, the count being above the trigger), and \
                 the flush's resets then zero those counts although it folded none of the 8 \
                 pages: the final read of the root does not flush, with 8 pages missing \
                 against NR_CPUS * MEMCG_CHARGE_BATCH * NR_MEMCGS = 1 * 2 * 2 = 4.",
            impact: "The margin quoted for the per-memcg thresholds understates a reader's \
                 staleness; pages reset by a racing flush are behind no count at all.",
            magnitude: "Per memcg, T + n * B = 2 * n * B pages (8192 on 64 CPUs) when no flush \
                 races; unbounded in n, B and NR_MEMCGS when one does (2 s with the periodic \
                 worker on time).",
            likelihood: "Any flush that overlaps charges (the periodic one every 2 s).",
            preconditions: "A flush racing the charges; no weak memory.",
            abstractions: "One statistic item; the periodic flush is the only time bound.",
            fixes: &[],
            bound: Some(CorrectedBound {
                comment: "Per memcg, a reader that does not flush sees at most \
                    MEMCG_CHARGE_BATCH * num_online_cpus() counted pages plus what each CPU \
                    has not folded yet (up to MEMCG_CHARGE_BATCH - 1 plus the update in \
                    flight): 2 * nr_cpus * MEMCG_CHARGE_BATCH for 1-page updates. Pages \
                    charged during a flush that resets their count are bounded only by the \
                    periodic flush.",
                derivation: PER_MEMCG,
                confirm: "flushcheck bounds --exhaustive --variant v6.8,v6.17",
            }),
        },
        Finding {
            id: "c18-bound",
            subject: "memcg: the worst case of the scaled flush threshold is N pages higher",
            class: Class::CommentInaccuracy,
            claim: Claim {
                quote: "N * (MEMCG_CHARGE_BATCH - 1) + vmstats_flush_threshold",
                source: "review of Waiman Long's \"memcg: scale vmstats flush threshold\", \
                         lore 20260319173752.1472864-1-longman@redhat.com (Waiman Long: \
                         \"the worst case scenario can indeed be worse than that\")",
            },
            affected: releases::C18.affected,
            introduced: releases::C18.introduced_text,
            first: releases::C18.first,
            last: releases::C18.last,
            closed_by: releases::C18.closed_by,
            witness: Witness {
                variant: "scaled-2026",
                cfg: c18,
                command: "flushcheck explain --variant scaled-2026 --property \
                          documented_error_bound --cpus 1 --batch 1 --updates 2 --val 1 \
                          --no-periodic --readers 1 --backend shuttle-random",
                shown: Shown::Property {
                    property: Property::DocumentedErrorBound,
                    backend: ShuttleDfs,
                },
                loom_bound: None,
            },
            larger: None,
            scale: &[],
            also: &[],
            fixes_tag: None,
            files: &["mm/memcontrol.c"],
            weak_memory: false,
            mechanism: "A CPU can hold MEMCG_CHARGE_BATCH pages, not B - 1: the update in \
                 flight between __this_cpu_add() and the fold's atomic add. One CPU, B = 1: \
                 the first page folds (the atomic equals T = 1, not above), the second is \
                 written, and a reader skips with 2 pages missing against 1.",
            impact: "The proposal's review understates its worst case by N pages (more with \
                 huge pages), and a racing flush removes any bound.",
            magnitude: "T + N * B for 1-page updates: 64 pages over the claim on 64 CPUs; \
                 T + N * (B - 1 + V) with huge pages of V: N * V over the claim. At B = 64 \
                 and 1024 CPUs: 66240 pages (v1, ilog2), 67584 (v2, int_sqrt), 73856 \
                 (nr_cpus / (ln nr_cpus + 1)) against 131072 for the linear trigger; the \
                 N * B term alone is 65536.",
            likelihood: "An adversarial schedule reaches it; exceeding the claim needs one \
                 update in flight per CPU.",
            preconditions: "None (sequential consistency).",
            abstractions: "One statistic item; no CPU hotplug (nr_cpus is both \
                 num_possible_cpus() and num_online_cpus()); the flush rate is counted on a \
                 deterministic schedule with no periodic flush.",
            fixes: &[],
            bound: Some(CorrectedBound {
                comment: "With the scaled threshold T, a reader that does not flush sees at \
                    most T + N * MEMCG_CHARGE_BATCH pages out of sync for 1-page updates \
                    (T + N * (MEMCG_CHARGE_BATCH - 1 + V) with huge pages of V), when no \
                    flush races the read.",
                derivation: PER_MEMCG,
                confirm: "flushcheck bounds --exhaustive --variant \
                          scaled-2026,scaled-2026-sqrt,scaled-2026-ln",
            }),
        },
    ]
}
