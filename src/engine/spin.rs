//! A wait that looks on the CPU a while before it sleeps, where that pays.
//!
//! A worker that sleeps for each completion is woken for it by the thread that completes it
//! (an io-wq thread serving zram, a loop device's kernel thread): that thread pays for the
//! wake-up, and the worker waits for a CPU again. On an idle host that wait is short (0.5-3 µs
//! here); beside other work it is a chance to lose the CPU for a scheduler slice (8-21 µs a
//! wait beside two CPU burners, and milliseconds at the tail). fio's job, slower in its own
//! code, finds a completion ready at nearly every look and seldom sleeps. So where the host
//! makes this thread wait for its CPU more than [`BUSY_WAIT`] a time (its run delay, read from
//! the kernel every [`READ_EVERY`]), a wait looks for a completion for up to [`BUDGET`] before it
//! sleeps. Beside two burners, 4 KiB random reads went from 112-117 K IOPS to 206-220 K at 32
//! outstanding on zram (CPU per I/O 7.3 to 4.4 µs, p50 121 to 68 µs), and from 51-70 K to 94-108
//! K at 4 on a loop device (p99 1.2-2.3 ms to 56-100 µs). On an idle host it would cost CPU
//! for little: zram at 32 gained 11 % of IOPS for 15 % more CPU per I/O, a loop device at 32
//! lost 2 % for 7-11 % more, and at 1 outstanding, where a completion comes 17-40 µs after its
//! I/O, looking for it delays the thread that completes it (26-39 K IOPS fell to 21-27 K).
//! Where completions come later than the budget, looking does not pay either: the wait keeps
//! a score of how often looking found one in time, and under half it looks only at every
//! [`PROBE_EVERY`]th wait, to notice when it pays again (2 CPUs, 2026-11-27,
//! docs/performance.md).

use std::time::{Duration, Instant};

use crate::host::cpu::CpuWaits;

/// How long a wait looks before it sleeps: a few wake-ups' cost on a virtual machine.
const BUDGET: Duration = Duration::from_micros(10);

/// A wait for a CPU longer than this, on average, makes sleeping cost more than a look, which
/// finds a completion in a fraction of the budget (1-2.4 µs on average, measured).
const BUSY_WAIT: Duration = Duration::from_micros(5);

/// How often the thread's waits for a CPU are read.
const READ_EVERY: Duration = Duration::from_millis(50);

/// Waits between two readings of the clock, to see whether [`READ_EVERY`] has passed.
const CLOCK_EVERY: u32 = 64;

/// While looking does not find completions in time, one wait in this many looks anyway.
const PROBE_EVERY: u32 = 32;

/// The score's scale: how often (of [`SCALE`]) recent looks found a completion in time.
const SCALE: u32 = 1024;

/// Whether looking pays: the host's waits for a CPU, and how often looks found a completion.
#[derive(Debug)]
pub struct Spin {
    /// Whether this thread's recent waits for a CPU were long ([`BUSY_WAIT`]).
    busy: bool,
    /// Where those waits are read from; None where the kernel keeps no count (never busy).
    host: Option<Host>,
    /// A moving average of looks that found a completion (of [`SCALE`]; each look weighs 1/8).
    score: u32,
    /// Waits since the last look, while looks do not find completions in time.
    skipped: u32,
}

/// This thread's waits for a CPU, read now and then.
#[derive(Debug)]
struct Host {
    tid: u32,
    last: CpuWaits,
    /// Waits left before the clock is read again, and when the waits are read next.
    clock_in: u32,
    read_at: Instant,
}

impl Spin {
    /// The waits of the calling thread.
    pub fn of_this_thread() -> Spin {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        let host = CpuWaits::of_thread(tid).map(|last| Host {
            tid,
            last,
            clock_in: CLOCK_EVERY,
            read_at: Instant::now() + READ_EVERY,
        });
        Spin { busy: false, host, score: SCALE, skipped: 0 }
    }

    /// Looks at `ready` until it is true or [`BUDGET`] is spent, where looking pays (see the
    /// module's text; a look every [`PROBE_EVERY`]th wait while looks do not find completions
    /// in time).
    pub fn look(&mut self, mut ready: impl FnMut() -> bool) {
        self.watch_host();
        if !self.busy {
            return;
        }
        if self.score < SCALE / 2 {
            self.skipped += 1;
            if self.skipped < PROBE_EVERY {
                return;
            }
        }
        self.skipped = 0;
        let start = Instant::now();
        let found = loop {
            if ready() {
                break true;
            }
            if start.elapsed() >= BUDGET {
                break false;
            }
            std::hint::spin_loop();
        };
        self.score = self.score - self.score / 8 + if found { SCALE / 8 } else { 0 };
    }

    /// Reads this thread's waits for a CPU once [`READ_EVERY`] has passed.
    fn watch_host(&mut self) {
        let Some(h) = &mut self.host else { return };
        h.clock_in -= 1;
        if h.clock_in > 0 {
            return;
        }
        h.clock_in = CLOCK_EVERY;
        let now = Instant::now();
        if now < h.read_at {
            return;
        }
        h.read_at = now + READ_EVERY;
        if let Some(w) = CpuWaits::of_thread(h.tid) {
            self.busy = long_waits(&w.since(&h.last));
            h.last = w;
        }
    }
}

/// Whether waits for a CPU (`w`, over one reading's period) were long. A thread that looked
/// throughout and was never put off its CPU has none: looking cost only itself, and the next
/// period, asleep between completions, says what a wake-up costs now.
fn long_waits(w: &CpuWaits) -> bool {
    w.times > 0 && w.ns > BUSY_WAIT.as_nanos() as u64 * w.times
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wait on a host whose waits for a CPU are long, and not read again.
    fn on_a_busy_host() -> Spin {
        Spin { busy: true, host: None, score: SCALE, skipped: 0 }
    }

    /// How many of `waits` waits looked at all, with `ready` answering each look.
    fn looks(spin: &mut Spin, waits: u32, ready: bool) -> u32 {
        let mut looked = 0;
        for _ in 0..waits {
            let mut asked = false;
            spin.look(|| {
                asked = true;
                ready
            });
            looked += u32::from(asked);
        }
        looked
    }

    #[test]
    fn looks_at_every_wait_while_completions_come_in_time() {
        let mut spin = on_a_busy_host();
        assert_eq!(looks(&mut spin, 1000, true), 1000);
    }

    #[test]
    fn stops_looking_when_it_does_not_find_completions_then_probes() {
        let mut spin = on_a_busy_host();
        // From a full score, each miss takes an eighth of what is left: six misses bring it
        // under half.
        assert_eq!(looks(&mut spin, 6, false), 6);
        let start = Instant::now();
        assert_eq!(looks(&mut spin, 10 * PROBE_EVERY, false), 10);
        // The ten probes spent their budget each, no more.
        assert!(start.elapsed() >= 10 * BUDGET);
    }

    #[test]
    fn looks_again_once_probes_find_completions() {
        let mut spin = on_a_busy_host();
        // Six misses and four probes that miss: a score of 272 of 1024.
        assert_eq!(looks(&mut spin, 6 + 4 * PROBE_EVERY, false), 10);
        // Three probes that find completions raise it past half (520); from then on every
        // wait looks.
        assert_eq!(looks(&mut spin, 10 * PROBE_EVERY, true), 3 + 7 * PROBE_EVERY);
    }

    #[test]
    fn a_wait_on_an_idle_host_sleeps_at_once() {
        // A new wait takes the host for idle until its waits say otherwise.
        let mut spin = Spin::of_this_thread();
        assert_eq!(looks(&mut spin, 1000, true), 0);
    }

    #[test]
    fn long_waits_are_over_half_the_budget_a_time() {
        let w = |ns, times| CpuWaits { ns, times };
        // Idle, here: 1.3-2.9 µs a wait; beside two burners, 8.2-20.9 µs.
        assert!(!long_waits(&w(222_000_000, 76_906)));
        assert!(long_waits(&w(342_000_000, 41_868)));
        assert!(!long_waits(&w(5_000, 1)));
        assert!(long_waits(&w(5_001, 1)));
        // Never put off its CPU: nothing to say.
        assert!(!long_waits(&w(0, 0)));
    }
}
