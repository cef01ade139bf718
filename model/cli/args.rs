//! Arguments shared by several subcommands.

use crate::config::Config;

/// The scenario configuration. A flag left out keeps the default's value;
/// giving any replaces the suite by this one configuration.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ConfigArgs {
    /// num_online_cpus(): updater threads [default: 2].
    #[arg(long)]
    pub cpus: Option<usize>,
    /// MEMCG_CHARGE_BATCH (32 in the kernel; small so that loom finishes)
    /// [default: 1].
    #[arg(long, allow_negative_numbers = true)]
    pub batch: Option<i64>,
    /// __mod_memcg_state() calls per CPU [default: 1].
    #[arg(long)]
    pub updates: Option<usize>,
    /// Update values, comma-separated, cycled over all updates in CPU order;
    /// |val| > batch is a huge page [default: 2,3].
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub val: Option<Vec<i64>>,
    /// Reader threads (memory.stat-style) [default: 1].
    #[arg(long)]
    pub readers: Option<usize>,
    /// Reads per reader thread [default: 1].
    #[arg(long)]
    pub reads: Option<usize>,
    /// Run the periodic flusher thread (the default).
    #[arg(long, conflicts_with = "no_periodic")]
    pub periodic: bool,
    /// Do not run the periodic flusher thread.
    #[arg(long = "no-periodic")]
    pub no_periodic: bool,
    /// Abstract time: jiffies_64 runs from 0 to N and the periodic work is
    /// re-queued every FLUSH_TIME (2) ticks (shuttle only) [default: 0, time
    /// not modelled].
    #[arg(long)]
    pub ticks: Option<usize>,
    /// Ticks the periodic work may run after it is due (deferrable timer)
    /// [default: 0].
    #[arg(long)]
    pub late: Option<usize>,
    /// The memcg tree below the root (memcg 0), comma-separated: the parent
    /// of memcg 1, 2, ... (e.g. 0,1 is root > 1 > 2) [default: the root
    /// alone].
    #[arg(long, value_delimiter = ',')]
    pub tree: Option<Vec<u8>>,
    /// The memcg each CPU charges, cycled over CPUs; `A:B:..` gives a CPU
    /// a charge list its updates cycle through (`1:2,3`: CPU 0 charges
    /// memcgs 1 and 2 in turn, CPU 1 memcg 3) [default: 0].
    #[arg(long, value_delimiter = ',', value_parser = parse_charge)]
    pub charge: Option<Vec<ChargeList>>,
    /// The memcg each reader reads, cycled over readers [default: 0].
    #[arg(long = "read", value_delimiter = ',')]
    pub read_memcg: Option<Vec<u8>>,
    /// How many readers (the first ones) take the ratelimited path
    /// (mem_cgroup_flush_stats_ratelimited(), _delayed() before v6.4),
    /// which flushes only once jiffies_64 is past flush_next_time; needs
    /// --ticks [default: 0].
    #[arg(long, value_name = "N")]
    pub ratelimited: Option<usize>,
    /// Eventual conservation: N more flushes after the final one, the
    /// aggregate checked after each [default: 0].
    #[arg(long)]
    pub settle: Option<usize>,
    /// After the --settle flushes, one more 1-page update per CPU and one
    /// more flush: does a later update bring a lost update back?
    #[arg(long = "settle-update")]
    pub settle_update: bool,
}

impl ConfigArgs {
    /// Whether any configuration flag was given.
    pub fn given(&self) -> bool {
        self.cpus.is_some()
            || self.batch.is_some()
            || self.updates.is_some()
            || self.val.is_some()
            || self.readers.is_some()
            || self.reads.is_some()
            || self.periodic
            || self.no_periodic
            || self.ticks.is_some()
            || self.late.is_some()
            || self.tree.is_some()
            || self.charge.is_some()
            || self.read_memcg.is_some()
            || self.ratelimited.is_some()
            || self.settle.is_some()
            || self.settle_update
    }

    /// The flags applied to `base`.
    pub fn over(&self, base: &Config) -> Config {
        Config {
            cpus: self.cpus.unwrap_or(base.cpus),
            batch: self.batch.unwrap_or(base.batch),
            updates: self.updates.unwrap_or(base.updates),
            vals: self.val.clone().unwrap_or_else(|| base.vals.clone()),
            readers: self.readers.unwrap_or(base.readers),
            reads: self.reads.unwrap_or(base.reads),
            periodic: if self.no_periodic {
                false
            } else {
                self.periodic || base.periodic
            },
            ticks: self.ticks.unwrap_or(base.ticks),
            late: self.late.unwrap_or(base.late),
            tree: self.tree.clone().unwrap_or_else(|| base.tree.clone()),
            charge: match &self.charge {
                Some(c) if c.iter().all(|l| l.0.len() == 1) => c.iter().map(|l| l.0[0]).collect(),
                Some(_) => Vec::new(),
                None => base.charge.clone(),
            },
            charges: match &self.charge {
                Some(c) if c.iter().any(|l| l.0.len() != 1) => {
                    c.iter().map(|l| l.0.clone()).collect()
                }
                Some(_) => Vec::new(),
                None => base.charges.clone(),
            },
            read: self.read_memcg.clone().unwrap_or_else(|| base.read.clone()),
            ratelimited: self.ratelimited.unwrap_or(base.ratelimited),
            settle: self.settle.unwrap_or(base.settle),
            settle_update: self.settle_update || base.settle_update,
            death: base.death,
        }
    }

    /// The flags applied to the default configuration.
    pub fn config(&self) -> Config {
        self.over(&Config::default())
    }
}

/// Output format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Plain text (80 columns where the threads allow).
    Text,
    /// Markdown for a review thread (reads as plain text; no HTML).
    Markdown,
    /// JSON.
    Json,
}

/// A loom preemption bound; `None` is unbounded.
#[derive(Clone, Copy, Debug)]
pub struct Bound(pub Option<usize>);

/// Parse a preemption bound: a number, or "unbounded".
pub fn parse_bound(s: &str) -> Result<Bound, String> {
    match s {
        "unbounded" | "none" => Ok(Bound(None)),
        _ => s.parse::<usize>().map(|b| Bound(Some(b))).map_err(|_| {
            format!("{s:?} is not a preemption bound: expected a number or \"unbounded\"")
        }),
    }
}

/// Print `v` as pretty JSON on stdout.
pub fn print_json(v: &impl serde::Serialize) -> Result<(), String> {
    println!(
        "{}",
        serde_json::to_string_pretty(v).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// The version of the `--json` documents' format: raised when a field
/// changes meaning or goes away (a new field does not raise it).
pub const JSON_VERSION: u64 = 1;

/// `data` as a `--json` document: `{"version": JSON_VERSION, "kind": kind,
/// "flushcheck": the crate's version, "data": data}`, whose schema is
/// `docs/schemas/KIND.json`.
pub fn json_doc(kind: &str, data: &impl serde::Serialize) -> Result<String, String> {
    let data = serde_json::to_value(data).map_err(|e| e.to_string())?;
    let doc = serde_json::json!({
        "version": JSON_VERSION,
        "kind": kind,
        "flushcheck": env!("CARGO_PKG_VERSION"),
        "data": data,
    });
    serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())
}

/// Print `data` as a `--json` document of `kind` ([`json_doc`]).
pub fn print_doc(kind: &str, data: &impl serde::Serialize) -> Result<(), String> {
    println!("{}", json_doc(kind, data)?);
    Ok(())
}

/// The data of a `--json` document of one of `kinds` read back (or, from
/// before documents had a version, a bare array); the error says what the
/// text is instead.
pub fn doc_data(text: &str, kinds: &[&str]) -> Result<serde_json::Value, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if v.is_array() {
        return Ok(v);
    }
    let kind = v["kind"].as_str().unwrap_or("");
    if !kinds.contains(&kind) {
        return Err(format!(
            "a document of kind {kind:?}, where {} is expected",
            kinds.join(" or ")
        ));
    }
    match v["version"].as_u64() {
        Some(n) if n <= JSON_VERSION => Ok(v["data"].clone()),
        n => Err(format!(
            "format version {n:?}: this flushcheck reads versions up to {JSON_VERSION}"
        )),
    }
}

/// One CPU's entry of `--charge`: the memcgs its updates charge in turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChargeList(pub Vec<u8>);

/// Parse one CPU's entry of `--charge`: a memcg, or memcgs joined by `:`.
fn parse_charge(s: &str) -> Result<ChargeList, String> {
    s.split(':')
        .map(|m| {
            m.trim().parse::<u8>().map_err(|_| {
                format!("{s:?}: a memcg number (0-7), or memcgs joined by ':' (e.g. 1:2)")
            })
        })
        .collect::<Result<Vec<u8>, String>>()
        .map(ChargeList)
}
