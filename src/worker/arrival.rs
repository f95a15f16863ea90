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
    /// Mean gap (ns) per I/O (`rate_iops`) and per byte (`rate_mbps`): an I/O of `len` bytes
    /// is followed by the larger of `per_io` and `per_byte * len`.
    per_io: f64,
    per_byte: f64,
    /// Exponential gaps draw from this; None for uniform ones.
    rng: Option<Rng>,
}

impl Arrival {
    /// Arrivals at `rate_iops` I/Os or `rate_mbps` MB/s, whichever is slower; None if neither.
    pub(super) fn new(
        rate_iops: Option<f64>,
        rate_mbps: Option<f64>,
        kind: Arrivals,
        seed: u64,
        start_ns: u64,
    ) -> Option<Self> {
        if rate_iops.is_none() && rate_mbps.is_none() {
            return None;
        }
        let rng = (kind == Arrivals::Poisson).then(|| Rng::new(seed, 0xa771_7a15));
        let (per_io, per_byte) = (rate_iops.map_or(0.0, |r| 1e9 / r), rate_mbps.map_or(0.0, |r| 1e3 / r));
        Some(Arrival { next_ns: start_ns, next: start_ns as f64, per_io, per_byte, rng })
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
