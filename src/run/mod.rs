//! Runs a prepared test: starts the workers together, has the `monitor` watch the clock,
//! and turns what the workers hand back into the result document (`tally`).

mod device_time;
mod last_writes;
mod log_files;
mod monitor;
mod snapshot;
mod tally;
mod threads;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::config::OnError;
use crate::error::{Error, Result, runtime};
use crate::managers::{self, Group};
use crate::plan::{Prepared, WorkerPlan};
use crate::result::{ResultDoc, SCHEMA, WorkloadResult};
use crate::targets::TargetInfo;
use crate::verify::checker::Checker;
use crate::verify::map::BlockMap;
use crate::worker::{self, Control, Live, WorkerJob, WorkerOutcome};
use last_writes::Verification;
pub(crate) use log_files::{LOG, is_log_name};
use monitor::{Clock, Monitor, Window};
pub use monitor::{Observer, Silent};
pub use snapshot::{Count, Counters, Phase, Progress, Snapshot};
pub use threads::{Lane, Watched, run_threads};

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

/// Runs every workload of the test in turn and returns the document: the same on every
/// manager, each workload merged from all of them. When the observer asks to stop (Ctrl-C),
/// the workload in progress stops at once and the document, marked `interrupted`, holds what
/// was done. Stopped before anything was recorded, it is [`Error::Stopped`].
pub fn run_test(prep: &Prepared, group: &dyn Group, observer: &mut dyn Observer) -> Result<Tested> {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let settings = &prep.test().settings;
    let mut results = Vec::new();
    let mut interrupted = false;
    let mut verification = prep
        .verify_block()
        .map(|block| Verification::new(block, prep.targets(), prep.plans(), prep.share().settings.journal.clone()));
    let mut failed = None;
    let mut iolog = log_files::IologParts::default();
    for r in 0..prep.plans().len() {
        let logs = LogRun { started: t0, iolog_parts: &mut iolog.0 };
        let mine = run_workload(prep, group, r, observer, verification.as_mut(), logs);
        // A timed run ends at the same moment everywhere; a counted one when each is done.
        let timeout = (!settings.counted()).then_some(settings.sync_timeout);
        let parts = match managers::agree(group, mine, "the end of the run", timeout) {
            Ok(parts) => parts,
            // A workload that cannot run after others did (its target stopped answering in
            // between) ends the test; what the others measured is kept, and the run fails.
            Err(e @ Error::Runtime(_)) if !results.is_empty() => {
                failed = Some(e.to_string());
                break;
            }
            Err(e) => return Err(e),
        };
        let result = WorkloadResult::merge(parts);
        observer.run_done(&result);
        interrupted = observer.stop_requested();
        // Stopped during ramp-up, a workload measured nothing: it is no 0-IOPS result.
        if !(interrupted && result.duration_s == 0.0) {
            results.push(result);
        }
        if interrupted {
            break;
        }
    }
    if let Some(path) = &settings.iolog {
        // A log that fails is said, and the results are kept: they do not depend on it.
        if let Err(e) = log_files::merge_iolog(path, &iolog, &iolog_targets(prep)) {
            say!("warning: writing the iolog {}: {e}", path.display());
        }
    }
    if results.is_empty() {
        // Nothing was measured: nothing to write or save.
        return Err(Error::Stopped);
    }
    let lead = &prep.managers()[0];
    let mut doc = ResultDoc {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: timestamp(started),
        duration_s: t0.elapsed().as_secs_f64(),
        host: lead.host.clone(),
        config: prep.test().to_job(),
        target_info: lead.target_info.clone(),
        results,
        warnings: prep.warnings().to_vec(),
        interrupted,
        failed,
        managers: prep.managers().to_vec(),
        read_from: None,
    };
    doc.warnings.extend(crate::result::warnings::warnings(&doc));
    Ok(Tested { doc, maps: verification.map_or_else(Vec::new, |v| v.maps()) })
}

/// When this manager starts recording, in ns from its epoch (`started` on the wall clock):
/// when its ramp-up ends. After the ramp-up of a timed test of several managers, they record
/// from one instant of the wall clock: the ramp-up after the last of them arrived at the start
/// (`latest`). A barrier at the ramp-up's end started each where it returned to it, and a
/// manager held off its CPU there started late (by 20.9 ms once, two ranks on one host in a
/// loaded suite). An instant set in advance holds unless a manager is held for the whole
/// ramp-up between the meeting and its epoch; it then records from its epoch, and
/// `start_skew_ms` says how late. Without ramp-up each records from its own start, as soon as
/// it has heard that all have arrived.
fn record_start(group: &dyn Group, clock: &Clock, latest: u64, started: SystemTime) -> u64 {
    if group.all().len() == 1 || !clock.timed() || clock.ramp_ns == 0 {
        return clock.ramp_ns;
    }
    (latest + clock.ramp_ns).saturating_sub(unix_ns(started))
}

/// Nanoseconds from the Unix epoch to `t` (0 before it).
fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Part `i` of `total` split over `n` (the first `total % n` get one more).
fn share(total: Option<u64>, n: usize, i: usize) -> Option<u64> {
    total.map(|t| t / n as u64 + u64::from((i as u64) < t % n as u64))
}

/// Targets of workers that gave up I/Os the kernel still holds, each with the worker's thread
/// id (see [`held_targets`]).
static HELD: Mutex<Vec<(String, u32)>> = Mutex::new(Vec::new());

/// The targets on which I/Os given up still wait for a filesystem that does not answer: until
/// they end, this process cannot exit. A worker that gave up I/Os leaves its ring to the
/// kernel, and its thread's exit waits for them (and for its io-wq threads, which end with the
/// I/O each serves). Those whose threads end within two seconds (given up at a second stop
/// request on a device that answers) are not named: the process exits when they end.
pub fn held_targets() -> Vec<String> {
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let deadline = Instant::now() + Duration::from_secs(2);
    let alive = |tid: u32| std::path::Path::new(&format!("/proc/self/task/{tid}")).exists();
    while held.iter().any(|&(_, tid)| alive(tid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut held: Vec<String> = held.into_iter().filter(|&(_, tid)| alive(tid)).map(|(t, _)| t).collect();
    held.sort();
    held.dedup();
    held
}

/// Every target of this manager's workers once, in the order the workers name them: the files
/// of the test's iolog.
fn iolog_targets(prep: &Prepared) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for ws in prep.plans().iter().flatten().flat_map(|p| &p.targets) {
        let path = &prep.targets()[ws.target].path;
        if !paths.contains(path) {
            paths.push(path.clone());
        }
    }
    paths
}

/// What the workloads' log writers share: when the test started, and the iolog's parts
/// written so far.
struct LogRun<'a> {
    started: Instant,
    iolog_parts: &'a mut Vec<std::path::PathBuf>,
}

/// Runs workload `r` on this manager and returns its part of the result.
fn run_workload(
    prep: &Prepared,
    group: &dyn Group,
    r: usize,
    observer: &mut dyn Observer,
    mut verification: Option<&mut Verification>,
    log_run: LogRun,
) -> Result<WorkloadResult> {
    let plans = &prep.plans()[r];
    let n = plans.len();
    let clock = Clock::of(&prep.share().settings);
    let live = plans.iter().map(|p| Live::new(p.targets.len())).collect();
    // The recorded window is set at the start, before any worker runs.
    let ctl = Arc::new(Control::new(live, u64::MAX, u64::MAX));
    let spec = prep.share().workloads[r].name.as_str();
    let (logs, writers) = start_logs(prep, plans, r, &ctl, log_run)?;
    let (handles, outcomes) = spawn_workers(prep, plans, verification.as_deref_mut(), logs, &ctl)?;
    ctl.barrier.wait();
    place_in_groups(prep, plans, &ctl);
    // Every manager's workers are set up, or none runs.
    let failed = group.sum(&[u64::from(ctl.failed.load(Relaxed))], "set-up")[0] > 0;
    ctl.failed.store(failed, Relaxed);
    // The last manager's arrival at the start, on the wall clock.
    let latest = if failed { 0 } else { group.max(&[unix_ns(SystemTime::now())], "the start")[0] };
    let epoch = Instant::now();
    let started = SystemTime::now();
    ctl.epoch.set(epoch).expect("set once");
    let record_start = record_start(group, &clock, latest, started);
    ctl.record_start_ns.store(record_start, Relaxed);
    ctl.record_end_ns.store(record_start.saturating_add(clock.time_ns), Relaxed);
    // The counters and the CPU at the epoch, before any worker runs: a monitor thread that
    // starts late (a loaded host) must not lose the first I/Os from the time series.
    let devices: Vec<Option<u64>> = prep.targets().iter().map(TargetInfo::device).collect();
    let first = monitor::bounding_mark(&ctl.live, &devices, 0);
    ctl.barrier.wait();
    let window = if failed {
        Window::empty(&ctl.live)
    } else {
        let io_timeout = prep.share().settings.io_timeout;
        let names = plans
            .iter()
            .map(|p| (p.name.clone(), p.targets.iter().map(|ws| prep.targets()[ws.target].path.clone()).collect()))
            .collect();
        let counters =
            &Counters { ctl: Arc::clone(&ctl), names: Arc::new(names), rank: group.me().rank, workload: spec.into() };
        observer.workload_started(counters);
        let w = Monitor {
            ctl: &ctl,
            group,
            epoch,
            started,
            first,
            devices: &devices,
            clock: &clock,
            spec,
            counters,
            observer,
            io_timeout,
        }
        .watch();
        // A worker may be waiting for completions that do not come: interrupt its wait
        // (again, until it has seen the stop) so it drains with a timeout, or at once when
        // the user asks again.
        while ctl.finished.load(Relaxed) < n {
            ctl.give_up.fetch_or(observer.stop_now_requested(), Relaxed);
            worker::wake(&ctl.live);
            std::thread::sleep(Duration::from_millis(20));
        }
        w
    };
    let outcomes = collect(prep, plans, &ctl.live, handles, outcomes);
    finish_logs(prep, plans, r, writers);
    if let Some(v) = verification {
        for (plan, c) in plans.iter().zip(&outcomes).filter_map(|(p, o)| Some((p, o.checker.as_ref()?))) {
            v.absorb(plan, c);
        }
    }
    // A worker's failure keeps its class: a target that cannot be opened as the user gave it
    // is the user's to fix, an engine that fails is the run's.
    if let Some(e) = outcomes.iter().find_map(|o| o.error.clone()) {
        return Err(e);
    }
    let me = group.me();
    let ended =
        tally::Ended { prep, plans, outcomes: &outcomes, window, clock: &clock, rank: me.rank, host: me.host.clone() };
    Ok(ended.result(spec))
}

/// Each worker's thread to its CPU group before its first I/O, so that the io-wq threads it
/// starts are made there too.
fn place_in_groups(prep: &Prepared, plans: &[WorkerPlan], ctl: &Control) {
    for (i, live) in ctl.live.iter().enumerate() {
        if let Some(Err(e)) = prep.worker_groups().map(|g| g.place(i, live.tid())) {
            say!("warning: {}: stays in the test's CPU group: {e}", plans[i].name);
        }
    }
}

/// Waits for workload `r`'s log writers, and gathers its logs into one file of each kind
/// where the test asks (`log_name`). A log that failed is said, and the results are kept:
/// they do not depend on it.
fn finish_logs(prep: &Prepared, plans: &[WorkerPlan], r: usize, writers: Vec<JoinHandle<Result<()>>>) {
    let mut logged = true;
    for w in writers {
        if let Some(e) = w.join().ok().and_then(std::result::Result::err) {
            say!("warning: {e}");
            logged = false;
        }
    }
    let s = &prep.share().settings;
    if let (Some(dir), Some(name), true) = (&s.log_dir, &s.log_name, logged) {
        let stems: Vec<String> = plans.iter().map(|p| log_files::stem(&p.name)).collect();
        if let Err(e) = log_files::gather(dir, name, &stems, r + 1) {
            say!("warning: gathering the I/O logs into {}: {e}", dir.join(name).display());
        }
    }
}

/// Starts a verified workload: one checker per worker (None for a worker on the null target).
fn start_checkers(v: &mut Verification, prep: &Prepared, plans: &[WorkerPlan]) -> Result<Vec<Option<Checker>>> {
    v.start_workload()?;
    plans
        .iter()
        .enumerate()
        .map(|(i, plan)| {
            let slots = plan.outstanding as usize * plan.targets.len();
            v.checker(prep.share().first_worker + i, plan, slots)
        })
        .collect()
}

/// Each worker's outcome as it hands it back, with its index.
type Outcomes = mpsc::Receiver<(usize, WorkerOutcome)>;

/// With `--log-dir` or `--iolog`: each worker's log, and the threads writing them.
type Logs = (Vec<Option<worker::log_chunks::IoLog>>, Vec<JoinHandle<Result<()>>>);

/// Starts a writer per worker of workload `workload` when the test has a `log_dir` or an
/// `iolog` (whose part for each worker goes beside it, named in `log_run`).
fn start_logs(
    prep: &Prepared,
    plans: &[WorkerPlan],
    workload: usize,
    ctl: &Arc<Control>,
    log_run: LogRun,
) -> Result<Logs> {
    let s = &prep.share().settings;
    if s.log_dir.is_none() && s.iolog.is_none() {
        return Ok((Vec::new(), Vec::new()));
    }
    let (mut logs, mut writers) = (Vec::new(), Vec::new());
    for (i, plan) in plans.iter().enumerate() {
        let (log, chunks) = worker::log_chunks::channel();
        let logs_of = |dir: &std::path::PathBuf| {
            let avg_ns = s.log_avg_ms * 1_000_000;
            (dir.clone(), log_files::stem(&plan.name), workload + 1, avg_ns, s.log_offsets)
        };
        let iolog_of = |path: &std::path::PathBuf| {
            let part = log_files::part_of(path, workload, i);
            log_run.iolog_parts.push(part.clone());
            let targets = plan.targets.iter().map(|ws| prep.targets()[ws.target].path.clone()).collect();
            (part, targets, log_run.started)
        };
        let out = log_files::Outputs { logs: s.log_dir.as_ref().map(logs_of), iolog: s.iolog.as_ref().map(iolog_of) };
        let writer = log_files::start(chunks, out, Arc::clone(ctl))
            .map_err(|e| runtime(format!("cannot start the I/O log's writer: {e}")))?;
        logs.push(Some(log));
        writers.push(writer);
    }
    Ok((logs, writers))
}

/// Starts one thread per worker, each with its checker of a verified test. Outcomes come back
/// over a channel rather than through join: a worker whose given-up I/Os still wait in io-wq
/// threads hands its outcome back but cannot end (see [`held_targets`]).
fn spawn_workers(
    prep: &Prepared,
    plans: &[WorkerPlan],
    verification: Option<&mut Verification>,
    logs: Vec<Option<worker::log_chunks::IoLog>>,
    ctl: &Arc<Control>,
) -> Result<(Vec<JoinHandle<()>>, Outcomes)> {
    let s = &prep.share().settings;
    let checkers = match verification {
        Some(v) => start_checkers(v, prep, plans)?,
        None => Vec::new(),
    };
    let mut checkers = checkers.into_iter();
    let mut logs = logs.into_iter();
    let (sent, received) = mpsc::channel();
    let handles = plans
        .iter()
        .enumerate()
        .map(|(i, plan)| {
            let at = prep.share().first_worker + i;
            let job = WorkerJob {
                index: i,
                plan: plan.clone(),
                targets: plan.targets.iter().map(|ws| prep.targets()[ws.target].clone()).collect(),
                engine: s.engine,
                data: s.data,
                seed: s.seed,
                ios_limit: share(s.ios, prep.share().all_workers, at),
                bytes_limit: share(s.bytes, prep.share().all_workers, at),
                arrivals: s.arrivals,
                stop_on_error: s.on_error == OnError::Stop,
                checker: checkers.next().flatten(),
                io_timeout: s.io_timeout,
                log: logs.next().flatten(),
                submit_batch: s.submit_batch as usize,
                completion_batch: s.completion_batch as usize,
                io_wq_threads: s.io_wq_threads,
            };
            let (ctl, sent) = (Arc::clone(ctl), sent.clone());
            std::thread::Builder::new()
                .name(format!("iogauge-w{i}"))
                .spawn(move || {
                    let outcome = worker::run(job, &ctl);
                    let _ = sent.send((i, outcome));
                })
                .map_err(|e| {
                    // The workers started wait at the first meeting, before any I/O, and end
                    // with the process.
                    runtime(format!(
                        "cannot start worker {} of {}: {e}; the system allows fewer threads: use fewer workers",
                        i + 1,
                        plans.len()
                    ))
                })
        })
        .collect::<Result<_>>()?;
    Ok((handles, received))
}

/// Every worker's outcome, in worker order; joins the threads that can end and leaves the
/// others (their targets are then [`held_targets`]).
fn collect(
    prep: &Prepared,
    plans: &[WorkerPlan],
    live: &[Live],
    handles: Vec<JoinHandle<()>>,
    received: mpsc::Receiver<(usize, WorkerOutcome)>,
) -> Vec<WorkerOutcome> {
    let mut outcomes: Vec<_> = received.iter().collect();
    assert_eq!(outcomes.len(), handles.len(), "a worker thread panicked");
    outcomes.sort_by_key(|(i, _)| *i);
    let outcomes: Vec<_> = outcomes.into_iter().map(|(_, o)| o).collect();
    for (((h, o), plan), live) in handles.into_iter().zip(&outcomes).zip(plans).zip(live) {
        if !o.held.is_empty() {
            // Never joined: nothing waits for it but the exit.
            std::mem::forget(h);
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            held.extend(o.held.iter().map(|&t| (prep.targets()[plan.targets[t].target].path.clone(), live.tid())));
        } else {
            h.join().expect("worker thread panicked");
        }
    }
    outcomes
}
