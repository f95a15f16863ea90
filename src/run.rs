//! Runs a prepared test: starts the workers together, watches the clock (ramp-up, recording,
//! interval samples, CPU), and turns what the workers hand back into the result document.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Barrier, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant, SystemTime};

use crate::config::OnError;
use crate::cpu::{self, CpuSnapshot};
use crate::error::{Result, runtime};
use crate::managers::{self, Group};
use crate::plan::Prepared;
use crate::result::{
    FirstError, Interval, ManagerResult, Metrics, ResultDoc, RunResult, SCHEMA, TargetResult, Totals, WorkerResult,
};
use crate::stats::IoStats;
use crate::verify::map::BlockMap;
use crate::verify::{Verification, VerifyResult};
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

/// A finished test.
pub struct Tested {
    /// The result document.
    pub doc: ResultDoc,
    /// With `--verify`: the last write of every block of every target, for `iogauge verify`.
    pub maps: Vec<BlockMap>,
}

/// Runs every access specification of the test in turn and returns the document: the same
/// on every manager, each run merged from all of them. When `interrupt` is set (Ctrl-C), the
/// run in progress stops at once and the document, marked `interrupted`, holds what was done.
pub fn run_test(
    prep: &Prepared,
    group: &dyn Group,
    progress: &mut dyn Progress,
    interrupt: &AtomicBool,
) -> Result<Tested> {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let mut results = Vec::new();
    let mut interrupted = false;
    let mut verification = match prep.verify_block {
        Some(block) => {
            let plans: Vec<_> = (0..prep.runs.len()).map(|r| prep.plan_run(r)).collect();
            Some(Verification::new(block, &prep.targets, &plans, prep.config.test.journal.clone()))
        }
        None => None,
    };
    for r in 0..prep.runs.len() {
        let mine = run_one(prep, group, r, progress, interrupt, verification.as_mut());
        progress.done();
        // A timed run ends at the same moment everywhere; a counted one when each is done.
        let timeout = prep.job.test.ios.or(prep.job.test.bytes).is_none().then_some(prep.job.test.sync_timeout);
        let parts = managers::agree(group, mine, "the end of the run", timeout)?;
        results.push(RunResult::merge(parts));
        interrupted = interrupt.load(Relaxed);
        if interrupted {
            break;
        }
    }
    let lead = &prep.managers[0];
    let doc = ResultDoc {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: timestamp(started),
        duration_s: t0.elapsed().as_secs_f64(),
        host: lead.host.clone(),
        config: prep.job.clone(),
        target_info: lead.target_info.clone(),
        results,
        warnings: prep.warnings.clone(),
        interrupted,
        managers: prep.managers.clone(),
    };
    Ok(Tested { doc, maps: verification.map_or_else(Vec::new, |v| v.maps()) })
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

/// Targets of workers that gave up I/Os the kernel still holds in io-wq threads (see
/// [`held_targets`]).
static HELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The targets on which I/Os given up still wait for a filesystem that does not answer: until
/// they end, this process cannot exit (its io-wq threads wait uninterruptibly).
pub fn held_targets() -> Vec<String> {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner()).clone();
    held.sort();
    held.dedup();
    held
}

fn run_one(
    prep: &Prepared,
    group: &dyn Group,
    r: usize,
    progress: &mut dyn Progress,
    interrupt: &AtomicBool,
    mut verification: Option<&mut Verification>,
) -> Result<RunResult> {
    let s = &prep.config.test;
    let plans = prep.plan_run(r);
    let n = plans.len();
    let mut checkers = Vec::new();
    if let Some(v) = verification.as_deref_mut() {
        v.start_run().map_err(runtime)?;
        for (i, plan) in plans.iter().enumerate() {
            let slots = plan.outstanding as usize * plan.targets.len();
            checkers.push(v.checker(prep.first_worker + i, plan, slots).map_err(runtime)?);
        }
    }
    let mut checkers = checkers.into_iter();
    let counted = s.ios.is_some() || s.bytes.is_some();
    let clock = Clock {
        interval_ns: s.interval.as_nanos() as u64,
        ramp_ns: if counted { 0 } else { s.ramp.as_nanos() as u64 },
        time_ns: if counted { u64::MAX } else { s.time.as_nanos() as u64 },
    };
    // Without ramp-up, recording starts with the workers; after one, when every manager has
    // reached its end (the monitor sets the window then).
    let ramped = clock.ramp_ns > 0;
    let ctl = Arc::new(Control {
        barrier: Barrier::new(n + 1),
        epoch: OnceLock::new(),
        record_start_ns: AtomicU64::new(if ramped { u64::MAX } else { 0 }),
        record_end_ns: AtomicU64::new(if ramped { u64::MAX } else { clock.time_ns }),
        stop: AtomicBool::new(false),
        failed: AtomicBool::new(false),
        finished: AtomicUsize::new(0),
        live: (0..n).map(|_| Live::default()).collect(),
    });
    let spec_name = prep.runs[r].name.as_str();
    // Outcomes come back over a channel rather than through join: a worker whose given-up
    // I/Os still wait in io-wq threads hands its outcome back but cannot end (see `held`).
    let (sent, received) = mpsc::channel();
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
                ios_limit: share(s.ios, prep.all_workers, prep.first_worker + i),
                bytes_limit: share(s.bytes, prep.all_workers, prep.first_worker + i),
                arrivals: s.arrivals,
                stop_on_error: s.on_error == OnError::Stop,
                checker: checkers.next().flatten(),
                io_timeout: s.io_timeout,
            };
            let (ctl, sent) = (Arc::clone(&ctl), sent.clone());
            std::thread::Builder::new()
                .name(format!("iogauge-w{i}"))
                .spawn(move || {
                    let outcome = worker::run(job, &ctl);
                    let _ = sent.send((i, outcome));
                })
                .expect("spawn worker thread")
        })
        .collect();
    drop(sent);
    ctl.barrier.wait();
    // Every manager's workers are set up, or none runs.
    let failed = group.sum(&[u64::from(ctl.failed.load(Relaxed))], "set-up")[0] > 0;
    ctl.failed.store(failed, Relaxed);
    if !failed {
        group.barrier("the start");
    }
    let epoch = Instant::now();
    let started = SystemTime::now();
    ctl.epoch.set(epoch).expect("set once");
    ctl.barrier.wait();
    let window = (!failed).then(|| {
        let w = monitor(&ctl, group, epoch, started, &clock, n, spec_name, progress, interrupt, s.io_timeout);
        // A worker may be waiting for completions that do not come: interrupt its wait
        // (again, until it has seen the stop) so it drains with a timeout.
        while ctl.finished.load(Relaxed) < n {
            worker::wake(&ctl.live);
            std::thread::sleep(Duration::from_millis(20));
        }
        w
    });
    let mut outcomes: Vec<_> = received.iter().collect();
    assert_eq!(outcomes.len(), n, "a worker thread panicked");
    outcomes.sort_by_key(|(i, _)| *i);
    let outcomes: Vec<_> = outcomes.into_iter().map(|(_, o)| o).collect();
    for ((h, o), plan) in handles.into_iter().zip(&outcomes).zip(&plans) {
        if !o.held.is_empty() {
            // Never joined: its thread id stays valid, and nothing waits for it but the exit.
            std::mem::forget(h);
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            held.extend(o.held.iter().map(|&t| prep.targets[plan.targets[t].target].path.clone()));
        } else {
            h.join().expect("worker thread panicked");
        }
    }
    let verify = verification.map(|v| {
        let mut sum = VerifyResult { block_bytes: v.block(), checked_blocks: 0, mismatches: 0, found: Vec::new() };
        for (plan, c) in plans.iter().zip(&outcomes).filter_map(|(p, o)| Some((p, o.checker.as_ref()?))) {
            v.absorb(plan, c);
            sum.add(&c.result());
        }
        sum
    });
    if let Some(e) = outcomes.iter().find_map(|o| o.error.clone()) {
        return Err(runtime(e));
    }
    let Window { start, end, intervals, started_at } = window.unwrap_or_else(|| Window {
        start: mark(&ctl.live, 0),
        end: mark(&ctl.live, 0),
        intervals: Vec::new(),
        started_at: SystemTime::now(),
    });
    // Recorded: the time asked, or to the last I/O of a count, or to an interruption.
    let secs = if counted {
        outcomes.iter().map(|o| o.last_ns).max().unwrap_or(0) as f64 / 1e9
    } else {
        end.at_ns.saturating_sub(start.at_ns) as f64 / 1e9
    };
    let rank = group.me().rank;
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
                manager: rank,
                start_offset: ws.start,
                working_set_bytes: ws.size,
                outstanding: plan.outstanding as u64,
                metrics: Metrics::new(st, secs),
            });
        }
        totals += &wsum;
        workers.push(WorkerResult {
            name: plan.name.clone(),
            manager: rank,
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
                manager: rank,
                start_offset: ws.map_or(0, |w| w.start),
                working_set_bytes: ws.map_or(0, |w| w.size),
                outstanding: *qd,
                metrics: Metrics::new(st, secs),
            }
        })
        .collect();
    let metrics = Metrics::new(&totals, secs);
    let recorded_ns = end.at_ns.saturating_sub(start.at_ns);
    let cpu = cpu::usage(&start.cpu, &end.cpu, recorded_ns as f64 / 1e9, metrics.ios, metrics.iops);
    let totals =
        Totals { metrics, outstanding: plans.iter().map(|p| p.outstanding as u64 * p.targets.len() as u64).sum(), cpu };
    let first_error =
        plans.iter().zip(&outcomes).filter_map(|(p, o)| Some((p, o.first_error?))).min_by_key(|(_, f)| f.at_ns).map(
            |(plan, f)| FirstError {
                manager: rank,
                worker: plan.name.clone(),
                path: prep.targets[plan.targets[f.target].target].path.clone(),
                offset: f.offset,
                write: f.write,
                errno: f.errno,
                text: crate::result::errno_text(f.errno),
                at_s: (f.at_ns as f64 - start.at_ns as f64) / 1e9,
            },
        );
    let unix_ns = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let record_start_unix_ns = unix_ns(started_at);
    Ok(RunResult {
        spec: spec_name.into(),
        started_at: timestamp(started_at),
        duration_s: secs,
        ramp_s: clock.ramp_ns as f64 / 1e9,
        managers: vec![ManagerResult {
            rank,
            host: group.me().host.clone(),
            workers: n,
            totals: totals.clone(),
            record_start_unix_ns,
            record_end_unix_ns: record_start_unix_ns + recorded_ns,
        }],
        start_skew_ms: 0.0,
        first_error,
        verify,
        totals,
        workers,
        targets,
        intervals,
    })
}

fn mark(live: &[Live], at_ns: u64) -> Mark {
    Mark { at_ns, sums: sum_live(live), cpu: cpu::snapshot() }
}

/// A run's timing: interval, ramp-up and recorded time (u64::MAX when the test ends on a count).
struct Clock {
    interval_ns: u64,
    ramp_ns: u64,
    time_ns: u64,
}

/// What the monitor saw: the marks at the start and end of recording, the samples between,
/// and the wall-clock time recording started.
struct Window {
    start: Mark,
    end: Mark,
    intervals: Vec<Interval>,
    started_at: SystemTime,
}

/// The main thread's part: sleeps to each interval boundary, samples the counters and the CPU,
/// and feeds the live line.
///
/// Every manager passes the same boundaries in the same order (every interval through
/// ramp-up, its end, every interval of recording, its end), so in a timed run each boundary is
/// a meeting point: the live line adds up every manager, and one manager's failure stops them
/// all at the next boundary. Recording starts when every manager has finished ramp-up.
#[allow(clippy::too_many_arguments)]
fn monitor(
    ctl: &Control,
    group: &dyn Group,
    epoch: Instant,
    started: SystemTime,
    clock: &Clock,
    n: usize,
    spec: &str,
    progress: &mut dyn Progress,
    interrupt: &AtomicBool,
    io_timeout: Duration,
) -> Window {
    let (iv, ramp, time) = (clock.interval_ns, clock.ramp_ns, clock.time_ns);
    let timed = time != u64::MAX;
    let elapsed = || epoch.elapsed().as_nanos() as u64;
    let all_done = || ctl.finished.load(Relaxed) == n;
    // When each worker last completed an I/O: one that is still running and has completed none
    // for io_timeout waits on a target that stopped answering, and the test stops.
    let mut seen = vec![(0u64, 0u64); n];
    let mut stalled = || {
        let now = elapsed();
        ctl.live.iter().zip(&mut seen).any(|(l, (ios, at))| {
            let done = l.ios.load(Relaxed);
            if done != *ios {
                (*ios, *at) = (done, now);
            }
            l.thread.load(Relaxed) != 0 && now - *at >= io_timeout.as_nanos() as u64
        })
    };
    let mut prev = mark(&ctl.live, 0);
    // Recording's start: ns from the epoch, the mark there, and its wall-clock time.
    let mut rec = (ramp == 0).then(|| (0, prev.clone(), started));
    let mut next = if ramp > 0 { iv.min(ramp) } else { iv.min(time) };
    let mut intervals = Vec::new();
    loop {
        // Sleep in short steps: a Ctrl-C or a stop (an I/O error) ends the sample at once, and
        // when the end is a count the final mark follows the last I/O.
        while !(interrupt.load(Relaxed) || ctl.stop.load(Relaxed) || (!timed && all_done())) && elapsed() < next {
            if stalled() {
                ctl.record_end_ns.fetch_min(elapsed(), Relaxed);
                ctl.stop.store(true, Relaxed);
                break;
            }
            let left = next.saturating_sub(elapsed());
            std::thread::sleep(Duration::from_nanos(left.min(if timed { 10_000_000 } else { 2_000_000 })));
        }
        if interrupt.load(Relaxed) {
            // Recording ends now: what completes while the workers drain is not counted.
            ctl.record_end_ns.fetch_min(elapsed(), Relaxed);
            ctl.stop.store(true, Relaxed);
        }
        let at = if timed { next.min(elapsed()) } else { elapsed() };
        let m = mark(&ctl.live, at);
        let dt = (m.at_ns - prev.at_ns).max(1) as f64 / 1e9;
        let d =
            [m.sums.ios - prev.sums.ios, m.sums.bytes - prev.sums.bytes, m.sums.response_ns - prev.sums.response_ns];
        let cpu_pct = cpu::utilization(&prev.cpu, &m.cpu);
        if let Some((rs, _, _)) = &rec {
            if dt > 1e-3 {
                intervals.push(Interval {
                    t_s: (m.at_ns - rs) as f64 / 1e9,
                    duration_s: dt,
                    iops: d[0] as f64 / dt,
                    mbps: d[1] as f64 / dt / 1e6,
                    avg_response_ms: (d[0] > 0).then(|| d[2] as f64 / d[0] as f64 / 1e6),
                    cpu_pct,
                });
            }
        }
        // A counted run ends at a different boundary on each manager: only timed runs meet.
        let stop = ctl.stop.load(Relaxed);
        let (all, stopped, cpu_pct) = if timed {
            let cpu_milli = (cpu_pct * 1000.0) as u64;
            let s = group.sum(&[d[0], d[1], d[2], cpu_milli, u64::from(stop)], "an interval");
            let (stopped, cpu) = (s[4] > 0, s[3] as f64 / 1000.0 / group.all().len() as f64);
            (s, stopped, cpu)
        } else {
            (d.to_vec(), stop || all_done(), cpu_pct)
        };
        progress.live(&LiveStatus {
            spec,
            phase: if rec.is_some() { Phase::Run } else { Phase::Ramp },
            elapsed_s: m.at_ns as f64 / 1e9,
            total_s: timed.then(|| (ramp + time) as f64 / 1e9),
            iops: all[0] as f64 / dt,
            mbps: all[1] as f64 / dt / 1e6,
            avg_response_ms: (all[0] > 0).then(|| all[2] as f64 / all[0] as f64 / 1e6),
            cpu_pct,
        });
        let end = rec.as_ref().map(|(rs, _, _)| rs.saturating_add(time));
        if stopped || end == Some(next) {
            ctl.record_end_ns.fetch_min(m.at_ns, Relaxed);
            ctl.stop.store(true, Relaxed);
            let (_, start, started_at) = rec.unwrap_or_else(|| (0, m.clone(), SystemTime::now()));
            return Window { start, end: m, intervals, started_at };
        }
        next = match &rec {
            Some(_) => next.saturating_add(iv).min(end.expect("recording")),
            None if next < ramp => (next + iv).min(ramp),
            None => {
                // Ramp-up is over here; recording starts when it is over everywhere.
                group.barrier("the start of recording");
                let rs = elapsed();
                ctl.record_end_ns.store(rs + time, Relaxed);
                ctl.record_start_ns.store(rs, Relaxed);
                rec = Some((rs, mark(&ctl.live, rs), SystemTime::now()));
                rs + iv.min(time)
            }
        };
        // The first sample of recording counts from its start.
        prev = match &rec {
            Some((rs, start, _)) if *rs > m.at_ns => start.clone(),
            _ => m,
        };
    }
}
