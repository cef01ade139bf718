//! Counterexamples, ready to print: the initial state, the CPU-column
//! trace, the violation, the replay command, and the LKMM litmus export.

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::observe::property::Property;
use crate::observe::record::{render_columns, Step, LEGEND, LEGEND_LIFE, LEGEND_TREE};
use crate::vocab::Family;

/// A counterexample, ready to print.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Counterexample {
    /// Variant name.
    pub variant: String,
    /// The violated property.
    pub property: Property,
    /// Backend that found it.
    pub backend: String,
    /// The variant's family, which picks the trace's legend.
    #[serde(default = "global")]
    pub family: Family,
    /// The release table the litmus export marks accesses by
    /// ([`crate::kernel::marking`]; empty: the family's default).
    #[serde(default)]
    pub release: String,
    /// Configuration.
    pub cfg: Config,
    /// The violation, starting with the property's name.
    pub violation: String,
    /// Kernel-level steps in execution order.
    pub steps: Vec<Step>,
    /// How it was found.
    pub search: String,
    /// `flushcheck replay` token.
    pub token: String,
}

impl Counterexample {
    /// The `{ ... }` initial-state line.
    pub fn initial_state(&self) -> String {
        initial_state(&self.cfg, &self.variant, self.family)
    }

    /// The column diagram, within `width` columns where the threads allow.
    pub fn diagram(&self, width: usize) -> String {
        render_columns(
            &self.initial_state(),
            &self.steps,
            &format!("violated: {}", self.violation),
            width,
        )
    }

    /// The trace as the kernel's statements, one per row
    /// ([`crate::observe::listing`]), in `dialect`'s names (the release
    /// the variant models, as model/protocol/dialect.rs decides), under
    /// the set-up in kernel words and above `conclusion`.
    pub fn listing(
        &self,
        width: usize,
        conclusion: &str,
        dialect: &crate::observe::listing::Dialect,
    ) -> String {
        crate::observe::listing::render_listing_as(
            &kernel_setup(&self.cfg, self.family),
            &self.steps,
            conclusion,
            width,
            dialect,
        )
    }

    /// The core of the trace as an LKMM litmus test, or why it is not
    /// exported (see [`crate::report::litmus`]).
    pub fn litmus(&self) -> Result<String, String> {
        use crate::report::litmus;
        let name = format!("flushcheck-{}-{}", self.variant, self.property).replace('.', "_");
        // A trace touching many variables is sliced to its race.
        litmus::export(&name, &self.steps, self.marking())
    }

    /// The release table the litmus export marks this trace's accesses by.
    pub fn marking(&self) -> &'static crate::kernel::marking::Release {
        use crate::kernel::marking;
        marking::by_name(&self.release).unwrap_or(match self.family {
            Family::Global => &marking::GLOBAL,
            _ => &marking::V6_8,
        })
    }

    /// The same counterexample with kernel identifiers in its trace
    /// (`memcg1->vmstats_percpu[cpu0].state[0]` for `S.1[0]`), for
    /// `--kernel-names`.
    pub fn with_kernel_names(&self) -> Counterexample {
        Counterexample {
            steps: crate::observe::record::with_kernel_names(&self.steps),
            ..self.clone()
        }
    }

    /// [`Counterexample::litmus`] under a test name of the caller's (the
    /// first line, `C name`, renamed).
    pub fn litmus_named(&self, name: &str) -> Result<String, String> {
        let text = self.litmus()?;
        let name = name.replace(['.', '-'], "_");
        Ok(match text.split_once('\n') {
            Some((first, rest)) if first.starts_with("C ") => format!("C {name}\n{rest}"),
            _ => text,
        })
    }

    /// The command that reproduces this counterexample.
    pub fn replay_command(&self) -> String {
        format!("{} replay {}", super::program::program(), self.token)
    }
}

fn global() -> Family {
    Family::Global
}

/// The `{ ... }` line of a trace (the state every execution starts from)
/// and the legend of the short names, which the variant's family picks.
pub fn initial_state(cfg: &Config, variant: &str, family: Family) -> String {
    if family == Family::Lifetime {
        return lifetime_state(cfg, variant);
    }
    let vals: Vec<String> = cfg.vals.iter().map(|v| v.to_string()).collect();
    let per_memcg = family == Family::PerMemcg;
    let (text, tree) = if cfg.tree.is_empty() && !per_memcg {
        (LEGEND, String::new())
    } else if cfg.tree.is_empty() {
        (LEGEND_TREE, "root memcg only; ".to_string())
    } else {
        let parents: Vec<String> = (0..cfg.tree.len())
            .map(|i| format!("{}->{}", i + 1, cfg.tree[i]))
            .collect();
        let charges: Vec<String> = (0..cfg.cpus)
            .map(|c| {
                let l: Vec<String> = cfg.charge_list(c).iter().map(|m| m.to_string()).collect();
                format!("{c}:{}", l.join("+"))
            })
            .collect();
        let reads: Vec<String> = (0..cfg.readers)
            .map(|r| format!("{r}:{}", cfg.read_of(r)))
            .collect();
        (
            LEGEND_TREE,
            format!(
                "memcgs 0 (root) and child->parent {}; CPU:memcg charged [{}]; reader:memcg read [{}]; ",
                parents.join(" "),
                charges.join(" "),
                reads.join(" ")
            ),
        )
    };
    let legend: Vec<String> = text.lines().map(|l| format!("  {l}")).collect();
    format!(
        "{{ {variant}: n = num_online_cpus() = {}; MEMCG_CHARGE_BATCH = {}; {tree}thr = agg = 0; \
         S[c] = U[c] = 0; each CPU runs {} __mod_memcg_state() with val = {}; {} reader(s) x {} \
         read(s); periodic work {} }}\nwhere\n{}",
        cfg.cpus,
        cfg.batch,
        cfg.updates,
        vals.join(","),
        cfg.readers,
        cfg.reads,
        if cfg.periodic { "on" } else { "off" },
        legend.join("\n")
    )
}

/// The memcg in words: `the root` or `memcg 2`.
fn memcg_word(m: u8) -> String {
    if m == 0 {
        "the root".into()
    } else {
        format!("memcg {m}")
    }
}

/// The scenario of `cfg` in the kernel's terms, for a listing: the CPUs,
/// the batch, the tree, what each CPU charges, who reads, whether the
/// periodic flush runs.
pub fn kernel_setup(cfg: &Config, family: Family) -> String {
    if family == Family::Lifetime {
        let d = cfg.death.unwrap_or_default();
        return format!(
            "memcg 2 is a child of memcg 1, a child of the root; {} CPU(s) each charge memcg 2 {} \
             time(s) through {}; rmdir of memcg 2{}; the periodic flush {}.",
            cfg.cpus,
            cfg.updates,
            if d.folio {
                "a folio's memcg reference"
            } else {
                "its objcg under rcu_read_lock()"
            },
            if d.parent_dies { " and of memcg 1" } else { "" },
            if cfg.periodic { "runs" } else { "does not run" }
        );
    }
    let mut s = format!(
        "num_online_cpus() = {}, MEMCG_CHARGE_BATCH = {}",
        cfg.cpus, cfg.batch
    );
    if !cfg.tree.is_empty() {
        let parents: Vec<String> = (0..cfg.tree.len())
            .map(|i| format!("memcg {} a child of {}", i + 1, memcg_word(cfg.tree[i])))
            .collect();
        s.push_str(&format!("; {}", parents.join(", ")));
    }
    s.push('.');
    for c in 0..cfg.cpus {
        let calls: Vec<String> = (0..cfg.updates)
            .map(|k| format!("{} {:+}", memcg_word(cfg.charge_at(c, k)), cfg.val(c, k)))
            .collect();
        s.push_str(&format!(
            " CPU {c} calls __mod_memcg_state() {} time(s): {}.",
            cfg.updates,
            calls.join(", ")
        ));
    }
    if cfg.readers > 0 {
        let reads: Vec<String> = (0..cfg.readers)
            .map(|r| format!("reader {r} reads {}", memcg_word(cfg.read_of(r))))
            .collect();
        s.push_str(&format!(
            " {} ({} time(s) each: mem_cgroup_flush_stats(), then the statistic).",
            reads.join(", "),
            cfg.reads
        ));
    }
    let mut quiescent: Vec<String> = Vec::new();
    for r in 0..cfg.readers.max(1) {
        let m = memcg_word(cfg.read_of(r));
        if !quiescent.contains(&m) {
            quiescent.push(m);
        }
    }
    s.push_str(&format!(
        " The periodic flush_memcg_stats_dwork() {}. After every update has returned, main \
         reads {} the same way. Every counter starts at 0.",
        if cfg.periodic { "runs" } else { "does not run" },
        quiescent.join(" and ")
    ));
    s
}

/// The initial state of a lifetime scenario.
fn lifetime_state(cfg: &Config, variant: &str) -> String {
    let d = cfg.death.unwrap_or_default();
    let legend: Vec<String> = LEGEND_LIFE.lines().map(|l| format!("  {l}")).collect();
    format!(
        "{{ {variant}: memcgs 0 (root), 1 (parent), 2 (child); n = {} CPU(s), each charging the child {} \
         time(s) through {}; periodic flush {}; rmdir of the child{} }}\nwhere\n{}",
        cfg.cpus,
        cfg.updates,
        if d.folio {
            "a folio's reference"
        } else {
            "the objcg under rcu_read_lock()"
        },
        if cfg.periodic { "on" } else { "off" },
        if d.parent_dies { " and of the parent" } else { "" },
        legend.join("\n")
    )
}
