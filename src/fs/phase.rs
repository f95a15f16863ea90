//! One test at one thread count: every thread started together under the run's monitor
//! (`run::run_threads`: the time series, the live line), and what the threads hand back
//! turned into a workload's result with IOzone's figures (children see, parent sees, per
//! thread).

use std::sync::atomic::AtomicU64;
use std::time::{Duration, SystemTime};

use super::thread::{self, Outcome, Work};
use crate::host::cpu::{self, CpuUsage};
use crate::result::{FirstError, FsFigures, ManagerResult, Metrics, Totals, WorkerResult, WorkloadResult, errno_text};
use crate::run::{Observer, Watched, run_threads, timestamp};
use crate::stats::{IoStats, Op};

/// A test as the threads ended it.
pub(super) struct Ran {
    pub(super) outcomes: Vec<Outcome>,
    pub(super) watched: Watched,
}

/// Runs `works` (one per thread, in `dir`) together, the monitor sampling every `every` and
/// telling `observer`.
pub(super) fn run(works: &[Work], dir: &str, every: Duration, observer: &mut dyn Observer) -> Ran {
    let threads: Vec<(String, String)> = (0..works.len()).map(|i| (thread_name(i), dir.to_string())).collect();
    let first_done_ns = AtomicU64::new(0);
    let (outcomes, watched) = run_threads(&threads, works[0].test.name(), every, observer, |i, lane| {
        thread::run(i, &works[i], lane, &first_done_ns)
    });
    Ran { outcomes, watched }
}

/// Thread `i`'s name, in the live counts and the result.
fn thread_name(i: usize) -> String {
    format!("thread {}", i + 1)
}

/// What a test's result says of its setting, beside the measurements.
pub(super) struct Setting<'a> {
    pub(super) works: &'a [Work],
    pub(super) filesystem: String,
    pub(super) caches_dropped: bool,
    pub(super) host_memory_bytes: u64,
    pub(super) host: String,
}

impl Ran {
    /// The workload's result: the totals over the phase's wall time (the parent's view), each
    /// thread over its own time, and IOzone's figures.
    pub(super) fn result(&self, s: &Setting) -> WorkloadResult {
        let w0 = &s.works[0];
        let start = self.outcomes.iter().map(|o| o.start_ns).min().unwrap_or(0);
        let end = self.outcomes.iter().map(|o| o.end_ns).max().unwrap_or(start);
        let wall = (end - start) as f64 / 1e9;
        let mut all = IoStats::default();
        let mut workers = Vec::new();
        let mut rates = Vec::new();
        let mut children_ops = 0.0;
        for (i, o) in self.outcomes.iter().enumerate() {
            all += &o.stats;
            let (sw_bytes, sw_ios, sw_ns) = o.stonewall;
            let own = (sw_ns.saturating_sub(o.start_ns)) as f64 / 1e9;
            rates.push(if own > 0.0 { sw_bytes as f64 / own } else { 0.0 });
            children_ops += if own > 0.0 { sw_ios as f64 / own } else { 0.0 };
            let waited = self.watched.cpu_waits.get(i).copied().flatten();
            workers.push(WorkerResult {
                name: thread_name(i),
                manager: 0,
                spec: w0.test.name().into(),
                // A thread reads and writes its files itself: no engine, no depth, no targets
                // (its files are in `fs`).
                engine: None,
                outstanding: None,
                cpus: Vec::new(),
                numa_nodes: Vec::new(),
                waited_for_cpu_ms: waited.map(|w| w.ns as f64 / 1e6),
                cpu_waits: waited.map(|w| w.times),
                targets: Vec::new(),
                metrics: Metrics::new(&o.stats, (o.end_ns - o.start_ns) as f64 / 1e9),
            });
        }
        let metrics = Metrics::new(&all, wall);
        let (cpu_start, cpu_end) = (&self.watched.cpu_start, &self.watched.cpu_end);
        let cpu: CpuUsage = cpu::usage(cpu_start, cpu_end, metrics.ios, metrics.iops);
        let children: f64 = rates.iter().sum();
        let bytes = metrics.bytes as f64;
        let stonewall_ns = self.outcomes.iter().map(|o| o.stonewall.2).min().unwrap_or(start);
        let fs = FsFigures {
            test: w0.test.name().into(),
            threads: s.works.len() as u32,
            files: s.works.iter().map(|w| w.files.len() as u64).sum(),
            file_bytes: w0.file_bytes,
            record_bytes: w0.record,
            io: if w0.direct { "direct" } else { "buffered" }.into(),
            fsync_included: w0.fsync && w0.test.writes(),
            close_included: w0.close,
            caches_dropped: s.caches_dropped,
            filesystem: s.filesystem.clone(),
            file_set_bytes: s.works.iter().map(|w| w.files.len() as u64 * w.file_bytes).sum(),
            host_memory_bytes: s.host_memory_bytes,
            children_mbps: children / 1e6,
            children_mibps: children / (1u64 << 20) as f64,
            parent_mbps: if wall > 0.0 { bytes / wall / 1e6 } else { 0.0 },
            parent_mibps: if wall > 0.0 { bytes / wall / (1u64 << 20) as f64 } else { 0.0 },
            thread_min_mbps: rates.iter().copied().fold(f64::INFINITY, f64::min) / 1e6,
            thread_max_mbps: rates.iter().copied().fold(0.0, f64::max) / 1e6,
            thread_avg_mbps: children / rates.len().max(1) as f64 / 1e6,
            children_ops_per_s: children_ops,
            stonewall_s: (stonewall_ns.saturating_sub(start)) as f64 / 1e9,
            min_xfer_bytes: self.outcomes.iter().map(|o| o.stonewall.0).min().unwrap_or(0),
        };
        let first_error = self.first_error(start);
        let totals = Totals { metrics, outstanding: s.works.len() as u64, cpu };
        let started_at = self.watched.started_at;
        let unix_ns = started_at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        WorkloadResult {
            spec: w0.test.name().into(),
            started_at: timestamp(started_at),
            duration_s: wall,
            ramp_s: 0.0,
            managers: vec![ManagerResult {
                rank: 0,
                host: s.host.clone(),
                workers: s.works.len(),
                totals: totals.clone(),
                record_start_unix_ns: unix_ns,
                record_end_unix_ns: unix_ns + (end - start),
                stopped_ms: self.watched.stops.timed.as_secs_f64() * 1e3,
                stops_untimed: self.watched.stops.untimed,
            }],
            targets: Vec::new(),
            totals,
            workers,
            intervals: self.watched.intervals.clone(),
            start_skew_ms: 0.0,
            first_error,
            verify: None,
            fs: Some(fs),
            replay: None,
        }
    }

    /// The first failed I/O of any thread, timed from the phase's start.
    fn first_error(&self, start: u64) -> Option<FirstError> {
        self.outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Some((i, o.failure.as_ref()?)))
            .min_by_key(|(_, f)| f.at_ns)
            .map(|(i, f)| FirstError {
                manager: 0,
                worker: thread_name(i),
                path: f.path.display().to_string(),
                offset: f.offset,
                write: f.write,
                op: Some(Op::data(f.write)),
                errno: f.errno,
                text: errno_text(f.errno),
                at_s: f.at_ns.saturating_sub(start) as f64 / 1e9,
            })
    }
}
