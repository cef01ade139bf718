//! Unused reads: a [`Sink`] in front of the monitor that, before every
//! observation, shows it a read of every shared atomic the flush protocol
//! has (each threshold, the flush time, each aggregate) by every actor of
//! the scenario, each returning the value the location holds at that point.
//! The reads change nothing the protocol computes, so no verdict may
//! change with them (issue 41, tests/suite/unused_reads.rs): a property
//! whose verdict moves is judged at a point a variant's reads place, not
//! against what the history allows.
//!
//! The reads are observations, not steps: the schedules are the same with
//! and without them (the same seed runs the same executions), so a verdict
//! that differs differs on the same execution. A read as a step of its own
//! would add interleavings only between steps that read nothing new, which
//! the injected reads at every other actor's steps already stand for. In
//! execution order (shuttle, std, the exhaustive search) a read returns the
//! last value written; loom's weak memory is left out
//! ([`MonitorPlan::unused_reads`](crate::observe::plan::MonitorPlan) is
//! refused there).

use std::sync::{Arc, Mutex};

use crate::config::Config;
use crate::observe::monitor::Monitor;
use crate::vocab::obs::{Access, Actor, Idiom, Obs, Op, Sink, Var};

/// The monitor, behind the unused reads.
pub struct UnusedReads {
    inner: Arc<Monitor>,
    /// Who reads: every actor the configuration runs.
    actors: Vec<Actor>,
    /// What they read, with its value once known (a threshold starts at
    /// 0; another location once an access shows its value).
    values: Mutex<Vec<(Var, Option<i64>)>>,
}

impl UnusedReads {
    /// Unused reads in front of `inner`, for a scenario on `cfg`.
    pub fn new(inner: Arc<Monitor>, cfg: &Config) -> Self {
        let mut actors: Vec<Actor> = (0..cfg.cpus).map(Actor::Cpu).collect();
        actors.extend((0..cfg.readers).map(Actor::Reader));
        if cfg.periodic {
            actors.push(Actor::Periodic);
        }
        actors.push(Actor::Main);
        let memcgs = cfg.memcgs() as u8;
        let mut values = vec![(Var::Threshold { memcg: None }, Some(0))];
        values.extend((0..memcgs).map(|m| (Var::Threshold { memcg: Some(m) }, Some(0))));
        values.push((Var::FlushTime, None));
        values.extend((0..memcgs).map(|m| (Var::Aggregate { memcg: m }, None)));
        UnusedReads {
            inner,
            actors,
            values: Mutex::new(values),
        }
    }

    fn values(&self) -> std::sync::MutexGuard<'_, Vec<(Var, Option<i64>)>> {
        self.values.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Sink for UnusedReads {
    fn observe(&self, actor: Actor, obs: Obs) {
        let known: Vec<(Var, i64)> = self
            .values()
            .iter()
            .filter_map(|(v, x)| x.map(|x| (*v, x)))
            .collect();
        for &who in &self.actors {
            for &(var, x) in &known {
                let read = Access {
                    var,
                    op: Op::Read(x),
                    idiom: Idiom::AtomicRead,
                };
                self.inner.observe(who, Obs::Access(read));
            }
        }
        if let Obs::Access(a) = obs {
            let now = a.op.written().or(a.op.read());
            if let Some(e) = self.values().iter_mut().find(|(v, _)| *v == a.var) {
                e.1 = now.or(e.1);
            }
        }
        self.inner.observe(actor, obs);
    }

    // The values mirror the protocol's memory in execution order, and the
    // readers are fixed by the configuration: the monitor's state is the
    // whole observer state the search must see.
    fn digest(&self, state: &mut dyn std::hash::Hasher) -> bool {
        self.inner.digest(state)
    }

    fn digest_cpu(&self, cpu: usize, state: &mut dyn std::hash::Hasher) -> bool {
        self.inner.digest_cpu(cpu, state)
    }

    fn digest_renamed(&self, rename: &[usize], state: &mut dyn std::hash::Hasher) -> bool {
        self.inner.digest_renamed(rename, state)
    }

    fn save(&self) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        let inner = self.inner.save()?;
        Some(Box::new((inner, self.values().clone())))
    }

    fn restore(&self, saved: &(dyn std::any::Any + Send + Sync)) {
        type Saved = (
            Box<dyn std::any::Any + Send + Sync>,
            Vec<(Var, Option<i64>)>,
        );
        match saved.downcast_ref::<Saved>() {
            Some((inner, values)) => {
                self.inner.restore(&**inner);
                *self.values() = values.clone();
            }
            None => panic!("flushcheck: UnusedReads::restore was given a state it did not save"),
        }
    }
}
