//! A log-linear latency histogram (HdrHistogram's layout, fixed precision) that merges exactly.
//!
//! Values below 128 ns have a bucket each; above that every power of two is split into 64
//! buckets, so a bucket's midpoint is within 1/128 (0.78 %) of any value in it. Buckets grow on
//! demand, so a histogram of microsecond latencies stays about 10 KiB. Merging adds counts, so
//! percentiles over merged histograms are exactly those of one histogram holding every sample.

use std::ops::AddAssign;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

/// Values below this have a bucket each.
const EXACT: u64 = 128;
/// Buckets per power of two above [`EXACT`].
const SUB: usize = 64;
/// The layout name written with serialised histograms, so a reader knows how to decode them.
pub const LAYOUT: &str = "log-linear-ns-64";

/// Counts of latencies in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

/// The bucket holding `v`.
#[inline(always)]
fn index(v: u64) -> usize {
    if v < EXACT {
        v as usize
    } else {
        let shift = 57 - v.leading_zeros(); // msb - 6: keeps the top 7 bits, in 64..=127
        ((shift as usize) * SUB) + (v >> shift) as usize
    }
}

/// The smallest and largest value of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    if (i as u64) < EXACT {
        (i as u64, i as u64)
    } else {
        let shift = (i / SUB - 1) as u32;
        let lo = ((i % SUB + SUB) as u64) << shift;
        (lo, lo + (1u64 << shift) - 1)
    }
}

impl Histogram {
    /// Counts one value.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1)
    }

    /// Counts `n` values of `v` (one, or a bucket of a histogram another tool wrote).
    #[inline(always)]
    pub fn record_n(&mut self, v: u64, n: u64) {
        let i = index(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += n;
        self.total += n;
    }

    /// How many values were counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The value at quantile `q` (0..=1): the midpoint of the bucket holding the sample of rank
    /// ceil(q x total), or None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(i);
                return Some(lo + (hi - lo) / 2);
            }
        }
        unreachable!("total equals the sum of the counts")
    }

    /// How many values fall in `[lo_ns, hi_ns)`, counting each bucket by where its midpoint is
    /// (so the answer is exact at bucket boundaries and within a bucket's width otherwise).
    pub fn count_between(&self, lo_ns: u64, hi_ns: u64) -> u64 {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(i, _)| {
                let (lo, hi) = bounds(i);
                let mid = lo + (hi - lo) / 2;
                mid >= lo_ns && mid < hi_ns
            })
            .map(|(_, &c)| c)
            .sum()
    }

    /// The non-empty buckets as (index, count), for serialisation.
    pub fn to_sparse(&self) -> Vec<(u32, u64)> {
        self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, &c)| (i as u32, c)).collect()
    }

    /// The non-empty buckets as (smallest value, largest value, count), for drawing.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.to_sparse().into_iter().map(|(i, c)| {
            let (lo, hi) = bounds(i as usize);
            (lo, hi, c)
        })
    }

    /// Rebuilds a histogram from [`Histogram::to_sparse`], or another tool's buckets: each
    /// index within the layout ([`BUCKETS`]: a u64 of ns has no bucket beyond), the counts
    /// summing within a u64, and the buckets within what [`with_room`] leaves, if it was given.
    pub fn from_sparse(buckets: &[(u32, u64)]) -> Result<Self, String> {
        let last = buckets.iter().map(|&(i, _)| i as usize).max();
        if let Some(i) = last.filter(|&i| i >= BUCKETS) {
            return Err(format!("histogram bucket {i}: the layout has {BUCKETS} (0 to {})", BUCKETS - 1));
        }
        take_room(last.map_or(0, |i| i + 1))?;
        let mut h = Histogram { counts: vec![0; last.map_or(0, |i| i + 1)], total: 0 };
        for &(i, c) in buckets {
            h.counts[i as usize] += c;
            h.total = h.total.checked_add(c).ok_or("histogram counts sum beyond 2^64")?;
        }
        Ok(h)
    }
}

impl Histogram {
    /// A histogram of values and their counts (another tool's bins, fio's json+), bounded as
    /// [`Histogram::from_sparse`] bounds it.
    pub fn from_values(values: impl IntoIterator<Item = (u64, u64)>) -> Result<Self, String> {
        let buckets: Vec<(u32, u64)> = values.into_iter().map(|(v, n)| (index(v) as u32, n)).collect();
        Histogram::from_sparse(&buckets)
    }
}

/// Buckets in the layout: the one holding `u64::MAX` (shift 57, top bits 127) is the last.
pub const BUCKETS: usize = (u64::BITS as usize - 7) * SUB + 2 * SUB;

thread_local! {
    /// Buckets the histograms being read may still take, and the bound in bytes, where a
    /// reader set one.
    static ROOM: std::cell::Cell<Option<(usize, usize)>> = const { std::cell::Cell::new(None) };
}

/// Runs `read` with the histograms it rebuilds ([`Histogram::from_sparse`]) taking at most
/// `bytes` of memory together: a histogram is held whole up to its last bucket (30 KiB at
/// most), so a document of many one-bucket histograms far out would ask for many times its
/// own size. (serde hands a `Deserialize` no context: the bound travels beside it.)
pub fn with_room<T>(bytes: usize, read: impl FnOnce() -> T) -> T {
    let before = ROOM.replace(Some((bytes / std::mem::size_of::<u64>(), bytes)));
    let out = read();
    ROOM.set(before);
    out
}

/// Takes room for `buckets` from what [`with_room`] left, if it set a bound.
fn take_room(buckets: usize) -> Result<(), String> {
    match ROOM.get() {
        Some((left, bytes)) if buckets > left => Err(format!(
            "its histograms would take over {} MiB of memory, more than a file of its size may ask for",
            bytes >> 20
        )),
        Some((left, bytes)) => {
            ROOM.set(Some((left - buckets, bytes)));
            Ok(())
        }
        None => Ok(()),
    }
}

impl AddAssign<&Histogram> for Histogram {
    fn add_assign(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }
}

impl Histogram {
    /// Its bucket counts (up to the last non-empty one).
    pub fn counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.counts.iter().copied()
    }

    /// A histogram of the given bucket counts (as [`LiveHistogram::add_to`] collects them),
    /// kept up to the last non-empty one: an interval's sample holds a few hundred buckets,
    /// not the live histogram's thousands.
    pub fn from_counts(mut counts: Vec<u64>) -> Self {
        let used = counts.iter().rposition(|&c| c > 0).map_or(0, |i| i + 1);
        counts.truncate(used);
        counts.shrink_to_fit();
        let total = counts.iter().sum();
        Histogram { counts, total }
    }
}

/// Buckets of a [`LiveHistogram`]: every latency up to 2^40 ns (18 minutes); longer ones
/// count in the last.
pub const LIVE_BUCKETS: usize = (41 - 7) * SUB + SUB;

/// A histogram one thread records into while another reads it, for the time series: per
/// interval, the reader takes the difference of two readings. Its one writer adds with a plain
/// load and store (no locked instruction: as cheap as [`Histogram::record`]); a reading during
/// a write may miss that write, which the next reading then holds.
pub struct LiveHistogram {
    counts: Box<[AtomicU64]>,
}

impl Default for LiveHistogram {
    fn default() -> Self {
        LiveHistogram { counts: (0..LIVE_BUCKETS).map(|_| AtomicU64::new(0)).collect() }
    }
}

impl LiveHistogram {
    /// Counts one value. Only one thread may call this.
    #[inline(always)]
    pub fn record(&self, v: u64) {
        let c = &self.counts[index(v).min(LIVE_BUCKETS - 1)];
        c.store(c.load(Relaxed) + 1, Relaxed);
    }

    /// Adds its counts to `counts` (LIVE_BUCKETS long).
    pub fn add_to(&self, counts: &mut [u64]) {
        for (sum, c) in counts.iter_mut().zip(self.counts.iter()) {
            *sum += c.load(Relaxed);
        }
    }
}

/// The serialised form: layout name and sparse buckets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SerialHistogram {
    /// Always [`LAYOUT`].
    pub layout: String,
    /// (bucket index, count) for every non-empty bucket.
    pub buckets: Vec<(u32, u64)>,
}

impl Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        SerialHistogram { layout: LAYOUT.into(), buckets: self.to_sparse() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = SerialHistogram::deserialize(d)?;
        if s.layout != LAYOUT {
            return Err(serde::de::Error::custom(format!("histogram layout '{}' is not '{LAYOUT}'", s.layout)));
        }
        Histogram::from_sparse(&s.buckets).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_hold_their_values() {
        let mut prev_hi = None;
        for i in 0..3000 {
            let (lo, hi) = bounds(i);
            if let Some(p) = prev_hi {
                assert_eq!(lo, p + 1, "bucket {i}");
            }
            assert_eq!(index(lo), i);
            assert_eq!(index(hi), i);
            prev_hi = Some(hi);
        }
    }

    #[test]
    fn the_layout_ends_at_u64_max_and_readers_keep_within_it() {
        assert_eq!(index(u64::MAX), BUCKETS - 1);
        assert_eq!(bounds(BUCKETS - 1).1, u64::MAX);
        let e = Histogram::from_sparse(&[(BUCKETS as u32, 1)]).unwrap_err();
        assert!(e.contains("bucket 3776") && e.contains("0 to 3775"), "{e}");
        assert!(Histogram::from_sparse(&[(u32::MAX, 5)]).is_err());
        assert!(Histogram::from_sparse(&[(1, u64::MAX), (2, 1)]).unwrap_err().contains("2^64"));
        let h = Histogram::from_sparse(&[(BUCKETS as u32 - 1, 2), (3, 1)]).unwrap();
        assert_eq!((h.total(), h.quantile(1.0).map(|v| v > 1 << 63)), (3, Some(true)));
        // Room for two histograms up to bucket 99: the third is refused, and the bound ends
        // with the reading.
        let far = [(99, 1)];
        let third = with_room(2 * 100 * 8, || [0; 3].map(|_| Histogram::from_sparse(&far).is_ok()));
        assert_eq!(third, [true, true, false]);
        assert!(Histogram::from_sparse(&far).is_ok());
    }

    #[test]
    fn relative_error_under_one_percent() {
        let mut v = 1u64;
        while v < 1 << 40 {
            let (lo, hi) = bounds(index(v));
            let mid = lo + (hi - lo) / 2;
            let err = (mid as f64 - v as f64).abs() / v as f64;
            assert!(err <= 1.0 / 128.0 + 1e-12, "v={v} mid={mid} err={err}");
            v = v * 17 / 16 + 1;
        }
    }

    #[test]
    fn merge_equals_one_histogram_of_all_samples() {
        let (mut a, mut b, mut all) = (Histogram::default(), Histogram::default(), Histogram::default());
        for v in (1..20_000u64).map(|x| x * x % 1_000_003) {
            if v % 3 == 0 { &mut a } else { &mut b }.record(v);
            all.record(v);
        }
        a += &b;
        assert_eq!(a, all);
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(a.quantile(q), all.quantile(q));
        }
        let back = Histogram::from_sparse(&a.to_sparse()).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn quantiles_of_a_known_set() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(50));
        assert_eq!(h.quantile(0.99), Some(99));
        assert_eq!(h.quantile(1.0), Some(100));
        assert_eq!(Histogram::default().quantile(0.5), None);
        assert_eq!(h.count_between(0, 51), 50);
    }

    /// The quantile is the sample of rank ceil(q x n), the nearest rank (fio's too), on counts
    /// where q x n is not whole, where one rank low (floor for ceiling) gives a smaller sample:
    /// the p99 of 150 samples is the 149th (148.5 rounded up), the p99.99 of 1,000 the
    /// maximum (999.9). Each sample is the midpoint of a bucket of its own, so the histogram
    /// gives it back exactly; ranks are counted in integers, apart from the code's floats.
    #[test]
    fn quantiles_are_the_samples_of_the_nearest_rank() {
        // q as parts in 100,000: p50 .. p99.999.
        let qs = [50_000u64, 90_000, 95_000, 99_000, 99_900, 99_990, 99_999];
        for n in [7u64, 150, 333, 999, 1000, 1001, 1500] {
            // Every second bucket from 0 on: distinct buckets, exact below 128, spread above.
            let samples: Vec<u64> = (0..n as usize).map(|k| bounds(2 * k)).map(|(lo, hi)| lo + (hi - lo) / 2).collect();
            let mut h = Histogram::default();
            // Recorded out of order: the ranks are the histogram's, not the recording's.
            for k in (0..n as usize).map(|k| (k * 7919) % n as usize) {
                h.record(samples[k]);
            }
            for q in qs {
                let rank = (q * n).div_ceil(100_000).max(1);
                let want = samples[rank as usize - 1];
                assert_eq!(
                    h.quantile(q as f64 / 100_000.0),
                    Some(want),
                    "q {q}/100000 of {n}: the sample of rank {rank}"
                );
            }
        }
        // The cases named: p99 of 150 is the 149th sample, p99.99 of 1,000 the largest.
        let mid = |i: usize| bounds(i).0 + (bounds(i).1 - bounds(i).0) / 2;
        let mut h = Histogram::default();
        (0..150).for_each(|i| h.record(mid(i)));
        assert_eq!(h.quantile(0.99), Some(mid(148)));
        let mut h = Histogram::default();
        (1..=1000).for_each(|v| h.record(v * 1000));
        let largest = bounds(index(1_000_000));
        assert_eq!(h.quantile(0.9999), Some(largest.0 + (largest.1 - largest.0) / 2));
        assert_ne!(h.quantile(0.9999), h.quantile(0.999), "the 999th sample is in a bucket below the 1000th");
    }

    /// `buckets` gives each non-empty bucket's bounds and count, in order; `count_between`
    /// counts a bucket where its midpoint falls, in buckets wider than one value too (the
    /// Iometer file's latency bins).
    #[test]
    fn buckets_and_counts_between_by_midpoint() {
        let mut h = Histogram::default();
        [5, 5, 1000, 1_000_000].into_iter().for_each(|v| h.record(v));
        let (wide, wider) = (bounds(index(1000)), bounds(index(1_000_000)));
        assert_eq!(h.buckets().collect::<Vec<_>>(), [(5, 5, 2), (wide.0, wide.1, 1), (wider.0, wider.1, 1)]);
        for (lo, hi) in [wide, wider] {
            let mid = lo + (hi - lo) / 2;
            assert!(lo < mid && mid < hi, "a bucket of several values");
            assert_eq!(h.count_between(mid, mid + 1), 1, "counted at its midpoint");
            assert_eq!(h.count_between(lo, mid) + h.count_between(mid + 1, hi + 1), 0, "nowhere else");
        }
        assert_eq!((h.count_between(5, 6), h.count_between(0, u64::MAX)), (2, 4));
    }

    /// A live histogram counts each value in the bucket a histogram does, over its whole range
    /// (2^40 ns), and anything longer in its last bucket; what it adds to a sum is its counts.
    #[test]
    fn a_live_histogram_counts_as_a_histogram_does() {
        let (live, mut plain) = (LiveHistogram::default(), Histogram::default());
        for v in [0, 1, 127, 128, 5_000, 1_000_000, 3_000_000_000, (1 << 40) - 1] {
            live.record(v);
            live.record(v);
            plain.record_n(v, 2);
        }
        let mut counts = vec![1; LIVE_BUCKETS];
        live.add_to(&mut counts);
        let added: Vec<u64> = counts.iter().map(|c| c - 1).collect();
        assert_eq!(
            Histogram::from_counts(added),
            Histogram::from_counts(plain.counts().chain(std::iter::repeat(0)).take(LIVE_BUCKETS).collect())
        );
        assert_eq!(index((1 << 40) - 1), LIVE_BUCKETS - 1, "its last bucket is 2^40 ns's");
        live.record(u64::MAX);
        let mut counts = vec![0; LIVE_BUCKETS];
        live.add_to(&mut counts);
        assert_eq!(counts[LIVE_BUCKETS - 1], 3, "an hour and more counts in the last bucket");
    }

    /// Merging adds every bucket, whichever histogram is the longer: a longer one into a
    /// shorter (the shorter grows) and a shorter into a longer, checked bucket by bucket.
    #[test]
    fn a_merge_adds_every_bucket_whichever_is_longer() {
        let histogram = |values: &[u64]| {
            let mut h = Histogram::default();
            values.iter().for_each(|&v| h.record(v));
            h
        };
        let short = histogram(&[1, 5, 5, 127, 300]);
        let long = histogram(&[0, 5, 128, 300, 70_000, 70_000, 1 << 30]);
        for (into, from) in [(&short, &long), (&long, &short)] {
            let mut merged = into.clone();
            merged += from;
            let len = into.counts.len().max(from.counts.len());
            assert_eq!(merged.counts.len(), len);
            for i in 0..len {
                let count = |h: &Histogram| h.counts.get(i).copied().unwrap_or(0);
                assert_eq!(count(&merged), count(into) + count(from), "bucket {i}");
            }
            assert_eq!(merged.total(), 12);
            assert_eq!(merged.total(), merged.counts().sum::<u64>());
            assert_eq!(merged.quantile(1.0), long.quantile(1.0), "the longest bucket kept");
        }
    }
}
