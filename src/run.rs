//! Runs a prepared test: starts the workers together, watches the clock (ramp-up, recording,
//! interval samples, CPU), and turns what the workers hand back into the result document.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::cpu::{self, CpuSnapshot};
use crate::error::{Result, runtime};
use crate::host;
use crate::plan::Prepared;
use crate::result::{Interval, Metrics, ResultDoc, RunResult, SCHEMA, TargetResult, Totals, WorkerResult};
use crate::stats::IoStats;
use crate::worker::{self, Control, Live, WorkerJob};

/// Which part of a run the live status describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Ramp-up: running, not recorded.
    Ramp,
    /// Recording.
    Run,
}

/// What the live line shows, once per interval.
#[derive(Debug, Clone)]
pub struct LiveStatus<'a> {
    /// The access specification running.
    pub spec: &'a str,
    /// Ramp-up or recording.
    pub phase: Phase,
    /// Seconds since the workers started.
    pub elapsed_s: f64,
    /// Ramp-up plus run time, when the test is timed.
    pub total_s: Option<f64>,
    /// Over the last interval.
    pub iops: f64,
    /// 10^6 bytes/s over the last interval.
    pub mbps: f64,
    /// Mean response time over the last interval.
    pub avg_response_ms: Option<f64>,
    /// CPU utilisation over the last interval.
    pub cpu_pct: f64,
}

/// Receives progress while a test runs (the live line, or nothing).
pub trait Progress {
    /// Called once per interval.
    fn live(&mut self, status: &LiveStatus);
    /// Called when a run ends.
    fn done(&mut self);
}

/// Shows nothing.
pub struct Silent;

impl Progress for Silent {
    fn live(&mut self, _: &LiveStatus) {}
    fn done(&mut self) {}
}

/// RFC 3339 UTC with milliseconds.
pub fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// Runs every access specification of the test in turn and returns the document.
pub fn run_test(prep: &Prepared, progress: &mut dyn Progress) -> Result<ResultDoc> {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let mut results = Vec::new();
    for r in 0..prep.runs.len() {
        results.push(run_one(prep, r, progress)?);
        progress.done();
    }
    Ok(ResultDoc {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: timestamp(started),
        duration_s: t0.elapsed().as_secs_f64(),
        host: host::current(
            prep.targets.iter().map(|t| host::DeviceModel { target: t.path.clone(), model: t.model.clone() }).collect(),
        ),
        config: prep.config.clone(),
        target_info: prep.targets.clone(),
        results,
        warnings: prep.warnings.clone(),
        interrupted: false,
    })
}

/// Part `i` of `total` split over `n` (the first `total % n` get one more).
fn share(total: Option<u64>, n: usize, i: usize) -> Option<u64> {
    total.map(|t| t / n as u64 + u64::from((i as u64) < t % n as u64))
}

#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    ios: u64,
    bytes: u64,
    response_ns: u64,
}

fn sum_live(live: &[Live]) -> Sums {
    live.iter().fold(Sums::default(), |s, l| Sums {
        ios: s.ios + l.ios.load(Relaxed),
        bytes: s.bytes + l.bytes.load(Relaxed),
        response_ns: s.response_ns + l.response_ns.load(Relaxed),
    })
}

/// A point of the monitor's timeline.
#[derive(Debug, Clone)]
struct Mark {
    at_ns: u64,
    sums: Sums,
    cpu: CpuSnapshot,
}

fn run_one(prep: &Prepared, r: usize, progress: &mut dyn Progress) -> Result<RunResult> {
    let s = &prep.config.test;
    let plans = prep.plan_run(r);
    let n = plans.len();
    let counted = s.ios.is_some() || s.bytes.is_some();
    let ramp_ns = if counted { 0 } else { s.ramp.as_nanos() as u64 };
    let end_ns = if counted { u64::MAX } else { ramp_ns + s.time.as_nanos() as u64 };
    let ctl = Control {
        barrier: Barrier::new(n + 1),
        epoch: OnceLock::new(),
        record_start_ns: ramp_ns,
        record_end_ns: end_ns,
        stop: AtomicBool::new(false),
        failed: AtomicBool::new(false),
        finished: AtomicUsize::new(0),
        live: (0..n).map(|_| Live::default()).collect(),
    };
    let spec_name = prep.runs[r].name.as_str();
    let (outcomes, start, end, intervals, started_at) = std::thread::scope(|sc| {
        let handles: Vec<_> = plans
            .iter()
            .enumerate()
            .map(|(i, plan)| {
                let job = WorkerJob {
                    index: i,
                    plan: plan.clone(),
                    targets: plan.targets.iter().map(|ws| prep.targets[ws.target].clone()).collect(),
                    engine: s.engine,
                    data: s.data,
                    seed: s.seed,
                    ios_limit: share(s.ios, n, i),
                    bytes_limit: share(s.bytes, n, i),
                    arrivals: s.arrivals,
                };
                let ctl = &ctl;
                std::thread::Builder::new()
                    .name(format!("iogauge-w{i}"))
                    .spawn_scoped(sc, move || worker::run(job, ctl))
                    .expect("spawn worker thread")
            })
            .collect();
        ctl.barrier.wait();
        let epoch = Instant::now();
        ctl.epoch.set(epoch).expect("set once");
        ctl.barrier.wait();
        let monitored = if ctl.failed.load(Relaxed) {
            None
        } else {
            Some(monitor(&ctl, epoch, s.interval, n, spec_name, progress))
        };
        let outcomes: Vec<_> = handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect();
        let (start, end, intervals, started_at) =
            monitored.unwrap_or_else(|| (mark(&ctl.live, 0), mark(&ctl.live, 0), Vec::new(), SystemTime::now()));
        (outcomes, start, end, intervals, started_at)
    });
    if let Some(e) = outcomes.iter().find_map(|o| o.error.clone()) {
        return Err(runtime(e));
    }
    let secs = if counted {
        outcomes.iter().map(|o| o.last_ns).max().unwrap_or(0) as f64 / 1e9
    } else {
        (end_ns - ramp_ns) as f64 / 1e9
    };
    let mut totals = IoStats::default();
    let mut per_target: Vec<(IoStats, u64)> = vec![Default::default(); prep.targets.len()];
    let mut workers = Vec::new();
    for (plan, o) in plans.iter().zip(&outcomes) {
        let mut wsum = IoStats::default();
        let mut targets = Vec::new();
        for (ws, st) in plan.targets.iter().zip(&o.targets) {
            wsum += st;
            per_target[ws.target].0 += st;
            per_target[ws.target].1 += plan.outstanding as u64;
            targets.push(TargetResult {
                path: prep.targets[ws.target].path.clone(),
                start_offset: ws.start,
                working_set_bytes: ws.size,
                outstanding: plan.outstanding as u64,
                metrics: Metrics::new(st, secs),
            });
        }
        totals += &wsum;
        workers.push(WorkerResult {
            name: plan.name.clone(),
            spec: plan.spec.name.clone(),
            engine: o.engine.clone(),
            outstanding: plan.outstanding,
            metrics: Metrics::new(&wsum, secs),
            targets,
        });
    }
    let targets = prep
        .targets
        .iter()
        .zip(&per_target)
        .filter(|(_, (_, qd))| *qd > 0)
        .map(|(info, (st, qd))| {
            // The working set of the first worker using it (workers may differ; each worker's
            // own entry has its own).
            let ws = plans.iter().flat_map(|p| &p.targets).find(|w| prep.targets[w.target].path == info.path);
            TargetResult {
                path: info.path.clone(),
                start_offset: ws.map_or(0, |w| w.start),
                working_set_bytes: ws.map_or(0, |w| w.size),
                outstanding: *qd,
                metrics: Metrics::new(st, secs),
            }
        })
        .collect();
    let metrics = Metrics::new(&totals, secs);
    let cpu_secs = (end.at_ns.saturating_sub(start.at_ns)) as f64 / 1e9;
    let cpu = cpu::usage(&start.cpu, &end.cpu, cpu_secs, metrics.ios, metrics.iops);
    Ok(RunResult {
        spec: spec_name.into(),
        started_at: timestamp(started_at),
        duration_s: secs,
        ramp_s: ramp_ns as f64 / 1e9,
        totals: Totals {
            metrics,
            outstanding: plans.iter().map(|p| p.outstanding as u64 * p.targets.len() as u64).sum(),
            cpu,
        },
        workers,
        targets,
        intervals,
    })
}

fn mark(live: &[Live], at_ns: u64) -> Mark {
    Mark { at_ns, sums: sum_live(live), cpu: cpu::snapshot() }
}

/// The main thread's part: sleeps to each interval boundary, samples the counters and the CPU,
/// and feeds the live line. Returns the marks at the start and end of recording, the samples,
/// and the wall-clock time recording started.
fn monitor(
    ctl: &Control,
    epoch: Instant,
    interval: Duration,
    n: usize,
    spec: &str,
    progress: &mut dyn Progress,
) -> (Mark, Mark, Vec<Interval>, SystemTime) {
    let iv = interval.as_nanos() as u64;
    let (ramp, end) = (ctl.record_start_ns, ctl.record_end_ns);
    let timed = end != u64::MAX;
    let elapsed = || epoch.elapsed().as_nanos() as u64;
    let all_done = || ctl.finished.load(Relaxed) == n;
    let mut prev = mark(&ctl.live, 0);
    // With no ramp-up, recording starts with the workers.
    let mut start = (ramp == 0).then(|| (mark(&ctl.live, 0), SystemTime::now()));
    let mut intervals = Vec::new();
    loop {
        let now = elapsed();
        // The next boundary: interval steps through ramp-up, the start of recording, interval
        // steps from there, and the end.
        let next =
            if now < ramp { ramp.min((now / iv + 1) * iv) } else { end.min(ramp + ((now - ramp) / iv + 1) * iv) };
        // Sleep in short steps when the end is a count, so the final mark follows the last I/O.
        while (timed || !all_done()) && !ctl.stop.load(Relaxed) && elapsed() < next {
            let left = next.saturating_sub(elapsed());
            std::thread::sleep(Duration::from_nanos(if timed { left } else { left.min(2_000_000) }));
        }
        let finished = all_done() || ctl.stop.load(Relaxed);
        let at = if timed { next.min(elapsed()) } else { elapsed() };
        let m = mark(&ctl.live, at);
        let dt = (m.at_ns - prev.at_ns).max(1) as f64 / 1e9;
        let d_ios = m.sums.ios - prev.sums.ios;
        let d_bytes = m.sums.bytes - prev.sums.bytes;
        let d_resp = m.sums.response_ns - prev.sums.response_ns;
        let avg = (d_ios > 0).then(|| d_resp as f64 / d_ios as f64 / 1e6);
        let cpu_pct = cpu::utilization(&prev.cpu, &m.cpu);
        let recording = start.is_some();
        if recording && dt > 1e-3 {
            intervals.push(Interval {
                t_s: (m.at_ns - ramp) as f64 / 1e9,
                duration_s: dt,
                iops: d_ios as f64 / dt,
                mbps: d_bytes as f64 / dt / 1e6,
                avg_response_ms: avg,
                cpu_pct,
            });
        }
        progress.live(&LiveStatus {
            spec,
            phase: if recording || m.at_ns >= ramp { Phase::Run } else { Phase::Ramp },
            elapsed_s: m.at_ns as f64 / 1e9,
            total_s: timed.then(|| end as f64 / 1e9),
            iops: d_ios as f64 / dt,
            mbps: d_bytes as f64 / dt / 1e6,
            avg_response_ms: avg,
            cpu_pct,
        });
        if start.is_none() && m.at_ns >= ramp {
            start = Some((m.clone(), SystemTime::now()));
        }
        if if timed { m.at_ns >= end || ctl.stop.load(Relaxed) } else { finished } {
            let (s, at) = start.unwrap_or_else(|| (mark(&ctl.live, 0), SystemTime::now()));
            return (s, m, intervals, at);
        }
        prev = m;
    }
}
