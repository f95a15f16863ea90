//! One test at one thread count: every thread started together, the main thread keeping the
//! time series and the live line, and what the threads hand back turned into a workload's
//! result with IOzone's figures (children see, parent sees, per thread).

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime};

use super::thread::{self, LiveCounts, Outcome, Shared, Work};
use crate::cpu::{self, CpuUsage};
use crate::result::{
    FirstError, FsFigures, Interval, ManagerResult, Metrics, TargetResult, Totals, WorkerResult, WorkloadResult,
    errno_text,
};
use crate::run::{Count, Observer, Phase, Progress, Snapshot, timestamp};
use crate::stats::{IoStats, Op};

/// A test as the threads ended it.
pub(super) struct Ran {
    pub(super) outcomes: Vec<Outcome>,
    pub(super) cpu_start: cpu::CpuSnapshot,
    pub(super) cpu_end: cpu::CpuSnapshot,
    pub(super) intervals: Vec<Interval>,
    pub(super) started_at: SystemTime,
    /// The user asked to stop.
    pub(super) stopped: bool,
}

/// Runs `works` (one per thread, in `dir`) together; `progress` says where the study is as it
/// starts (its elapsed time grows with each interval).
pub(super) fn run(works: &[Work], dir: &str, progress: Progress, every: Duration, observer: &mut dyn Observer) -> Ran {
    let shared = Shared {
        epoch: Instant::now(),
        barrier: Barrier::new(works.len() + 1),
        first_done_ns: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        live: works.iter().map(|_| LiveCounts::default()).collect(),
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = works
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("iogauge-fs-{}", i + 1))
                    .spawn_scoped(s, move || thread::run(i, w, shared))
                    .expect("a thread for the test (the thread limit was checked before)")
            })
            .collect();
        let cpu_start = cpu::snapshot();
        let started_at = SystemTime::now();
        shared.barrier.wait();
        let t0 = shared.epoch.elapsed();
        let mut samples = vec![Sample { at: t0, counts: (0, 0, 0), cpu: cpu_start.clone() }];
        let mut stopped = false;
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20).min(every));
            if observer.stop_requested() && !stopped {
                stopped = true;
                shared.stop.store(true, Relaxed);
            }
            let t = shared.epoch.elapsed();
            let last = samples.last().expect("the start");
            if t - last.at < every {
                continue;
            }
            let now = Sample { at: t, counts: counts(&shared.live), cpu: cpu::snapshot() };
            // A file-system test times whole files' operations, not I/Os: no percentiles.
            let iv = interval(last, &now, t0);
            let counts = works
                .iter()
                .zip(&shared.live)
                .enumerate()
                .map(|(i, (w, c))| Count {
                    manager: 0,
                    worker: format!("thread {}", i + 1),
                    target: dir.to_string(),
                    op: Op::data(w.test.writes()),
                    ios: c.ios.load(Relaxed),
                    bytes: c.bytes.load(Relaxed),
                    errors: 0,
                })
                .filter(|c| c.ios > 0)
                .collect();
            let since = t.as_secs_f64();
            let study = Progress {
                elapsed_s: progress.elapsed_s + since,
                left_s: progress.left_s.map(|l| (l - since).max(0.0)),
                ..progress.clone()
            };
            observer.interval(&Snapshot {
                workload: works[0].test.name(),
                phase: Phase::Run,
                elapsed_s: iv.t_s,
                total_s: None,
                ios: now.counts.0 - last.counts.0,
                bytes: now.counts.1 - last.counts.1,
                response_ns: now.counts.2 - last.counts.2,
                interval: iv,
                in_flight: shared.live.len() as u64,
                counts,
                study: Some(study),
            });
            samples.push(now);
        }
        let outcomes: Vec<Outcome> = handles.into_iter().map(|h| h.join().expect("a test thread panicked")).collect();
        let cpu_end = cpu::snapshot();
        // The series ends with the last thread's last record, holding every count: samples
        // taken after it (while threads closed or marked their files) give way to it.
        // It starts with the first thread's first record, as the totals do.
        let at = |ns: u64| Duration::from_nanos(ns);
        let start = at(outcomes.iter().map(|o| o.start_ns).min().unwrap_or(0));
        let end = at(outcomes.iter().map(|o| o.end_ns).max().unwrap_or(0)).max(start + at(1));
        samples[0].at = start;
        samples.retain(|s| s.at == start || (s.at > start && s.at < end));
        samples.push(Sample { at: end, counts: counts(&shared.live), cpu: cpu_end.clone() });
        let intervals = samples.windows(2).map(|w| interval(&w[0], &w[1], start)).collect();
        Ran { outcomes, cpu_start, cpu_end, intervals, started_at, stopped }
    })
}

/// Records, bytes and response time of all threads so far.
fn counts(live: &[LiveCounts]) -> (u64, u64, u64) {
    live.iter().fold((0, 0, 0), |(i, b, r), c| {
        (i + c.ios.load(Relaxed), b + c.bytes.load(Relaxed), r + c.response_ns.load(Relaxed))
    })
}

/// One look at the running threads: when (from the epoch), their counts (records, bytes,
/// response time), and the CPU counters then.
struct Sample {
    at: Duration,
    counts: (u64, u64, u64),
    cpu: cpu::CpuSnapshot,
}

/// The interval between two samples, timed from `t0`.
fn interval(a: &Sample, b: &Sample, t0: Duration) -> Interval {
    let secs = (b.at - a.at).as_secs_f64();
    let ios = b.counts.0 - a.counts.0;
    Interval {
        t_s: (b.at - t0).as_secs_f64(),
        duration_s: secs,
        iops: ios as f64 / secs,
        mbps: (b.counts.1 - a.counts.1) as f64 / secs / 1e6,
        avg_response_ms: (ios > 0).then(|| (b.counts.2 - a.counts.2) as f64 / ios as f64 / 1e6),
        cpu_pct: cpu::utilization(&a.cpu, &b.cpu),
        percentiles_ms: Default::default(),
        histogram: None,
    }
}

/// What a test's result says of its setting, beside the measurements.
pub(super) struct Setting<'a> {
    pub(super) works: &'a [Work],
    /// The directory: the target of every thread.
    pub(super) dir: &'a str,
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
            let metrics = Metrics::new(&o.stats, (o.end_ns - o.start_ns) as f64 / 1e9);
            let w = &s.works[i];
            workers.push(WorkerResult {
                name: format!("thread {}", i + 1),
                manager: 0,
                spec: w0.test.name().into(),
                engine: "psync".into(),
                outstanding: 1,
                cpus: Vec::new(),
                numa_nodes: Vec::new(),
                targets: vec![directory(s.dir, w.files.len() as u64 * w.file_bytes, 1, &metrics)],
                metrics,
            });
        }
        let metrics = Metrics::new(&all, wall);
        let cpu: CpuUsage = cpu::usage(&self.cpu_start, &self.cpu_end, wall, metrics.ios, metrics.iops);
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
        let unix_ns = self.started_at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        WorkloadResult {
            spec: w0.test.name().into(),
            started_at: timestamp(self.started_at),
            duration_s: wall,
            ramp_s: 0.0,
            managers: vec![ManagerResult {
                rank: 0,
                host: s.host.clone(),
                workers: s.works.len(),
                totals: totals.clone(),
                record_start_unix_ns: unix_ns,
                record_end_unix_ns: unix_ns + (end - start),
            }],
            targets: vec![directory(s.dir, fs.file_set_bytes, s.works.len() as u64, &totals.metrics)],
            totals,
            workers,
            intervals: self.intervals.clone(),
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
                worker: format!("thread {}", i + 1),
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

/// The directory as a target: its files' bytes are the working set.
fn directory(dir: &str, bytes: u64, outstanding: u64, metrics: &Metrics) -> TargetResult {
    TargetResult {
        path: dir.into(),
        manager: 0,
        start_offset: 0,
        working_set_bytes: bytes,
        outstanding,
        metrics: metrics.clone(),
    }
}
