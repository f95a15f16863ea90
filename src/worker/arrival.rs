//! When an open loop's I/Os are due: evenly spaced, or a Poisson process (exponential gaps)
//! at the same mean rate.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::config::{Arrivals, Rate};
use crate::rng::Rng;

/// The arrival times of an open loop.
pub(super) struct Arrival {
    /// When the next I/O is due (ns from the epoch).
    pub(super) next_ns: u64,
    /// Exact time of the next arrival (ns), kept in f64 so rounding does not drift the rate.
    next: f64,
    /// Mean gap (ns) per I/O and per byte: an I/O of `len` bytes is followed by the larger of
    /// `per_io` and `per_byte * len`.
    per_io: f64,
    per_byte: f64,
    /// Exponential gaps draw from this; None for uniform ones.
    rng: Option<Rng>,
    /// Whether recording has started (`record_from` has dropped what was owed before it).
    recording: bool,
}

impl Arrival {
    /// Arrivals at `rate`'s I/Os per second or MB/s, whichever is slower; None in a closed
    /// loop.
    pub(super) fn new(rate: Rate, kind: Arrivals, seed: u64, start_ns: u64) -> Option<Self> {
        if !rate.is_open_loop() {
            return None;
        }
        let rng = (kind == Arrivals::Poisson).then(|| Rng::new(seed, 0xa771_7a15));
        let (per_io, per_byte) = (rate.iops.map_or(0.0, |r| 1e9 / r), rate.mbps.map_or(0.0, |r| 1e3 / r));
        Some(Arrival { next_ns: start_ns, next: start_ns as f64, per_io, per_byte, rng, recording: false })
    }

    /// Once `now` reaches the start of recording (`record_start_ns`), arrivals the ramp-up
    /// fell behind on are dropped: issued in a burst inside the recorded window, they would
    /// count as a rate nobody asked for and their wait as response time the ramp-up caused.
    /// Recording starts on schedule, at its own start. (Exponential gaps have no memory: a
    /// Poisson process restarted there keeps its law.)
    /// Once recording has started it does nothing, without reading `record_start_ns`.
    #[inline(always)]
    pub(super) fn record_from(&mut self, record_start_ns: &AtomicU64, now: u64) {
        if self.recording {
            return;
        }
        let start = record_start_ns.load(Relaxed);
        if now >= start {
            self.recording = true;
            if self.next_ns < start {
                (self.next_ns, self.next) = (start, start as f64);
            }
        }
    }

    /// The due time of the arrival being issued, an I/O of `len` bytes; moves on to the next.
    pub(super) fn take(&mut self, len: u32) -> u64 {
        let due = self.next_ns;
        let gap = self.per_io.max(self.per_byte * len as f64);
        self.next += match &mut self.rng {
            // Inverse transform of a uniform in (0, 1]: an exponential gap of mean `gap`.
            Some(r) => -gap * (((r.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64).ln(),
            None => gap,
        };
        self.next_ns = self.next as u64;
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Poisson arrivals have exponential gaps of mean 1/rate. Over 200,000 gaps (a fixed seed):
    /// the mean within 4.9 standard errors (an exponential's deviation is its mean: 1.1 %), and
    /// the share of gaps longer than the mean e^-1 within 4.9 binomial deviations (0.5 points):
    /// bounds a correct generator misses once in a million seeds.
    #[test]
    fn poisson_gaps_are_exponential_at_the_rate() {
        let mut a = Arrival::new(Rate { iops: Some(1000.0), mbps: None }, Arrivals::Poisson, 7, 0).unwrap();
        let (n, mean_ns) = (200_000, 1e6);
        let mut last = a.take(4096);
        let (mut sum, mut longer) = (0.0, 0u32);
        for _ in 0..n {
            let due = a.take(4096);
            let gap = (due - last) as f64;
            sum += gap;
            longer += u32::from(gap > mean_ns);
            last = due;
        }
        let mean = sum / n as f64;
        assert!((mean / mean_ns - 1.0).abs() < 4.9 / (n as f64).sqrt(), "mean gap {mean} ns");
        let p = (-1.0f64).exp();
        let share = longer as f64 / n as f64;
        assert!((share - p).abs() < 4.9 * (p * (1.0 - p) / n as f64).sqrt(), "{share} of gaps over the mean");
    }

    /// Recording starts on schedule: arrivals still owed from before its start are dropped,
    /// once; arrivals on time are left alone.
    #[test]
    fn recording_starts_at_its_own_start() {
        let mut a = Arrival::new(Rate { iops: Some(1000.0), mbps: None }, Arrivals::Uniform, 1, 0).unwrap();
        a.record_from(&AtomicU64::new(5_000_000), 4_000_000);
        assert_eq!(a.take(4096), 0, "before recording starts, nothing changes");
        // 10 ms in, behind since the first arrival: the next is due at recording's start.
        a.record_from(&AtomicU64::new(5_000_000), 10_000_000);
        assert_eq!((a.take(4096), a.take(4096)), (5_000_000, 6_000_000));
        // Once only: a later call moves nothing.
        a.record_from(&AtomicU64::new(50_000_000), 60_000_000);
        assert_eq!(a.take(4096), 7_000_000);
        // On schedule at the start: the arrivals keep their times.
        let mut b = Arrival::new(Rate { iops: Some(1000.0), mbps: None }, Arrivals::Uniform, 1, 0).unwrap();
        for _ in 0..6 {
            b.take(4096);
        }
        b.record_from(&AtomicU64::new(5_000_000), 5_500_000);
        assert_eq!(b.take(4096), 6_000_000);
    }
}
