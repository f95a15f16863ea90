//! When the test's process was stopped. A stopped test issues no I/O while its clock runs on,
//! so a run's rates count the stop as time the storage did nothing, and a worker looks stalled
//! once it goes on. Ctrl-Z (SIGTSTP, which the process the user started forwards to the test's,
//! session.rs) is timed from the stop to the continue; a SIGSTOP from elsewhere cannot be caught
//! and is seen only when the process goes on (SIGCONT), its length unknown. The result says both
//! (`managers[].stopped_ms`, `stops_untimed`), and the stall check counts from the continue.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use std::time::{Duration, Instant};

/// How many stops are kept: a test stopped more often than this forgets the oldest.
const KEPT: usize = 64;
/// Each stop's start (CLOCK_MONOTONIC ns; 0 where it could not be timed) and end.
static BEGAN: [AtomicU64; KEPT] = [const { AtomicU64::new(0) }; KEPT];
static ENDED: [AtomicU64; KEPT] = [const { AtomicU64::new(0) }; KEPT];
/// Stops seen so far.
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// When the Ctrl-Z being served stopped the process (0: none).
static STOPPING: AtomicU64 = AtomicU64::new(0);

/// CLOCK_MONOTONIC, Instant's clock, in ns.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given and is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ctrl-Z: note the time, then stop as the default action would (also where the process group
/// is orphaned, the test's own session, where the kernel discards a default-action SIGTSTP).
extern "C" fn on_stop(_: libc::c_int) {
    STOPPING.store(monotonic_ns(), Relaxed);
    // SAFETY: raise is async-signal-safe.
    unsafe { libc::raise(libc::SIGSTOP) };
}

/// Going on: the stop just served ends now, timed if Ctrl-Z began it. The Ctrl-Z's start is
/// cleared only once the stop is kept, so that a thread that asks meanwhile sees one or the
/// other (`stops`).
extern "C" fn on_continue(_: libc::c_int) {
    let now = monotonic_ns();
    let n = COUNT.load(Relaxed);
    BEGAN[n % KEPT].store(STOPPING.load(Relaxed), Relaxed);
    ENDED[n % KEPT].store(now, Relaxed);
    COUNT.store(n + 1, Release);
    STOPPING.store(0, Release);
}

/// From now on stops of this process are kept. Called before the test starts any thread.
pub fn time_stops() {
    for (sig, handler) in [(libc::SIGTSTP, on_stop as extern "C" fn(libc::c_int)), (libc::SIGCONT, on_continue)] {
        // SAFETY: the handlers touch only atomics and async-signal-safe calls (clock_gettime,
        // raise); glibc's signal() restarts the system calls they interrupt.
        unsafe { libc::signal(sig, handler as *const () as libc::sighandler_t) };
    }
}

/// The stops that overlap a span of time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stops {
    /// How long the timed ones (Ctrl-Z) held the process within the span.
    pub timed: Duration,
    /// How many untimed ones (a SIGSTOP) it went on from within the span.
    pub untimed: u32,
}

/// Every stop (start, end, whether its continue is still being served) as Instants, start None
/// where untimed; one the process has gone on from but whose continue no thread has served yet
/// ends now. All threads run again at once,
/// and the one SIGCONT's handler goes to may run later than the one asking: a Ctrl-Z's is seen
/// by its start, kept until its continue is; an untimed one's while SIGCONT is pending (not
/// in the instant its thread takes it and begins the handler).
fn stops() -> Vec<(Option<Instant>, Instant, bool)> {
    let stopping = STOPPING.load(Acquire);
    let n = COUNT.load(Acquire).min(KEPT);
    // Read together, the two clocks convert one to the other (Instant is CLOCK_MONOTONIC).
    let (now, now_ns) = (Instant::now(), monotonic_ns());
    let at = |ns: u64| now.checked_sub(Duration::from_nanos(now_ns.saturating_sub(ns)));
    let mut out = Vec::new();
    let mut served = false;
    for i in 0..n {
        let (began, ended) = (BEGAN[i].load(Relaxed), ENDED[i].load(Relaxed));
        served |= stopping > 0 && began == stopping;
        if let Some(ended) = at(ended) {
            out.push(((began > 0).then(|| at(began)).flatten(), ended, false));
        }
    }
    if stopping > 0 && !served {
        out.push((at(stopping), now, true));
    } else if stopping == 0 && continue_pending() {
        out.push((None, now, true));
    }
    out
}

/// Whether a SIGCONT waits for a thread to take it.
fn continue_pending() -> bool {
    // SAFETY: sigset_t is plain bits, filled by sigpending (this thread's and the process's).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut set) == 0 && libc::sigismember(&set, libc::SIGCONT) == 1
    }
}

/// The stops within `from`..`to`.
fn between(from: Instant, to: Instant) -> Stops {
    let mut s = Stops::default();
    for (began, ended, serving) in stops() {
        // One still being served ends at `to` where that was read before it.
        let ended = if serving { ended.min(to) } else { ended };
        match began {
            Some(b) => s.timed += ended.min(to).saturating_duration_since(b.max(from)),
            None if ended > from && ended <= to => s.untimed += 1,
            None => {}
        }
    }
    s
}

/// The stops between two times, in ns from `epoch` (a run's clock).
pub fn since(epoch: Instant, from_ns: u64, to_ns: u64) -> Stops {
    let at = |ns: u64| epoch + Duration::from_nanos(ns);
    between(at(from_ns), at(to_ns))
}

/// When the process last went on after a stop, if it has (now, for one being served).
pub fn last_continued() -> Option<Instant> {
    stops().into_iter().map(|(_, ended, _)| ended).max()
}
