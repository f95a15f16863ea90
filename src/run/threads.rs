//! Threads of a test that are not workers: a file-system test's, each writing or reading its
//! own files to their end. They count on the same live path as workers and the same monitor
//! watches them, so the live line, `--live-json`, `/metrics`, Ctrl-C and the time series
//! (with each interval's percentiles) work for them as for any run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime};

use super::monitor::{self, Clock, Monitor, Observer};
use super::snapshot::Counters;
use crate::host::cpu::{CpuSnapshot, CpuWaits};
use crate::managers::Solo;
use crate::result::Interval;
use crate::worker::{Control, Live};

/// What a thread is given besides its index.
pub struct Lane<'a> {
    /// Its live counters: one target (0), counted with [`Live::count_one`].
    pub live: &'a Live,
    /// Set when the test stops (Ctrl-C): the thread ends at its next I/O.
    pub stop: &'a AtomicBool,
    /// Every thread's times count from here, and start together just after it.
    pub epoch: Instant,
}

/// What the monitor saw of the threads' run.
pub struct Watched {
    /// The time series, from the threads' start to the monitor's look after the last ended.
    pub intervals: Vec<Interval>,
    /// The CPU counters as the threads started, and after the last ended.
    pub cpu_start: CpuSnapshot,
    /// See `cpu_start`.
    pub cpu_end: CpuSnapshot,
    /// The wall-clock time the threads started.
    pub started_at: SystemTime,
    /// Each thread's waits for a CPU, where the kernel counts them.
    pub cpu_waits: Vec<Option<CpuWaits>>,
    /// The process's stops while the threads ran (Ctrl-Z, SIGSTOP).
    pub stops: crate::host::stops::Stops,
}

/// Runs one thread per entry of `threads` (its name, and the label its counts carry as their
/// target) together, each doing `body`, sampled every `interval` as workload `workload`, until
/// every one has returned; their results in order.
pub fn run_threads<T: Send>(
    threads: &[(String, String)],
    workload: &str,
    interval: Duration,
    observer: &mut dyn Observer,
    body: impl Fn(usize, Lane) -> T + Sync,
) -> (Vec<T>, Watched) {
    // Everything is recorded: a thread's work is its files, whole.
    let ctl = Arc::new(Control::new(threads.iter().map(|_| Live::new(1)).collect(), 0, u64::MAX));
    std::thread::scope(|s| {
        let handles: Vec<_> = threads
            .iter()
            .enumerate()
            .map(|(i, (name, _))| {
                let (ctl, body) = (&*ctl, &body);
                std::thread::Builder::new()
                    .name(name.clone())
                    .spawn_scoped(s, move || {
                        ctl.live[i].thread_started();
                        // The same two meetings as a worker's: set up, then the epoch is set.
                        ctl.barrier.wait();
                        ctl.barrier.wait();
                        let epoch = *ctl.epoch.get().expect("the epoch is set before the second meeting");
                        let live = &ctl.live[i];
                        live.in_flight.store(1, Relaxed);
                        let out = body(i, Lane { live, stop: &ctl.stop, epoch });
                        live.in_flight.store(0, Relaxed);
                        live.thread_ending();
                        // Release: a monitor that sees it finished sees all it counted.
                        ctl.finished.fetch_add(1, std::sync::atomic::Ordering::Release);
                        out
                    })
                    .expect("a thread for the test (the thread limit was checked before)")
            })
            .collect();
        ctl.barrier.wait();
        let epoch = Instant::now();
        let started = SystemTime::now();
        ctl.epoch.set(epoch).expect("set once");
        // A file-system test's threads have no targets of their own whose devices to count.
        let first = monitor::bounding_mark(&ctl.live, &[], 0);
        ctl.barrier.wait();
        let names = threads.iter().map(|(name, target)| (name.clone(), vec![target.clone()])).collect();
        let counters = &Counters { ctl: Arc::clone(&ctl), names: Arc::new(names), rank: 0, workload: workload.into() };
        observer.workload_started(counters);
        let clock = &Clock::until_done(interval);
        // A thread blocked in the kernel cannot be woken as a worker's wait can: no stall limit.
        let io_timeout = Duration::from_nanos(u64::MAX);
        let window = Monitor {
            ctl: &ctl,
            group: &Solo::new(),
            epoch,
            started,
            first,
            devices: &[],
            clock,
            spec: workload,
            counters,
            observer,
            io_timeout,
        }
        .watch();
        let outcomes = handles.into_iter().map(|h| h.join().expect("a test thread panicked")).collect();
        // Stopped, the monitor looked last before the threads finished their records.
        let (ios, bytes) = monitor::recorded(&ctl.live);
        let watched = Watched {
            intervals: monitor::reconciled(&window.intervals, ios, bytes),
            cpu_waits: (0..threads.len()).map(|i| window.cpu_waits(i)).collect(),
            cpu_start: window.start.cpu,
            cpu_end: window.end.cpu,
            started_at: window.started_at,
            stops: window.stops,
        };
        (outcomes, watched)
    })
}
