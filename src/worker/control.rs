//! What the main thread and a worker share while a test runs: the worker's live counters (read
//! by the monitor, the live outputs and metrics) and the run's control (the barrier, the epoch,
//! the recording window, the stop and give-up requests), and the signal that wakes a worker.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, OnceLock};
use std::time::Instant;

use crate::host::cpu;
use crate::stats::{LiveHistogram, Op};

/// A worker's running totals (all completions, ramp-up included), for the live line and the
/// interval samples, and its recorded counts per target and operation, for live metrics. On
/// its own cache line so workers do not slow each other down.
#[repr(align(64))]
#[derive(Default)]
pub struct Live {
    /// Completed I/Os.
    pub ios: AtomicU64,
    /// Bytes transferred.
    pub bytes: AtomicU64,
    /// Sum of response times (ns) of the completions before recording ended.
    pub response_ns: AtomicU64,
    /// Their response times, for each interval's percentiles.
    pub latency: LiveHistogram,
    /// The worker's thread (pthread_t) while it runs I/O, 0 otherwise: the main thread
    /// interrupts its wait for completions with [`wake`] when the test stops.
    pub thread: AtomicU64,
    /// I/Os in flight when it last waited for completions.
    pub in_flight: AtomicU64,
    /// Its thread's id (gettid) once started, whose scheduling counters give its waits for a
    /// CPU ([`Live::cpu_waits`]).
    tid: AtomicU32,
    /// Those waits as the thread ended: its /proc entry goes with it.
    ended_cpu_waits: OnceLock<cpu::CpuWaits>,
    /// Those waits as the thread first ran after it stopped issuing (recording's end, a stop,
    /// its count done): a wait for a CPU that spans the end is counted by the kernel only once
    /// the thread runs again, after the monitor's look at the end.
    last_issue_cpu_waits: OnceLock<cpu::CpuWaits>,
    /// Per target and operation (`[target][op]`): what the result will count, as it is
    /// counted (recorded I/Os and bytes; errors whenever they happen), so a live total never
    /// exceeds the final one.
    pub recorded: Box<[[LiveCount; Op::ALL.len()]]>,
}

impl Live {
    /// The counters of a worker with `targets` targets.
    pub fn new(targets: usize) -> Live {
        Live { recorded: (0..targets).map(|_| Default::default()).collect(), ..Live::default() }
    }

    /// Called by the thread it counts, as it starts (before the first meeting).
    pub fn thread_started(&self) {
        // SAFETY: gettid has no preconditions.
        self.tid.store(unsafe { libc::gettid() } as u32, Relaxed);
    }

    /// Its thread's id: 0 before it started.
    pub fn tid(&self) -> u32 {
        self.tid.load(Relaxed)
    }

    /// Called by the thread it counts, as it ends (before it is counted finished).
    pub fn thread_ending(&self) {
        if let Some(w) = cpu::CpuWaits::of_thread(self.tid()) {
            let _ = self.ended_cpu_waits.set(w);
        }
    }

    /// Called by the thread it counts once it has stopped issuing; the first call counts.
    pub fn thread_stopped_issuing(&self) {
        if self.last_issue_cpu_waits.get().is_none() {
            if let Some(w) = cpu::CpuWaits::of_thread(self.tid()) {
                let _ = self.last_issue_cpu_waits.set(w);
            }
        }
    }

    /// Its thread's waits for a CPU so far, or to when it stopped issuing once it has: None
    /// before it started, or where the kernel keeps no count.
    pub fn cpu_waits(&self) -> Option<cpu::CpuWaits> {
        if let Some(w) = self.last_issue_cpu_waits.get() {
            return Some(*w);
        }
        let ended = || self.ended_cpu_waits.get().copied();
        let tid = self.tid();
        // A thread that ends between the two looks has left its count behind.
        ended().or_else(|| (tid != 0).then(|| cpu::CpuWaits::of_thread(tid)).flatten()).or_else(ended)
    }

    /// One recorded I/O of a thread that counts each as it completes (a file-system test's;
    /// a worker publishes its totals once per batch instead). Only that thread writes.
    pub fn count_one(&self, target: usize, op: Op, bytes: u64, response_ns: u64) {
        let c = &self.recorded[target][op as usize];
        LiveCount::bump(&c.ios, 1);
        LiveCount::bump(&c.bytes, bytes);
        LiveCount::bump(&self.ios, 1);
        LiveCount::bump(&self.bytes, bytes);
        LiveCount::bump(&self.response_ns, response_ns);
        self.latency.record(response_ns);
    }

    /// One failed I/O of such a thread.
    pub fn count_error(&self, target: usize, op: Op) {
        LiveCount::bump(&self.recorded[target][op as usize].errors, 1);
    }
}

/// One target's and operation's recorded counts. Only its worker writes them (a load and a
/// store, no locked instruction); any thread may read them.
#[derive(Default)]
pub struct LiveCount {
    /// Successful I/Os recorded.
    pub ios: AtomicU64,
    /// Their bytes.
    pub bytes: AtomicU64,
    /// Failed I/Os.
    pub errors: AtomicU64,
}

impl LiveCount {
    #[inline(always)]
    pub(super) fn bump(counter: &AtomicU64, by: u64) {
        counter.store(counter.load(Relaxed) + by, Relaxed);
    }
}

/// The signal that interrupts a worker's wait for completions (its handler does nothing; the
/// wait returns EINTR and the worker sees that the test stops). SIGURG, ignored by default, is
/// not used by anything else here.
const WAKE_SIGNAL: i32 = libc::SIGURG;

extern "C" fn on_wake(_: i32) {}

/// Interrupts the wait for completions of every worker still running I/O.
pub fn wake(live: &[Live]) {
    static HANDLER: OnceLock<()> = OnceLock::new();
    HANDLER.get_or_init(|| {
        // SAFETY: a handler that does nothing is async-signal-safe; no SA_RESTART, so a blocked
        // io_uring_enter returns EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_wake as *const () as libc::sighandler_t;
            libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut());
        }
    });
    for l in live {
        let t = l.thread.load(Relaxed);
        if t != 0 {
            // SAFETY: the thread is a worker of this test, not yet joined (its id stays valid
            // until then, even once it has returned).
            unsafe { libc::pthread_kill(t as libc::pthread_t, WAKE_SIGNAL) };
        }
    }
}

/// What the main thread and the workers share during a run.
pub struct Control {
    /// Workers and the main thread meet here twice: after set-up, and at the start.
    pub barrier: Barrier,
    /// The instant all clocks count from; set by the main thread between the two meetings.
    pub epoch: OnceLock<Instant>,
    /// Completions at or after this many ns from the epoch are recorded... (set by the main
    /// thread between the two meetings: the ramp-up's end, or the instant every manager
    /// records from)
    pub record_start_ns: AtomicU64,
    /// ...and before this one (u64::MAX when the test stops on a count, or until known).
    pub record_end_ns: AtomicU64,
    /// Asks every worker to stop issuing.
    pub stop: AtomicBool,
    /// Asks every stopped worker to give up its I/Os in flight now rather than after io_timeout.
    pub give_up: AtomicBool,
    /// A worker failed to set up; nobody runs.
    pub failed: AtomicBool,
    /// Workers that have finished.
    pub finished: AtomicUsize,
    /// One per worker.
    pub live: Vec<Live>,
}

impl Control {
    /// The control of a run of `live.len()` threads (one `Live` each) and the main thread,
    /// recording completions from `record_start_ns` to `record_end_ns` (ns from the epoch).
    pub fn new(live: Vec<Live>, record_start_ns: u64, record_end_ns: u64) -> Control {
        Control {
            barrier: Barrier::new(live.len() + 1),
            epoch: OnceLock::new(),
            record_start_ns: AtomicU64::new(record_start_ns),
            record_end_ns: AtomicU64::new(record_end_ns),
            stop: AtomicBool::new(false),
            give_up: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            finished: AtomicUsize::new(0),
            live,
        }
    }
}
