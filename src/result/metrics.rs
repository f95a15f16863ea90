//! The figures of any set of I/Os ([`Metrics`]), computed from its raw counters and
//! histograms, as every level of the result document carries them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::PERCENTILES;
use crate::stats::{DirStats, Histogram, IoStats, Op};

/// Errors of one kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorKind {
    /// errno (0: a short transfer).
    pub errno: i32,
    /// What it means.
    pub text: String,
    /// How many I/Os failed so.
    pub count: u64,
}

/// The measurements of any set of I/Os. Units are in the names: `_mbps` is 10^6 bytes/s,
/// `_mibps` 2^20 bytes/s, `_ms` milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)] // the names say it all; docs/result-schema.md has the table
pub struct Metrics {
    pub ios: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub bytes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mbps: f64,
    pub read_mbps: f64,
    pub write_mbps: f64,
    pub mibps: f64,
    pub read_mibps: f64,
    pub write_mibps: f64,
    pub avg_response_ms: Option<f64>,
    pub avg_read_response_ms: Option<f64>,
    pub avg_write_response_ms: Option<f64>,
    pub min_response_ms: Option<f64>,
    pub max_response_ms: Option<f64>,
    pub max_read_response_ms: Option<f64>,
    pub max_write_response_ms: Option<f64>,
    pub percentiles_ms: BTreeMap<String, f64>,
    pub read_percentiles_ms: BTreeMap<String, f64>,
    pub write_percentiles_ms: BTreeMap<String, f64>,
    pub errors: u64,
    pub read_errors: u64,
    pub write_errors: u64,
    /// Trims: counted in `ios` and the response times, not in `bytes` (nothing transferred).
    #[serde(default)]
    pub trim_ios: u64,
    #[serde(default)]
    pub trim_bytes: u64,
    #[serde(default)]
    pub trim_iops: f64,
    #[serde(default)]
    pub trim_mbps: f64,
    #[serde(default)]
    pub trim_mibps: f64,
    #[serde(default)]
    pub avg_trim_response_ms: Option<f64>,
    #[serde(default)]
    pub max_trim_response_ms: Option<f64>,
    #[serde(default)]
    pub trim_percentiles_ms: BTreeMap<String, f64>,
    #[serde(default)]
    pub trim_errors: u64,
    /// Flushes: counted in `ios` and the response times; no bytes.
    #[serde(default)]
    pub flush_ios: u64,
    #[serde(default)]
    pub flush_iops: f64,
    #[serde(default)]
    pub avg_flush_response_ms: Option<f64>,
    #[serde(default)]
    pub max_flush_response_ms: Option<f64>,
    #[serde(default)]
    pub flush_percentiles_ms: BTreeMap<String, f64>,
    #[serde(default)]
    pub flush_errors: u64,
    pub error_kinds: Vec<ErrorKind>,
    /// The raw counters and histograms these figures come from.
    pub raw: IoStats,
}

pub(super) fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn avg(d: &DirStats) -> Option<f64> {
    (d.ios > 0).then(|| ms(d.response_sum_ns as f64 / d.ios as f64))
}

fn max(d: &DirStats) -> Option<f64> {
    (d.ios > 0).then(|| ms(d.response_max_ns as f64))
}

fn percentiles(d: &DirStats) -> BTreeMap<String, f64> {
    percentiles_of(&d.histogram, Some((d.response_min_ns, d.response_max_ns)))
}

/// The [`PERCENTILES`] of `h` in ms; bucket midpoints can lie outside what was seen, so they
/// are clamped to the exact extremes where known.
pub fn percentiles_of(h: &Histogram, extremes: Option<(u64, u64)>) -> BTreeMap<String, f64> {
    PERCENTILES
        .iter()
        .filter_map(|&(k, q)| {
            let v = h.quantile(q)?;
            let v = extremes.map_or(v, |(lo, hi)| v.clamp(lo, hi));
            Some((k.to_string(), ms(v as f64)))
        })
        .collect()
}

/// The text of an errno.
pub fn errno_text(errno: i32) -> String {
    match errno {
        0 => "short transfer".into(),
        // iogauge's own verdict on an I/O that never completed (a device may say it too).
        libc::ETIMEDOUT => "timed out: no answer within io_timeout (ETIMEDOUT)".into(),
        _ => std::io::Error::from_raw_os_error(errno).to_string(),
    }
}

/// Which I/Os some figures count: all, or one operation's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Every operation.
    All,
    /// One operation only.
    Only(Op),
}

/// One direction's figures of a [`Metrics`], for the rows of tables.
#[derive(Debug, Clone, Copy)]
pub struct DirFigures<'a> {
    /// I/Os per second.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    /// 2^20 bytes per second.
    pub mibps: f64,
    /// Mean response time.
    pub avg_response_ms: Option<f64>,
    /// Response-time percentiles.
    pub percentiles_ms: &'a BTreeMap<String, f64>,
    /// Longest response time.
    pub max_response_ms: Option<f64>,
    /// Failed I/Os.
    pub errors: u64,
}

impl Metrics {
    /// The figures of direction `d`.
    pub fn of(&self, d: Dir) -> DirFigures<'_> {
        let m = self;
        match d {
            Dir::All => DirFigures {
                iops: m.iops,
                mbps: m.mbps,
                mibps: m.mibps,
                avg_response_ms: m.avg_response_ms,
                percentiles_ms: &m.percentiles_ms,
                max_response_ms: m.max_response_ms,
                errors: m.errors,
            },
            Dir::Only(Op::Read) => DirFigures {
                iops: m.read_iops,
                mbps: m.read_mbps,
                mibps: m.read_mibps,
                avg_response_ms: m.avg_read_response_ms,
                percentiles_ms: &m.read_percentiles_ms,
                max_response_ms: m.max_read_response_ms,
                errors: m.read_errors,
            },
            Dir::Only(Op::Write) => DirFigures {
                iops: m.write_iops,
                mbps: m.write_mbps,
                mibps: m.write_mibps,
                avg_response_ms: m.avg_write_response_ms,
                percentiles_ms: &m.write_percentiles_ms,
                max_response_ms: m.max_write_response_ms,
                errors: m.write_errors,
            },
            Dir::Only(Op::Trim) => DirFigures {
                iops: m.trim_iops,
                mbps: m.trim_mbps,
                mibps: m.trim_mibps,
                avg_response_ms: m.avg_trim_response_ms,
                percentiles_ms: &m.trim_percentiles_ms,
                max_response_ms: m.max_trim_response_ms,
                errors: m.trim_errors,
            },
            Dir::Only(Op::Flush) => DirFigures {
                iops: m.flush_iops,
                mbps: 0.0,
                mibps: 0.0,
                avg_response_ms: m.avg_flush_response_ms,
                percentiles_ms: &m.flush_percentiles_ms,
                max_response_ms: m.max_flush_response_ms,
                errors: m.flush_errors,
            },
        }
    }

    /// The operations a table shows apart under its totals: every one it holds, when there
    /// are several or any is a trim or flush (their MB/s are not the totals').
    pub fn ops(&self) -> Vec<Op> {
        let ops: Vec<Op> = Op::ALL.into_iter().filter(|&op| self.raw.of(op).ios > 0).collect();
        let plain = ops.len() == 1 && !matches!(ops[0], Op::Trim | Op::Flush);
        if plain { Vec::new() } else { ops }
    }

    /// Figures for `raw` over `secs` seconds.
    pub fn new(raw: &IoStats, secs: f64) -> Metrics {
        let all = raw.all();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let (r, w, t, f) = (&raw.read, &raw.write, &raw.trim, &raw.flush);
        // Bytes transferred: a trim's bytes are given back, not moved.
        let bytes = r.bytes + w.bytes;
        Metrics {
            ios: all.ios,
            read_ios: r.ios,
            write_ios: w.ios,
            bytes,
            read_bytes: r.bytes,
            write_bytes: w.bytes,
            iops: per_s(all.ios),
            read_iops: per_s(r.ios),
            write_iops: per_s(w.ios),
            mbps: per_s(bytes) / 1e6,
            read_mbps: per_s(r.bytes) / 1e6,
            write_mbps: per_s(w.bytes) / 1e6,
            mibps: per_s(bytes) / 1048576.0,
            read_mibps: per_s(r.bytes) / 1048576.0,
            write_mibps: per_s(w.bytes) / 1048576.0,
            avg_response_ms: avg(&all),
            avg_read_response_ms: avg(r),
            avg_write_response_ms: avg(w),
            min_response_ms: (all.ios > 0).then(|| ms(all.response_min_ns as f64)),
            max_response_ms: max(&all),
            max_read_response_ms: max(r),
            max_write_response_ms: max(w),
            percentiles_ms: percentiles(&all),
            read_percentiles_ms: percentiles(r),
            write_percentiles_ms: percentiles(w),
            errors: all.errors,
            read_errors: r.errors,
            write_errors: w.errors,
            trim_ios: t.ios,
            trim_bytes: t.bytes,
            trim_iops: per_s(t.ios),
            trim_mbps: per_s(t.bytes) / 1e6,
            trim_mibps: per_s(t.bytes) / 1048576.0,
            avg_trim_response_ms: avg(t),
            max_trim_response_ms: max(t),
            trim_percentiles_ms: percentiles(t),
            trim_errors: t.errors,
            flush_ios: f.ios,
            flush_iops: per_s(f.ios),
            avg_flush_response_ms: avg(f),
            max_flush_response_ms: max(f),
            flush_percentiles_ms: percentiles(f),
            flush_errors: f.errors,
            error_kinds: raw
                .errnos
                .iter()
                .map(|&(errno, count)| ErrorKind { errno, text: errno_text(errno), count })
                .collect(),
            raw: raw.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads of 150, 200 and 600 µs (4 KiB), a write of 1 ms (1 MiB), a trim of 2 ms (1 MiB
    /// given back), a flush of 100 µs; a failed read, two short writes; over 2 s.
    fn known() -> IoStats {
        let mut raw = IoStats::default();
        [150_000, 200_000, 600_000].into_iter().for_each(|ns| raw.read.record(4096, ns));
        raw.write.record(1 << 20, 1_000_000);
        raw.trim.record(1 << 20, 2_000_000);
        raw.flush.record(0, 100_000);
        raw.record_error(Op::Read, libc::EIO);
        raw.record_error(Op::Write, 0);
        raw.record_error(Op::Write, 0);
        raw
    }

    /// Every count, rate and response time of a known set of I/Os, worked out by hand.
    #[test]
    fn every_figure_of_a_known_set() {
        let m = Metrics::new(&known(), 2.0);
        let (r, w, t) = (12288.0, 1048576.0, 1048576.0);
        assert_eq!((m.ios, m.read_ios, m.write_ios, m.trim_ios, m.flush_ios), (6, 3, 1, 1, 1));
        assert_eq!((m.bytes, m.read_bytes, m.write_bytes, m.trim_bytes), (12288 + 1048576, 12288, 1048576, 1048576));
        assert_eq!((m.iops, m.read_iops, m.write_iops, m.trim_iops, m.flush_iops), (3.0, 1.5, 0.5, 0.5, 0.5));
        assert_eq!((m.mbps, m.read_mbps, m.write_mbps, m.trim_mbps), ((r + w) / 2e6, r / 2e6, w / 2e6, t / 2e6));
        let mib = 2.0 * 1048576.0;
        assert_eq!((m.mibps, m.read_mibps, m.write_mibps, m.trim_mibps), ((r + w) / mib, r / mib, w / mib, t / mib));
        assert_eq!(m.avg_response_ms, Some(4_050_000.0 / 6.0 / 1e6));
        let avgs = (m.avg_read_response_ms, m.avg_write_response_ms, m.avg_trim_response_ms, m.avg_flush_response_ms);
        assert_eq!(avgs, (Some(950_000.0 / 3.0 / 1e6), Some(1.0), Some(2.0), Some(0.1)));
        assert_eq!((m.min_response_ms, m.max_response_ms), (Some(0.1), Some(2.0)));
        let maxima = (m.max_read_response_ms, m.max_write_response_ms, m.max_trim_response_ms, m.max_flush_response_ms);
        assert_eq!(maxima, (Some(0.6), Some(1.0), Some(2.0), Some(0.1)));
        assert_eq!((m.errors, m.read_errors, m.write_errors, m.trim_errors, m.flush_errors), (3, 1, 2, 0, 0));
        let kinds: Vec<(i32, &str, u64)> = m.error_kinds.iter().map(|k| (k.errno, k.text.as_str(), k.count)).collect();
        assert_eq!(kinds, [(0, "short transfer", 2), (libc::EIO, "Input/output error (os error 5)", 1)]);
        assert_eq!(m.raw, known());
        // Nothing over no time: no rate, no division by zero.
        let none = Metrics::new(&IoStats::default(), 0.0);
        assert_eq!((none.iops, none.mbps, none.avg_response_ms, none.max_response_ms), (0.0, 0.0, None, None));
        assert!(none.percentiles_ms.is_empty());
    }

    /// Percentiles are the histogram's, clamped to the direction's own fastest and slowest: a
    /// bucket's midpoint lies above the write's one response (1 ms) and below the flush's
    /// (100 µs), each then its sample exactly; the slowest read's above it.
    #[test]
    fn percentiles_are_clamped_to_each_directions_extremes() {
        let m = Metrics::new(&known(), 2.0);
        let keys: Vec<&str> = PERCENTILES.iter().map(|p| p.0).collect();
        for (p, v) in [(&m.write_percentiles_ms, 1.0), (&m.flush_percentiles_ms, 0.1), (&m.trim_percentiles_ms, 2.0)] {
            assert_eq!(p.keys().map(String::as_str).collect::<Vec<_>>(), keys);
            assert!(p.values().all(|&x| x == v), "{p:?}: all {v}");
        }
        assert_eq!(m.read_percentiles_ms["p99.999"], 0.6, "the slowest read, not its bucket's midpoint");
        assert!((m.read_percentiles_ms["p50"] - 0.2).abs() <= 0.2 / 128.0, "{:?}", m.read_percentiles_ms);
        assert_eq!(m.percentiles_ms["p99.999"], 2.0);
        assert!(Metrics::new(&IoStats::default(), 1.0).read_percentiles_ms.is_empty());
    }

    /// A table's rows under the totals: every operation there is, unless the one is reads or
    /// writes alone; each row's figures are its own operation's.
    #[test]
    fn the_operations_and_their_figures() {
        let m = Metrics::new(&known(), 2.0);
        assert_eq!(m.ops(), Op::ALL);
        let mut reads = IoStats::default();
        reads.read.record(4096, 1000);
        assert_eq!(Metrics::new(&reads, 1.0).ops(), []);
        let mut trims = IoStats::default();
        trims.trim.record(4096, 1000);
        assert_eq!(Metrics::new(&trims, 1.0).ops(), [Op::Trim]);
        for (d, iops, errors) in [(Dir::All, 3.0, 3), (Dir::Only(Op::Read), 1.5, 1), (Dir::Only(Op::Write), 0.5, 2)] {
            let f = m.of(d);
            assert_eq!((f.iops, f.errors), (iops, errors));
        }
        let w = m.of(Dir::Only(Op::Write));
        assert_eq!(
            (w.mbps, w.mibps, w.avg_response_ms, w.max_response_ms),
            (m.write_mbps, m.write_mibps, Some(1.0), Some(1.0))
        );
        let t = m.of(Dir::Only(Op::Trim));
        assert_eq!(
            (t.iops, t.mbps, t.max_response_ms, t.percentiles_ms),
            (0.5, m.trim_mbps, Some(2.0), &m.trim_percentiles_ms)
        );
        let f = m.of(Dir::Only(Op::Flush));
        assert_eq!(
            (f.iops, f.mbps, f.avg_response_ms, f.percentiles_ms),
            (0.5, 0.0, Some(0.1), &m.flush_percentiles_ms)
        );
        assert!(errno_text(libc::ETIMEDOUT).contains("io_timeout"));
    }
}
