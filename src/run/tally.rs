//! What the workers handed back, turned into one manager's result of a workload: totals, each
//! worker and target, the time series, CPU, the first error.

use super::monitor::{Clock, Window, reconciled};
use super::{timestamp, unix_ns};
use crate::host::cpu;
use crate::plan::{Prepared, WorkerPlan};
use crate::result::{
    FirstError, Lateness, ManagerResult, Metrics, ReplayResult, TargetResult, Totals, WorkerResult, WorkloadResult,
    errno_text,
};
use crate::stats::{Histogram, IoStats, Op};
use crate::verify::block::VerifyResult;
use crate::worker::WorkerOutcome;

/// A workload's run on this manager, as the workers ended it.
pub(super) struct Ended<'a> {
    pub(super) prep: &'a Prepared,
    pub(super) plans: &'a [WorkerPlan],
    pub(super) outcomes: &'a [WorkerOutcome],
    pub(super) window: Window,
    pub(super) clock: &'a Clock,
    /// This manager's rank and host name.
    pub(super) rank: u32,
    pub(super) host: String,
}

impl Ended<'_> {
    /// This manager's result of the workload named `spec`.
    pub(super) fn result(self, spec: &str) -> WorkloadResult {
        let Window { start, end, intervals, started_at, stops } = &self.window;
        let recorded_ns = end.at_ns.saturating_sub(start.at_ns);
        // Recorded: the time asked, or to the last I/O of a count, or to an interruption.
        let secs = if self.clock.timed() {
            recorded_ns as f64 / 1e9
        } else {
            self.outcomes.iter().map(|o| o.last_ns).max().unwrap_or(0) as f64 / 1e9
        };
        let (workers, targets, raw) = self.breakdown(secs);
        let metrics = Metrics::new(&raw, secs);
        let cpu = cpu::usage(&start.cpu, &end.cpu, metrics.ios, metrics.iops);
        let outstanding = self.plans.iter().map(|p| p.outstanding as u64 * p.targets.len() as u64).sum();
        let intervals = reconciled(intervals, metrics.ios, metrics.bytes);
        let totals = Totals { metrics, outstanding, cpu };
        let record_start_unix_ns = unix_ns(*started_at);
        WorkloadResult {
            spec: spec.into(),
            started_at: timestamp(*started_at),
            duration_s: secs,
            ramp_s: self.clock.ramp_ns as f64 / 1e9,
            managers: vec![ManagerResult {
                rank: self.rank,
                host: self.host.clone(),
                workers: self.plans.len(),
                totals: totals.clone(),
                record_start_unix_ns,
                record_end_unix_ns: record_start_unix_ns + recorded_ns,
                stopped_ms: stops.timed.as_secs_f64() * 1e3,
                stops_untimed: stops.untimed,
            }],
            start_skew_ms: 0.0,
            first_error: self.first_error(start.at_ns),
            verify: self.verify(),
            fs: None,
            replay: self.replay(),
            totals,
            workers,
            targets,
            intervals,
        }
    }

    /// With `--verify`: what the workers' checkers found, summed.
    fn verify(&self) -> Option<VerifyResult> {
        let block_bytes = self.prep.verify_block()?;
        let mut sum = VerifyResult { block_bytes, checked_blocks: 0, mismatches: 0, found: Vec::new() };
        for c in self.outcomes.iter().filter_map(|o| o.checker.as_ref()) {
            sum.add(&c.result());
        }
        Some(sum)
    }

    /// What the replaying workers replayed (the first one's trace named; their I/Os and
    /// lateness together).
    fn replay(&self) -> Option<ReplayResult> {
        let mut replays = self.plans.iter().zip(self.outcomes).filter_map(|(p, o)| Some((p.replay.as_ref()?, o)));
        let ((r, summary), _) = replays.clone().next()?;
        let lateness = replays.try_fold(Histogram::default(), |mut h, (_, o)| {
            h += o.lateness.as_ref()?;
            Some(h)
        });
        Some(ReplayResult {
            trace: r.trace.display().to_string(),
            format: summary.format.map_or("", |f| f.name()).into(),
            trace_ios: self.plans.iter().filter_map(|p| Some(p.replay.as_ref()?.1.total())).sum(),
            speed: r.speed.to_string(),
            fit: format!("{:?}", r.fit).to_lowercase(),
            lateness: lateness.map(Lateness::of),
        })
    }

    /// Each worker's and each target's result over `secs`, and the sum of every I/O.
    fn breakdown(&self, secs: f64) -> (Vec<WorkerResult>, Vec<TargetResult>, IoStats) {
        let prep = self.prep;
        let mut all = IoStats::default();
        let mut per_target: Vec<(IoStats, u64)> = vec![Default::default(); prep.targets().len()];
        let mut workers = Vec::new();
        for (i, (plan, o)) in self.plans.iter().zip(self.outcomes).enumerate() {
            let waited = self.window.cpu_waits(i);
            let mut wsum = IoStats::default();
            let mut targets = Vec::new();
            for (ws, st) in plan.targets.iter().zip(&o.targets) {
                wsum += st;
                per_target[ws.target].0 += st;
                per_target[ws.target].1 += plan.outstanding as u64;
                targets.push(TargetResult {
                    path: prep.targets()[ws.target].path.clone(),
                    manager: self.rank,
                    start_offset: ws.start,
                    working_set_bytes: ws.size,
                    outstanding: plan.outstanding as u64,
                    device: None,
                    metrics: Metrics::new(st, secs),
                });
            }
            all += &wsum;
            workers.push(WorkerResult {
                name: plan.name.clone(),
                manager: self.rank,
                spec: plan.spec.name.clone(),
                engine: Some(o.engine.clone()),
                outstanding: Some(plan.outstanding),
                cpus: o.cpus.clone(),
                numa_nodes: crate::host::placement::nodes_of_cpus(&o.cpus),
                waited_for_cpu_ms: waited.map(|w| w.ns as f64 / 1e6),
                cpu_waits: waited.map(|w| w.times),
                metrics: Metrics::new(&wsum, secs),
                targets,
            });
        }
        let targets = prep
            .targets()
            .iter()
            .zip(&per_target)
            .enumerate()
            .filter(|(_, (_, (_, qd)))| *qd > 0)
            .map(|(i, (info, (st, qd)))| {
                // The working set of the first worker using it (workers may differ; each
                // worker's own entry has its own).
                let ws =
                    self.plans.iter().flat_map(|p| &p.targets).find(|w| prep.targets()[w.target].path == info.path);
                TargetResult {
                    path: info.path.clone(),
                    manager: self.rank,
                    start_offset: ws.map_or(0, |w| w.start),
                    working_set_bytes: ws.map_or(0, |w| w.size),
                    outstanding: *qd,
                    device: self.window.device_time(i),
                    metrics: Metrics::new(st, secs),
                }
            })
            .collect();
        (workers, targets, all)
    }

    /// The earliest failed I/O of any worker, timed from the start of recording.
    fn first_error(&self, record_start_ns: u64) -> Option<FirstError> {
        let (plan, f) = self
            .plans
            .iter()
            .zip(self.outcomes)
            .filter_map(|(p, o)| Some((p, o.first_error?)))
            .min_by_key(|(_, f)| f.at_ns)?;
        Some(FirstError {
            manager: self.rank,
            worker: plan.name.clone(),
            path: self.prep.targets()[plan.targets[f.target].target].path.clone(),
            offset: f.offset,
            write: f.op == Op::Write,
            op: Some(f.op),
            errno: f.errno,
            text: errno_text(f.errno),
            at_s: (f.at_ns as f64 - record_start_ns as f64) / 1e9,
        })
    }
}
