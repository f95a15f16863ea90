//! When an open loop's I/Os are due: evenly spaced, or a Poisson process (exponential gaps)
//! at the same mean rate.

use crate::config::Arrivals;
use crate::rng::Rng;

/// The arrival times of an open loop.
pub(super) struct Arrival {
    /// When the next I/O is due (ns from the epoch).
    pub(super) next_ns: u64,
    /// Exact time of the next arrival (ns), kept in f64 so rounding does not drift the rate.
    next: f64,
    /// Mean gap (ns).
    gap: f64,
    /// Exponential gaps draw from this; None for uniform ones.
    rng: Option<Rng>,
}

impl Arrival {
    pub(super) fn new(rate_iops: f64, kind: Arrivals, seed: u64, start_ns: u64) -> Self {
        let rng = (kind == Arrivals::Poisson).then(|| Rng::new(seed, 0xa771_7a15));
        Arrival { next_ns: start_ns, next: start_ns as f64, gap: 1e9 / rate_iops, rng }
    }

    /// The due time of the arrival being issued; moves on to the next.
    pub(super) fn take(&mut self) -> u64 {
        let due = self.next_ns;
        self.next += match &mut self.rng {
            // Inverse transform of a uniform in (0, 1]: an exponential gap of mean `gap`.
            Some(r) => -self.gap * (((r.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64).ln(),
            None => self.gap,
        };
        self.next_ns = self.next as u64;
        due
    }
}
