//! What a result's numbers need said beside them, so they do not mislead: a host busy with
//! other work (CPU % then measures the host), CPUs that slept between I/Os (their wake-ups in
//! the response times), a rate that was not reached, response times stamped per batch of
//! completions, a workload that completed no I/O, a test stopped while recording (Ctrl-Z),
//! fewer I/Os in flight than asked. The run adds all but the last to the document's
//! `warnings` (with a worker the host held off its CPU); the table prints all of them.

use crate::config::{Job, Rate};
use crate::format::thousands;
use crate::host::HostInfo;
use crate::result::{Metrics, ResultDoc, WorkerResult, WorkloadResult};

/// Other processes' share of the host's CPU above which CPU % and IOPS/CPU% are not the
/// storage path's (and above iogauge's own).
const BUSY_HOST_PCT: f64 = 20.0;
/// The shortest window the host's CPUs are judged over for a warning: a 10 ms tick or a
/// scheduler slice of other work is 0.5 % of it ([`crate::host::cpu::MIN_WINDOW_S`], shorter, is the
/// least over which a CPU % is shown at all).
const CPU_WINDOW_S: f64 = 2.0;
/// A rate-limited worker short of this share of its asked rate did not reach it.
const RATE_REACHED: f64 = 0.95;
/// A wake-up's own latency, allowed each wait for a CPU before the host is said to have held
/// a worker: 1-3 µs on an idle host (this 2-CPU VM: 2.9 µs a wait at 77,000 waits in 2 s, 11 %
/// of the time), more on a virtual machine's IPIs; waits behind other work last a slice (ms).
const WAKE_UP_US: f64 = 20.0;
/// Held off the CPU past its wake-ups for this share of the recorded time, a worker is said.
const HELD_OFF_PCT: f64 = 5.0;
/// What the warning of a worker held off its CPU offers where the worker waited for each of 8
/// or more completions in flight ([`held_off_cpu`]), free to run on more than one of the
/// host's CPUs: held to one, with the io-wq threads serving its I/Os, it shares that CPU with
/// them alone, as the scheduler moves other work off it (zram at 32 outstanding beside two CPU
/// burners, 2 CPUs: 1.12-1.18x the IOPS, p99 0.2-0.5 ms against 4.1; docs/performance.md,
/// issue 45, entry 23).
const PIN_WHEN_HELD: &str = "--cpus N (a CPU each)";
/// What it offers there in any case: the wait tuned fio's jobs make, which lets the worker
/// sleep between batches and keep its CPU, each response time then late by up to 7 other
/// completions' time.
const BATCH_WHEN_HELD: &str = "--completion-batch 8";
/// Where a warning about the host sends the user: the page that explains it and its cures,
/// with their measurements (a warning is one short line).
const BUSY_HOST_PAGE: &str = "docs/performance.md#a-busy-host";
/// Where the other warnings of a result send the user: the page that says what each means and
/// its cures (a warning is one short line).
const WARNINGS_PAGE: &str = "docs/reports-and-history.md#warnings";
/// Sleeps of the host's CPUs per I/O from which response times are said to hold wake-ups: at
/// least every other I/O met a CPU that had gone to sleep (this 2-CPU VM: 1.4 per I/O at 1
/// outstanding on a loop device, 0.07 at 32).
const SLEEPS_PER_IO: f64 = 0.5;
/// A mean response time below which a CPU's wake-up is a share of it worth saying. A halted
/// vCPU of this 2-CPU VM cost 17 µs a sleep (a loop device at 1 outstanding: 35.7 µs per I/O
/// at 1.4 sleeps per I/O, 12.0 with the CPUs held awake), so at [`SLEEPS_PER_IO`] a tenth of
/// a mean under 100 µs; 64 KiB writes to its virtio disk at 16 outstanding, 0.4-0.5 sleeps
/// per I/O at a mean of 350 µs, moved by less than their runs' scatter when held.
const WAKE_UP_MATTERS_MS: f64 = 0.1;

/// The rate caps of a workload's rate-limited workers, and what they achieved.
#[derive(Debug, Clone, PartialEq)]
pub struct Pace {
    /// Asked I/Os per second over the workers with `rate_iops` (0: none).
    pub asked_iops: f64,
    /// Asked MB/s over the workers with `rate_mbps` (0: none).
    pub asked_mbps: f64,
    /// What those workers achieved, in IOPS and MB/s.
    pub iops: f64,
    /// What they achieved in MB/s.
    pub mbps: f64,
    /// The workers below [`RATE_REACHED`] of every cap they have: (name, % of the cap reached).
    pub short: Vec<(String, f64)>,
}

impl Pace {
    /// One line: "asked 1,000 IOPS, achieved 998 IOPS".
    pub fn describe(&self) -> String {
        let mut asked = Vec::new();
        let mut got = Vec::new();
        if self.asked_iops > 0.0 {
            asked.push(format!("{} IOPS", thousands(self.asked_iops)));
            got.push(format!("{} IOPS", thousands(self.iops)));
        }
        if self.asked_mbps > 0.0 {
            asked.push(format!("{:.1} MB/s", self.asked_mbps));
            got.push(format!("{:.1} MB/s", self.mbps));
        }
        format!("rate asked {}, achieved {}", asked.join(" / "), got.join(" / "))
    }
}

/// The pace of workload `r`'s rate-limited workers (None if it has none). The test's caps over
/// all workers (`test.rate_iops`, `test.rate_mbps`) are asked of the totals; a worker's own
/// caps of that worker.
pub fn pace(doc: &ResultDoc, r: &WorkloadResult) -> Option<Pace> {
    let mut p = Pace { asked_iops: 0.0, asked_mbps: 0.0, iops: 0.0, mbps: 0.0, short: Vec::new() };
    let Rate { iops: all_iops, mbps: all_mbps } = doc.config.test.rate();
    let ask = |p: &mut Pace, name: &str, m: &Metrics, iops: Option<f64>, mbps: Option<f64>| {
        let mut best = None::<f64>;
        if let Some(asked) = iops {
            (p.asked_iops, p.iops) = (p.asked_iops + asked, p.iops + m.iops);
            best = Some(best.unwrap_or(0.0).max(m.iops / asked));
        }
        if let Some(asked) = mbps {
            (p.asked_mbps, p.mbps) = (p.asked_mbps + asked, p.mbps + m.mbps);
            best = Some(best.unwrap_or(0.0).max(m.mbps / asked));
        }
        if let Some(b) = best.filter(|b| *b < RATE_REACHED) {
            p.short.push((name.to_string(), b * 100.0));
        }
    };
    if all_iops.is_some() || all_mbps.is_some() {
        ask(&mut p, "all workers", &r.totals.metrics, all_iops, all_mbps);
    }
    for w in &r.workers {
        let Some(c) = doc.config.workers.iter().find(|c| c.name.as_deref() == Some(w.name.as_str())) else {
            continue;
        };
        // Under a test's cap of the same measure, the worker's own is reported through the total.
        let own = c.rate();
        let iops = own.iops.filter(|_| all_iops.is_none());
        let mbps = own.mbps.filter(|_| all_mbps.is_none());
        ask(&mut p, &w.name, &w.metrics, iops, mbps);
    }
    (p.asked_iops > 0.0 || p.asked_mbps > 0.0).then_some(p)
}

/// Average I/Os in flight by Little's law (IOPS x mean response time), when it is well under
/// the outstanding I/Os asked: (in flight, asked).
pub fn in_flight(r: &WorkloadResult) -> Option<(f64, u64)> {
    let m = &r.totals.metrics;
    let mean = m.iops * m.avg_response_ms? / 1000.0;
    let asked = r.totals.outstanding;
    (m.ios > 0 && mean < 0.9 * asked as f64).then_some((mean, asked))
}

/// The most completions one wait of workload `r` stamped with one clock reading:
/// `completion_batch`, but no more than a worker has in flight (its outstanding I/Os on each
/// of its targets; psync's one), and one for a rate-limited worker, whose waits end at the
/// first completion to issue on time.
fn stamped_together(doc: &ResultDoc, r: &WorkloadResult) -> u64 {
    let batch = doc.config.test.completion_batch as u64;
    let each = r
        .workers
        .iter()
        .filter_map(|w| Some(if paced(&doc.config, &w.name) { 1 } else { batch.min(in_flight_at_most(w)?) }));
    each.max().unwrap_or(1)
}

/// The most I/Os worker `w` kept in flight: its outstanding I/Os on each of its targets, or
/// psync's one; None where the document does not say.
fn in_flight_at_most(w: &WorkerResult) -> Option<u64> {
    match w.one_io_at_a_time() {
        true => Some(1),
        false => Some(w.outstanding? as u64 * w.targets.len().max(1) as u64),
    }
}

/// Whether the worker named `name` issued at a rate (its own, or the test's in all): its
/// waits end at the first completion, to issue the next I/O on time.
fn paced(config: &Job, name: &str) -> bool {
    let worker = config.workers.iter().find(|c| c.name.as_deref() == Some(name));
    worker.is_some_and(|c| c.rate().is_open_loop()) || config.test.rate().is_open_loop()
}

/// The warnings a finished run's numbers call for, one line each.
pub fn warnings(doc: &ResultDoc) -> Vec<String> {
    let mut out = Vec::new();
    let batch = doc.config.test.completion_batch;
    let together = doc.results.iter().map(|r| stamped_together(doc, r)).max().unwrap_or(1);
    if together > 1 {
        out.push(format!(
            "response times were stamped once per wait for up to {together} completions (completion_batch = {batch}): \
             each may be late by up to {} others' time ({WARNINGS_PAGE})",
            together - 1
        ));
    }
    out.extend(of_host(&doc.results, &doc.host, &doc.config));
    for r in &doc.results {
        if let Some(p) = pace(doc, r).filter(|p| !p.short.is_empty()) {
            let mut short: Vec<String> = p.short.iter().take(2).map(|(w, pct)| format!("{w} {pct:.0} %")).collect();
            if p.short.len() > 2 {
                short.push(format!("{} more", p.short.len() - 2));
            }
            out.push(format!(
                "{}: {}; below the asked rate: {} ({WARNINGS_PAGE})",
                r.spec,
                p.describe(),
                short.join(", ")
            ));
        }
    }
    out.extend(doc.results.iter().filter_map(stopped));
    if !doc.interrupted {
        out.extend(doc.results.iter().filter_map(nothing_completed));
    }
    out
}

/// One line for a workload whose test's process was stopped while recording (Ctrl-Z, a
/// SIGSTOP): its workers issued nothing meanwhile, and its rates count that time.
fn stopped(r: &WorkloadResult) -> Option<String> {
    let ms: f64 = r.managers.iter().map(|m| m.stopped_ms).sum();
    let untimed: u32 = r.managers.iter().map(|m| m.stops_untimed).sum();
    let what = match (ms > 0.0, untimed) {
        (false, 0) => return None,
        (true, 0) => {
            format!("was stopped (Ctrl-Z, SIGTSTP) for {:.2} s of the {:.2} s recorded", ms / 1e3, r.duration_s)
        }
        (_, n) => format!(
            "stopped while recording and went on {n} time{} (SIGCONT) after an untimed stop (SIGSTOP){}",
            if n == 1 { "" } else { "s" },
            if ms > 0.0 { format!("; Ctrl-Z held it {:.2} s more", ms / 1e3) } else { String::new() }
        ),
    };
    Some(format!("{}: the test {what}: its rates count it ({WARNINGS_PAGE})", r.spec))
}

/// One line for a workload of a finished run that completed no I/O and failed none: nothing
/// was measured, and its zeros are not the storage's. Where a worker waited for a CPU for
/// most of the window, that is why (a 200 ms study point beside a loaded suite on 2 CPUs).
fn nothing_completed(r: &WorkloadResult) -> Option<String> {
    let m = &r.totals.metrics;
    if m.ios > 0 || m.errors > 0 {
        return None;
    }
    let window_ms = r.duration_s * 1e3;
    let window = crate::units::format_duration(std::time::Duration::from_micros((r.duration_s * 1e6).round() as u64));
    let held = r
        .workers
        .iter()
        .filter_map(|w| Some((w.waited_for_cpu_ms?, &w.name)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|(ms, _)| *ms >= window_ms / 2.0)
        .map_or(String::new(), |(ms, name)| format!(", {name} waiting {ms:.0} ms of it for a CPU"));
    Some(format!("{}: no I/O completed in the {window} recorded{held}: nothing was measured ({WARNINGS_PAGE})", r.spec))
}

/// What the host did to the numbers of `results`, one line of each kind (per run, and per
/// study over all its runs): a host busy with other work, a worker it held off the CPU.
/// `config` is the test's (a study's runs differ only in what its points vary).
pub fn of_host<'a, I>(results: I, host: &HostInfo, config: &Job) -> Vec<String>
where
    I: IntoIterator<Item = &'a WorkloadResult>,
    I::IntoIter: Clone,
{
    let results = results.into_iter();
    // Workers in CPU groups of their own did not share the caller's session's.
    let shared = host.autogroup == "shared" && !host.worker_cgroups;
    busy_host(results.clone(), shared)
        .into_iter()
        .chain(held_off_cpu(results.clone(), config, host.cpus))
        .chain(cpus_asleep(results))
        .collect()
}

/// One line when the host's CPUs went to sleep at least [`SLEEPS_PER_IO`] times per I/O of a
/// workload of `results` on storage (not the null target, whose I/Os complete on the worker's
/// thread) whose mean response time is under [`WAKE_UP_MATTERS_MS`], over a window of
/// [`CPU_WINDOW_S`] at least: the workload with the most, and how to keep the CPUs awake. None
/// when none did. One warning of its kind per run, and per study over all its runs.
fn cpus_asleep<'a>(results: impl IntoIterator<Item = &'a WorkloadResult>) -> Option<String> {
    let (mut asleep, mut worst) = (0, None::<(f64, &str)>);
    for r in results {
        let m = &r.totals.metrics;
        let on_storage = r.targets.iter().any(|t| t.path != crate::targets::NULL);
        let said =
            on_storage.then(|| sleeps_said(r.duration_s, m.iops, m.avg_response_ms, r.totals.cpu.sleeps_per_sec));
        if let Some(per_io) = said.flatten() {
            asleep += 1;
            if worst.is_none_or(|(p, _)| per_io > p) {
                worst = Some((per_io, &r.spec));
            }
        }
    }
    let (per_io, spec) = worst?;
    let others = match asleep {
        1 => String::new(),
        n => format!(" ({n} workloads in all)"),
    };
    // A loop device at 1 outstanding on a 2-CPU VM whose idle vCPUs halt: 28 K IOPS, 83 K
    // with the CPUs held awake (docs/performance.md says so with the cure).
    Some(format!(
        "{spec}: the host's CPUs went to sleep {per_io:.1} times per I/O{others}, their wake-ups in the response \
         times; try --cpu-latency 0us (docs/performance.md#response-times-what-each-tool-times)"
    ))
}

/// The CPUs' sleeps per I/O of a workload on storage, recorded for `secs` at `iops` with a
/// mean response time of `mean_ms`, when they are to be said: at least [`SLEEPS_PER_IO`], the
/// mean under [`WAKE_UP_MATTERS_MS`], over [`CPU_WINDOW_S`] at least.
fn sleeps_said(secs: f64, iops: f64, mean_ms: Option<f64>, sleeps_per_sec: f64) -> Option<f64> {
    let mean = mean_ms.filter(|&ms| ms < WAKE_UP_MATTERS_MS && secs >= CPU_WINDOW_S && iops > 0.0)?;
    let per_io = sleeps_per_sec / iops;
    (per_io >= SLEEPS_PER_IO && mean > 0.0).then_some(per_io)
}

/// One line when a worker of `results` waited for a CPU, past its wake-ups' own latency
/// ([`WAKE_UP_US`] a wait), for over [`HELD_OFF_PCT`] of its workload's recorded time (of
/// [`CPU_WINDOW_S`] at least): the worker held longest, how long, and what it means for the
/// numbers, and, where the worker waited for each completion of several in flight, what
/// gives it its CPU back: one CPU of its own (where it could run on several of the host's
/// `host_cpus`), or a batch to sleep for; where its workload's workers outnumber the CPUs
/// they may run on, that they do. None when none was. One warning of its kind per
/// run, and per study over all its runs.
fn held_off_cpu<'a>(
    results: impl IntoIterator<Item = &'a WorkloadResult>,
    config: &Job,
    host_cpus: usize,
) -> Option<String> {
    let (mut held, mut worst) = (0, None::<(f64, f64, &WorkloadResult, &WorkerResult)>);
    // Over a short window a slice or two of other work is a large share: said from the
    // window the busy host is said from.
    for r in results.into_iter().filter(|r| r.duration_s >= CPU_WINDOW_S) {
        for w in &r.workers {
            let (Some(ms), Some(times)) = (w.waited_for_cpu_ms, w.cpu_waits) else { continue };
            let pct = (ms - times as f64 * WAKE_UP_US / 1e3) / (r.duration_s * 1e3) * 100.0;
            if pct > HELD_OFF_PCT {
                held += 1;
                if worst.is_none_or(|(p, ..)| pct > p) {
                    worst = Some((pct, ms, r, w));
                }
            }
        }
    }
    let (_, ms, r, w) = worst?;
    let others = match held {
        1 => String::new(),
        n => format!(" ({n} held)"),
    };
    // A worker that stamps each of several completions as it comes seldom sleeps, and a
    // thread that never sleeps gets its CPU back only when another's turn ends (milliseconds);
    // one that waits for a batch sleeps between them and is woken onto its CPU
    // (docs/performance.md, issue 45, entry 22).
    let storage = w.targets.iter().any(|t| t.path != crate::targets::NULL);
    let stamps_each = config.test.completion_batch == 1 && storage && !paced(config, &w.name);
    // More workers than CPUs to run them hold each other off whatever they wait for: no CPU
    // of its own is there to offer.
    let cpus = cpus_for(&r.workers, host_cpus);
    let mut offers = Vec::new();
    if r.workers.len() > cpus {
        // They take turns on the CPUs, each with the threads serving its I/Os: one on each
        // CPU measures the storage rather than the CPUs' sharing.
        offers.push(format!("fewer workers ({} on {cpus} CPU(s))", r.workers.len()));
    }
    if stamps_each && in_flight_at_most(w).is_some_and(|n| n >= 8) {
        if w.cpus.len() != 1 && host_cpus > 1 && r.workers.len() <= cpus {
            offers.push(PIN_WHEN_HELD.to_string());
        }
        offers.push(BATCH_WHEN_HELD.to_string());
    }
    let offers = match offers.is_empty() {
        true => String::new(),
        false => format!("; try {}", offers.join(" or ")),
    };
    // Other threads held its CPUs (other processes, other workers, the kernel's threads
    // serving the I/Os): the kernel's run delay, workers[].waited_for_cpu_ms.
    Some(format!(
        "{spec}: {} waited {} ms for a CPU while recording{others}, its I/Os that much later{offers} ({BUSY_HOST_PAGE})",
        w.name,
        thousands(ms),
        spec = r.spec,
    ))
}

/// How many CPUs `workers` may run on between them: their affinities' union, the host's
/// `host_cpus` where one ran free (an older document says no affinity).
fn cpus_for(workers: &[WorkerResult], host_cpus: usize) -> usize {
    if workers.iter().any(|w| w.cpus.is_empty()) {
        return host_cpus;
    }
    let mut all: Vec<u32> = workers.iter().flat_map(|w| w.cpus.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    all.len()
}

/// One line for every workload of `results` recorded while other work on the host used more
/// of its CPUs than iogauge and over [`BUSY_HOST_PCT`] ([`other_work_pct`]): which workloads,
/// how busy, and what it means for the numbers; where the workers shared the caller's
/// session's CPU time (`shared`: the document's `host.autogroup` is `shared` and its
/// `host.worker_cgroups` false), how to run it as fio runs its jobs. None when none was. One
/// warning of its kind per run, and per study over all its runs.
fn busy_host<'a>(results: impl IntoIterator<Item = &'a WorkloadResult>, shared: bool) -> Option<String> {
    let (mut all, mut busy, mut others, mut own) = (0, Vec::new(), Vec::new(), Vec::new());
    for r in results {
        all += 1;
        let cpu = &r.totals.cpu;
        let other = other_work_pct(cpu);
        if r.duration_s >= CPU_WINDOW_S && other > BUSY_HOST_PCT && other > cpu.own_pct {
            if !busy.contains(&r.spec) {
                busy.push(r.spec.clone());
            }
            others.push(other);
            own.push(cpu.own_pct);
        }
    }
    let span = |v: &[f64], digits: usize| {
        let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        match hi - lo < 0.05 {
            true => format!("{hi:.digits$}"),
            false => format!("{lo:.digits$}-{hi:.digits$}"),
        }
    };
    if others.is_empty() {
        return None;
    }
    let names = match busy.len() {
        k if k > 4 => format!("{}, {} and {} more", busy[0], busy[1], k - 2),
        _ => busy.join(", "),
    };
    // A study runs a workload at every point: its runs, not as many workloads.
    let which = match (others.len() == all, busy.len() == all) {
        (true, true) if all > 1 => format!("all {all} workloads"),
        (true, false) => format!("every run of {names}"),
        _ => names,
    };
    // Where the kernel shares CPU time between sessions first (crate::host::session), the caller's
    // session's other work takes from the test's share; fio's jobs each lead a session.
    // Held in the caller's session (host.autogroup: shared, as IOGAUGE_SESSION=shared asks and
    // an MPI launcher's ranks have), where each fio job leads a session of its own.
    let session = if shared { ", IOGAUGE_SESSION=shared" } else { "" };
    // Other work: other processes, time the hypervisor took.
    Some(format!(
        "other work on the host used {} % of its CPUs while {which} ran (iogauge {} %{session}): CPU % measures \
         the host; I/O rates may be held back ({BUSY_HOST_PAGE})",
        span(&others, 0),
        span(&own, 1)
    ))
}

/// The share of all the host's CPUs (%) that other work held: busy time that is neither
/// iogauge's own threads' nor the kernel's threads' (a loop device's copies, completions run
/// by ksoftirqd: `kernel_threads_pct`, where recorded). Counted as other work, the kernel's
/// threads made an idle 2-CPU host 46 % busy beside a loop device at 32 outstanding. The
/// interrupts' time is not taken off apart: /proc/stat counts ksoftirqd's softirq time both
/// as softirq and as that thread's (82.8 % busy: iogauge 36.8, kernel threads 46.9, softirq
/// 10.7). Busy time is what /proc/stat's ticks saw of it (its parts): the rest of
/// `utilization_pct`, short bursts between idle periods that no tick saw (interrupts, the CPUs'
/// going to sleep and waking between I/Os: 13 % of a 2-CPU VM's time at one outstanding I/O on
/// a loop device), is the test's price, not other work. In older documents the parts sum to it.
fn other_work_pct(cpu: &crate::host::cpu::CpuUsage) -> f64 {
    let a = &cpu.all;
    let ticked = a.user_pct + a.system_pct + a.irq_pct + a.softirq_pct + a.steal_pct;
    (ticked - cpu.own_pct - cpu.kernel_threads_pct.unwrap_or(0.0)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_threads_are_not_other_work() {
        let cpu = |busy: f64, own, kernel| {
            let parts = crate::host::cpu::CpuShare { system_pct: busy - 10.7, softirq_pct: 10.7, ..Default::default() };
            let all = crate::host::cpu::CpuShare { utilization_pct: busy, ..parts };
            crate::host::cpu::CpuUsage { all, own_pct: own, kernel_threads_pct: kernel, ..Default::default() }
        };
        // A loop device at 32 outstanding on an idle 2-CPU host: its kworkers' and ksoftirqd's
        // time is the storage path's (and /proc/stat's softirq time is theirs too).
        assert_eq!(other_work_pct(&cpu(82.8, 36.8, Some(46.9))), 0.0);
        // Two burners beside it: theirs is other work.
        assert!((other_work_pct(&cpu(100.0, 20.0, Some(25.0))) - 55.0).abs() < 1e-9);
        // A document written before the kernel's threads were counted: the rest as it was.
        assert!((other_work_pct(&cpu(82.8, 36.8, None)) - 46.0).abs() < 1e-9);
        // Busy time no tick saw (a VM's CPUs going to sleep and waking between I/Os) is not.
        let mut unticked = cpu(40.0, 20.0, Some(15.0));
        unticked.all.utilization_pct = 58.0;
        assert!((other_work_pct(&unticked) - 5.0).abs() < 1e-9);
    }

    /// Where the workers shared the CPU time of the caller's session (kept there, in no groups
    /// of their own), a busy host's warning says how fio's jobs run instead; elsewhere not.
    #[test]
    fn a_busy_host_names_the_callers_session_only_where_the_workers_shared_it() {
        let mut doc: ResultDoc = serde_json::from_str(include_str!("../../tests/fixtures/result-1-null.json")).unwrap();
        let r = &mut doc.results[0];
        r.duration_s = 2.0;
        // Two burners beside one worker: 80 % of the host's CPUs theirs.
        let all = crate::host::cpu::CpuShare { utilization_pct: 100.0, user_pct: 100.0, ..Default::default() };
        r.totals.cpu =
            crate::host::cpu::CpuUsage { all, own_pct: 20.0, kernel_threads_pct: Some(0.0), ..Default::default() };
        let said = |autogroup: &str, worker_cgroups| {
            let host = HostInfo { autogroup: autogroup.into(), worker_cgroups, ..doc.host.clone() };
            let warned = of_host(&doc.results, &host, &doc.config);
            let busy = warned.iter().find(|w| w.starts_with("other work on the host")).expect("a busy host");
            busy.contains("IOGAUGE_SESSION=shared")
        };
        assert!(said("shared", false));
        assert!(!said("shared", true), "each worker in a CPU group of its own");
        assert!(!said("own", false));
    }

    /// A run of 2 s on a host of `host_cpus` whose one worker, free to run on `cpus` (empty:
    /// all), kept `outstanding` I/Os in flight on `target` and waited 700 ms for a CPU in 300
    /// waits (beside two CPU burners on 2 CPUs), as `config` asked.
    fn held(target: &str, outstanding: u32, cpus: &[u32], host_cpus: usize, config: &str) -> Option<String> {
        held_workers(1, target, outstanding, cpus, host_cpus, config)
    }

    /// [`held`]'s run with `n` workers alike.
    fn held_workers(
        n: usize,
        target: &str,
        outstanding: u32,
        cpus: &[u32],
        host_cpus: usize,
        config: &str,
    ) -> Option<String> {
        let fixture = include_str!("../../tests/fixtures/result-1-null.json");
        let mut doc: ResultDoc = serde_json::from_str(fixture).unwrap();
        doc.config = toml::from_str(config).unwrap();
        let r = &mut doc.results[0];
        r.duration_s = 2.0;
        let w = &mut r.workers[0];
        (w.waited_for_cpu_ms, w.cpu_waits, w.outstanding) = (Some(700.0), Some(300), Some(outstanding));
        w.engine = Some("io_uring".into());
        w.targets[0].path = target.into();
        w.cpus = cpus.to_vec();
        let w = w.clone();
        r.workers.extend(std::iter::repeat_n(w, n - 1));
        held_off_cpu(&doc.results, &doc.config, host_cpus)
    }

    #[test]
    fn a_worker_held_off_its_cpu_is_told_what_gives_it_back_where_it_waits_for_each_completion() {
        let worker = "[[worker]]\nname = \"worker 1\"\n";
        let said = held("/dev/zram0", 32, &[], 2, worker).expect("held 35 % of the time");
        assert!(said.starts_with("random-read-4k: worker 1 waited 700 ms for a CPU"), "{said}");
        assert!(said.contains("; try --cpus N (a CPU each) or --completion-batch 8"), "{said}");
        // Free to run on two of four CPUs, it is offered one; held to one already, or on a
        // host of one, only the batch.
        assert!(held("/dev/zram0", 32, &[0, 1], 4, worker).unwrap().contains("--cpus N"));
        for (cpus, host_cpus) in [(&[3][..], 4), (&[], 1)] {
            let said = held("/dev/zram0", 32, cpus, host_cpus, worker).expect("held all the same");
            assert!(
                !said.contains("--cpus") && said.contains("--completion-batch 8"),
                "{cpus:?} of {host_cpus}: {said}"
            );
        }
        // Already waiting for a batch; no completion to wait for (null); one I/O at a time or
        // fewer in flight than a batch; waits that end on time to issue at a rate: held, no more.
        for (target, outstanding, config) in [
            ("/dev/zram0", 32, format!("[test]\ncompletion_batch = 8\n{worker}")),
            ("null", 32, worker.to_string()),
            ("/dev/zram0", 4, worker.to_string()),
            ("/dev/zram0", 32, format!("{worker}rate_iops = 1000.0\n")),
        ] {
            let said = held(target, outstanding, &[], 2, &config).expect("held all the same");
            assert!(said.ends_with("its I/Os that much later (docs/performance.md#a-busy-host)"), "{said}");
        }
    }

    #[test]
    fn workers_that_outnumber_their_cpus_are_told_so_not_offered_a_cpu_each() {
        let worker = "[[worker]]\nname = \"worker 1\"\n";
        // Four workers alike, each free on `cpus`, on a host of 2.
        let four = |cpus: &[u32]| held_workers(4, "/dev/zram0", 32, cpus, 2, worker);
        for cpus in [&[0, 1][..], &[]] {
            let said = four(cpus).expect("held 35 % of the time");
            assert!(said.contains("; try fewer workers (4 on 2 CPU(s)) or"), "{cpus:?}: {said}");
            assert!(!said.contains("a CPU each") && said.contains("--completion-batch 8"), "{said}");
        }
        let said = four(&[1]).unwrap();
        assert!(said.contains("fewer workers (4 on 1 CPU(s))"), "{said}");
        // As many workers as CPUs: each can have one.
        assert!(!held("/dev/zram0", 32, &[0, 1], 2, worker).unwrap().contains("outnumber"));
    }

    #[test]
    fn sleeping_cpus_are_said_where_a_wake_up_is_a_share_of_the_response_time() {
        // A loop device at 1 outstanding on this 2-CPU VM: 28 K IOPS, 35 µs, 1.4 sleeps per I/O.
        assert_eq!(sleeps_said(2.0, 28_000.0, Some(0.035), 39_200.0), Some(1.4));
        // At 32 outstanding: 0.07 per I/O.
        assert_eq!(sleeps_said(2.0, 150_000.0, Some(0.09), 10_500.0), None);
        // A disk's 5 ms dwarfs a wake-up, and so do 350 µs; a short window says nothing; nor
        // do no I/Os.
        assert_eq!(sleeps_said(2.0, 200.0, Some(5.0), 400.0), None);
        assert_eq!(sleeps_said(2.0, 30_000.0, Some(0.35), 15_000.0), None);
        assert_eq!(sleeps_said(1.0, 28_000.0, Some(0.035), 39_200.0), None);
        assert_eq!(sleeps_said(2.0, 0.0, None, 39_200.0), None);
        assert_eq!(sleeps_said(2.0, 28_000.0, Some(0.035), 14_000.0), Some(0.5), "the bound itself is said");
    }

    /// Each warning about the host is one short line that sends the user to the page with its
    /// cures (the held-off worker's was 900 characters, its cures and their measurements in it).
    #[test]
    fn warnings_about_the_host_are_one_short_line_pointing_to_the_page() {
        let worker = "[[worker]]\nname = \"worker 1\"\n";
        let mut said = vec![held("/dev/zram0", 32, &[], 2, worker).unwrap()];
        said.push(held_workers(4, "/dev/zram0", 32, &[1], 2, worker).unwrap());
        let mut doc: ResultDoc = serde_json::from_str(include_str!("../../tests/fixtures/result-1-null.json")).unwrap();
        let r = &mut doc.results[0];
        r.duration_s = 2.0;
        r.targets[0].path = "/dev/loop0".into();
        let all = crate::host::cpu::CpuShare { utilization_pct: 100.0, user_pct: 100.0, ..Default::default() };
        r.totals.cpu = crate::host::cpu::CpuUsage { all, own_pct: 20.0, sleeps_per_sec: 1e9, ..Default::default() };
        (r.totals.metrics.iops, r.totals.metrics.avg_response_ms) = (28_000.0, Some(0.035));
        let host = HostInfo { autogroup: "shared".into(), worker_cgroups: false, ..doc.host.clone() };
        said.extend(of_host(&doc.results, &host, &doc.config));
        assert_eq!(said.len(), 4, "held, outnumbered, busy, asleep: {said:?}");
        for w in &said {
            assert!(w.chars().count() <= 200 && !w.contains('\n'), "{} characters: {w}", w.chars().count());
            assert!(w.contains("(docs/performance.md#"), "{w}");
        }
    }

    /// The other warnings of a result (completion batches, a rate not reached, a stop while
    /// recording, nothing completed) are each one short line that sends the user to the page
    /// with their meaning and cures, as the host's are.
    #[test]
    fn the_results_other_warnings_are_one_short_line_pointing_to_the_page() {
        let fixture = include_str!("../../tests/fixtures/result-1-null.json");
        let mut doc: ResultDoc = serde_json::from_str(fixture).unwrap();
        doc.interrupted = false;
        let r = &mut doc.results[0];
        r.workers[0].outstanding = Some(32);
        (r.managers[0].stopped_ms, r.managers[0].stops_untimed) = (1234.0, 1);
        let mut nothing = r.clone();
        nothing.totals.metrics.ios = 0;
        nothing.totals.metrics.errors = 0;
        nothing.managers[0].stops_untimed = 0;
        // A batch of 8 of 32 in flight; then a rate of a billion IOPS, which stamps each I/O.
        let mut said = Vec::new();
        for test in ["completion_batch = 8", "rate_iops = 1000000000.0"] {
            doc.config = toml::from_str(&format!("[test]\n{test}\n[[worker]]\nname = \"worker 1\"\n")).unwrap();
            said.extend(warnings(&doc));
        }
        let kinds = ["stamped once per wait", "below the asked rate", "went on 1 time (SIGCONT)"];
        for kind in kinds {
            assert!(said.iter().any(|w| w.contains(kind)), "{kind} in {said:?}");
        }
        let mut all = said.clone();
        all.push(nothing_completed(&nothing).expect("nothing completed"));
        all.push(stopped(&nothing).expect("a Ctrl-Z timed"));
        for w in &all {
            assert!(w.chars().count() <= 200 && !w.contains('\n'), "{} characters: {w}", w.chars().count());
            assert!(w.ends_with(&format!("({WARNINGS_PAGE})")), "{w}");
        }
    }
}
