//! A run's time series at a bounded resolution: however long the run, its `intervals` hold at
//! most [`KEPT`] samples, in memory and in the document. Past that, each two neighbours merge
//! into one of twice the length, and later samples are gathered as many at a time, so the
//! series stays even; merged samples hold exactly what their parts held (I/Os, bytes, the
//! response-time histogram), so the totals and a window's percentiles are those of the
//! samples at the finest resolution. The live outputs (`--live-json`, `--metrics`, the live
//! page) see every interval as it ends, at the resolution asked.

use super::{Interval, percentiles_of};

/// The most samples a series keeps: a 24-hour soak at 1 s intervals is kept as 675 samples of
/// 128 s, with every response time in their histograms.
pub const KEPT: usize = 1024;

/// The samples so far.
#[derive(Debug, Default)]
pub struct Series {
    kept: Vec<Interval>,
    /// The next sample being gathered, and how many intervals it holds.
    pending: Option<(Interval, u32)>,
    /// How many intervals each kept sample holds.
    per: u32,
}

impl Series {
    /// Adds the sample that follows the last one.
    pub fn push(&mut self, iv: Interval) {
        let (sample, n) = match self.pending.take() {
            None => (iv, 1),
            Some((mut sample, n)) => {
                sample.absorb(&iv);
                (sample, n + 1)
            }
        };
        if n < self.per.max(1) {
            self.pending = Some((sample, n));
            return;
        }
        self.kept.push(sample.settled());
        if self.kept.len() == KEPT {
            // Merged by value: each pair's first sample takes in the second.
            let mut samples = std::mem::take(&mut self.kept).into_iter();
            while let Some(mut first) = samples.next() {
                if let Some(second) = samples.next() {
                    first.absorb(&second);
                }
                self.kept.push(first.settled());
            }
            self.per = self.per.max(1) * 2;
        }
    }

    /// Whether no sample was added.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.pending.is_none()
    }

    /// The samples, the last one gathered so far included.
    pub fn into_vec(self) -> Vec<Interval> {
        let mut v = self.kept;
        v.extend(self.pending.map(|(sample, _)| sample.settled()));
        v
    }
}

impl Interval {
    /// Takes in the sample `next`, which follows this one: one sample of both lengths.
    fn absorb(&mut self, next: &Interval) {
        let (a, b) = (self.duration_s, next.duration_s);
        let (ios_a, ios_b) = (self.iops * a, next.iops * b);
        let duration = a + b;
        self.avg_response_ms = match (self.avg_response_ms, next.avg_response_ms) {
            (Some(x), Some(y)) if ios_a + ios_b > 0.0 => Some((x * ios_a + y * ios_b) / (ios_a + ios_b)),
            (x, y) => x.or(y),
        };
        self.iops = (ios_a + ios_b) / duration;
        self.mbps = (self.mbps * a + next.mbps * b) / duration;
        self.cpu_pct = (self.cpu_pct * a + next.cpu_pct * b) / duration;
        self.t_s = next.t_s;
        self.duration_s = duration;
        if let (Some(h), Some(o)) = (&mut self.histogram, &next.histogram) {
            *h += o;
        }
    }

    /// The sample with its percentiles taken from its histogram: once a merged sample is
    /// complete, not at every interval it takes in.
    fn settled(mut self) -> Interval {
        if let Some(h) = &self.histogram {
            self.percentiles_ms = percentiles_of(h, None);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Histogram;

    /// One sample of `dt` s ending at `t`, of `ios` I/Os, each taking `ns`.
    fn sample(t: f64, dt: f64, ios: u64, ns: u64) -> Interval {
        let mut h = Histogram::default();
        (0..ios).for_each(|_| h.record(ns));
        Interval {
            t_s: t,
            duration_s: dt,
            iops: ios as f64 / dt,
            mbps: ios as f64 * 4096.0 / dt / 1e6,
            avg_response_ms: (ios > 0).then(|| ns as f64 / 1e6),
            cpu_pct: 10.0,
            percentiles_ms: percentiles_of(&h, None),
            histogram: Some(h),
        }
    }

    #[test]
    fn a_long_series_keeps_at_most_kept_even_samples_holding_every_io() {
        let mut series = Series::default();
        let n = 3 * KEPT + 5;
        let mut all = Histogram::default();
        for k in 0..n {
            let s = sample((k + 1) as f64 * 0.02, 0.02, (k % 7) as u64, 1000 + k as u64);
            all += s.histogram.as_ref().unwrap();
            series.push(s);
        }
        let v = series.into_vec();
        assert!(v.len() <= KEPT, "{} samples", v.len());
        // Every sample but the last gathers 4 intervals (3 x KEPT: halved twice); the last the rest.
        assert!(v[..v.len() - 1].iter().all(|s| (s.duration_s - 0.08).abs() < 1e-9), "{:?}", &v[..2]);
        assert_eq!(v.len(), n.div_ceil(4));
        assert!((v.last().unwrap().t_s - n as f64 * 0.02).abs() < 1e-9);
        // Nothing is lost: the I/Os, and the histograms, which merge exactly.
        let ios: f64 = v.iter().map(|s| s.iops * s.duration_s).sum();
        assert!((ios - (0..n).map(|k| (k % 7) as f64).sum::<f64>()).abs() < 1e-6);
        let mut merged = Histogram::default();
        v.iter().for_each(|s| merged += s.histogram.as_ref().unwrap());
        assert_eq!(merged, all);
        // A merged sample's percentiles are its histogram's, its mean weighted by I/Os.
        let s = &v[0];
        assert_eq!(s.percentiles_ms, percentiles_of(s.histogram.as_ref().unwrap(), None));
        let (ios, ns): (u64, u64) = (0..4)
            .map(|k| ((k % 7) as u64, (k % 7) as u64 * (1000 + k as u64)))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        assert!((s.avg_response_ms.unwrap() - ns as f64 / ios as f64 / 1e6).abs() < 1e-12);
    }

    #[test]
    fn a_short_series_is_kept_as_it_came() {
        let mut series = Series::default();
        let samples: Vec<Interval> = (1..=10).map(|k| sample(k as f64, 1.0, 5, 100)).collect();
        samples.iter().cloned().for_each(|s| series.push(s));
        let v = series.into_vec();
        assert_eq!(v.len(), 10);
        assert!(v.iter().zip(&samples).all(|(a, b)| a.t_s == b.t_s && a.histogram == b.histogram));
    }
}
