//! Distil: a trace summed up as access specifications a user can run, sweep and compare.
//!
//! The method, per time window: transfer sizes and their shares (sizes under 1 % of the I/Os
//! fold into the nearest kept size, by ratio); for each size, its read, trim share and how
//! its offsets are aligned; sequential runs (an I/O that starts where the previous one of the
//! same operation ended continues a run) as `seek_every` (the mean run) or a random share;
//! hot zones as a `zoned` distribution over tenths of the trace's reach when a tenth's share
//! is more than 5 points off 10 %; flushes as a share of every line; and how the I/Os
//! arrived: from a capture's completion times, the I/Os in flight on average (Little's law)
//! and how much of the time any was (busy). Neighbouring windows are one phase unless they
//! differ both much (read share by over 10 points, the main size's share by over 10 points, a
//! rate over 1.5 times the other) and beyond chance (a binomial test at one false split in a
//! million pairs): one steady workload stays one phase.
//!
//! Limits: interleaved streams hide each other's sequential runs (the trace has no stream
//! ids); a zone is a tenth of the reach, no finer; a phase's rate is its mean.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Reader, Summary, TraceIo};
use crate::error::{Error, Result, input};
use crate::spec::distribution::{Distribution, Zone};
use crate::spec::{AccessSpec, SpecLine, percent_shares};
use crate::stats::Op;
use crate::units::human_size;

/// Tenths of the reach, for hot zones.
const ZONES: usize = 10;

/// z for one false split in a million window pairs (two-sided normal tail of 10^-6).
const Z_MILLION: f64 = 4.89;

/// Whether `k` of `n` is beyond chance for a share `p` (normal approximation of the binomial,
/// at [`Z_MILLION`]).
fn beyond_chance(k: u64, n: u64, p: f64) -> bool {
    let (n_f, k_f) = (n as f64, k as f64);
    let sd = (n_f * p * (1.0 - p)).sqrt();
    if sd == 0.0 {
        return (k_f - n_f * p).abs() > 0.5;
    }
    (k_f - n_f * p).abs() > Z_MILLION * sd
}

/// Whether shares `a` of `n` and `b` of `m` differ beyond chance: given their sum, `a` is
/// binomial over `n + m` with `n / (n + m)` under one share (the two-proportion test).
fn differ(a: u64, n: u64, b: u64, m: u64) -> bool {
    let (k, total) = (a + b, n + m);
    if n == 0 || m == 0 || k == 0 || k == total {
        return false;
    }
    // Given the k events, those in the first window are hypergeometric (mean k p, variance
    // k p (1 - p) (N - k) / (N - 1)), taken as normal.
    let p = n as f64 / total as f64;
    let var = k as f64 * p * (1.0 - p) * (total - k) as f64 / (total as f64 - 1.0).max(1.0);
    (a as f64 - k as f64 * p).abs() > Z_MILLION * var.sqrt()
}

/// One transfer size's I/Os in a window.
#[derive(Debug, Default, Clone)]
struct Size {
    ios: u64,
    reads: u64,
    trims: u64,
    /// Writes with force unit access.
    fua: u64,
    /// I/Os that start where the previous one of their operation ended.
    continued: u64,
    /// Every offset OR-ed: its trailing zeros are the alignment.
    offsets: u64,
}

impl std::ops::AddAssign<&Size> for Size {
    fn add_assign(&mut self, o: &Size) {
        self.ios += o.ios;
        self.reads += o.reads;
        self.trims += o.trims;
        self.fua += o.fua;
        self.continued += o.continued;
        self.offsets |= o.offsets;
    }
}

/// What a window (or a phase: windows merged) counted.
#[derive(Debug, Default, Clone)]
struct Window {
    start_ns: u64,
    end_ns: u64,
    sizes: BTreeMap<u32, Size>,
    flushes: u64,
    zones: [u64; ZONES],
    /// Latencies summed, and the time with an I/O in flight (captures only).
    latency_ns: u64,
    busy_ns: u64,
    timed: bool,
}

impl Window {
    fn data_ios(&self) -> u64 {
        self.sizes.values().map(|s| s.ios).sum()
    }

    fn ios(&self) -> u64 {
        self.data_ios() + self.flushes
    }

    fn read_pct(&self) -> f64 {
        let reads: u64 = self.sizes.values().map(|s| s.reads).sum();
        reads as f64 * 100.0 / self.data_ios().max(1) as f64
    }

    fn main_size(&self) -> u32 {
        self.sizes.iter().max_by_key(|(_, s)| s.ios).map_or(0, |(&len, _)| len)
    }

    fn secs(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// I/Os per second, when the window lasts: None for I/Os all at one time (a trace without
    /// times, or a single I/O).
    fn iops(&self) -> Option<f64> {
        (self.secs() > 0.0).then(|| self.ios() as f64 / self.secs())
    }

    fn reads(&self) -> u64 {
        self.sizes.values().map(|s| s.reads).sum()
    }

    /// Whether `o` is the same workload: a boundary needs a difference both large (10 points
    /// of read share or of the main size's share, or a rate 1.5 times another) and beyond
    /// chance ([`differ`]), so that one steady workload stays one phase.
    fn alike(&self, o: &Window) -> bool {
        let (n, m) = (self.data_ios(), o.data_ios());
        let reads = (self.read_pct() - o.read_pct()).abs() > 10.0 && differ(self.reads(), n, o.reads(), m);
        let size = self.main_size();
        let of = |w: &Window| w.sizes.get(&size).map_or(0, |s| s.ios);
        let (a, b) = (of(self), of(o));
        let sizes = size != o.main_size()
            && (a as f64 / n.max(1) as f64 - b as f64 / m.max(1) as f64).abs() > 0.10
            && differ(a, n, b, m);
        // Under one rate, the two windows' I/Os fall into them in proportion to their lengths.
        let rate = match (self.iops(), o.iops()) {
            (Some(x), Some(y)) => {
                let (t, u) = (self.secs(), o.secs());
                x.max(y) > 1.5 * x.min(y) && beyond_chance(self.ios(), self.ios() + o.ios(), t / (t + u))
            }
            _ => false,
        };
        !(reads || sizes || rate)
    }

    /// Takes in `o`, a stray window before this one: its I/Os, not its time.
    fn absorb_before(&mut self, o: Window) {
        let (start, end) = (self.start_ns, self.end_ns);
        self.absorb(o);
        (self.start_ns, self.end_ns) = (start, end);
    }

    /// Takes in `o`, the window after this one.
    fn absorb(&mut self, o: Window) {
        self.end_ns = self.end_ns.max(o.end_ns);
        for (len, s) in o.sizes {
            *self.sizes.entry(len).or_default() += &s;
        }
        self.flushes += o.flushes;
        for (z, n) in self.zones.iter_mut().zip(o.zones) {
            *z += n;
        }
        self.latency_ns += o.latency_ns;
        self.busy_ns += o.busy_ns;
    }
}

/// A phase of the trace, summed up.
#[derive(Debug, Clone)]
pub(crate) struct Phase {
    /// When it began and ended in the trace (ns).
    pub start_ns: u64,
    pub end_ns: u64,
    /// Its I/Os.
    pub ios: u64,
    /// I/Os per second over it (None: its I/Os carry no times, or one).
    pub iops: Option<f64>,
    /// Reads among its reads and writes (%).
    pub read_pct: f64,
    /// A capture's I/Os in flight on average (Little's law), and the share of the time any
    /// was (%).
    pub in_flight: Option<f64>,
    pub busy_pct: Option<f64>,
    /// The access specification.
    pub spec: AccessSpec,
    /// What of the phase the specification could not express.
    pub lost: Vec<String>,
}

/// A trace distilled.
#[derive(Debug, Clone)]
pub(crate) struct Distilled {
    /// What one pass over the trace learnt.
    pub summary: Summary,
    /// Its phases, in time order.
    pub phases: Vec<Phase>,
}

/// Reads the trace twice (its reach first, for the zones), in windows of `window_ns` (0: a
/// tenth of its length).
pub(crate) fn distil(path: &Path, name: &str, window_ns: u64) -> Result<Distilled> {
    let summary = Summary::of(path)?;
    if summary.ios[Op::Read as usize] + summary.ios[Op::Write as usize] + summary.ios[Op::Trim as usize] == 0 {
        return Err(Error::Input(format!("{}: no reads, writes or trims to distil", path.display())));
    }
    let window_ns = if window_ns > 0 { window_ns } else { (summary.span_ns() / 10).max(1) };
    let zone_bytes = summary.end.div_ceil(ZONES as u64).max(1);
    let mut reader = Reader::open(path)?;
    let mut windows: Vec<Window> = Vec::new();
    let mut w = Window::default();
    // Where the current window's span ends; a window's own times are its first and last I/O's.
    let mut boundary = 0;
    let mut last_end = [u64::MAX; 4];
    // The busy interval being built: [start, end).
    let mut cover: Option<(u64, u64)> = None;
    while let Some(io) = reader.next_io()? {
        let TraceIo { at_ns, op, offset, len, latency_ns, fua } = io;
        if w.ios() == 0 {
            w.start_ns = at_ns;
            boundary = at_ns + window_ns;
        } else if at_ns >= boundary {
            windows.push(std::mem::replace(&mut w, Window { start_ns: at_ns, ..Window::default() }));
            boundary += (at_ns - boundary) / window_ns * window_ns + window_ns;
        }
        w.end_ns = w.end_ns.max(at_ns);
        if let Some(l) = latency_ns {
            w.timed = true;
            w.latency_ns += l;
            cover = match cover {
                Some((s, e)) if at_ns <= e => Some((s, e.max(at_ns + l))),
                Some((s, e)) => {
                    w.busy_ns += e - s;
                    Some((at_ns, at_ns + l))
                }
                None => Some((at_ns, at_ns + l)),
            };
        }
        if op == Op::Flush {
            w.flushes += 1;
            continue;
        }
        let s = w.sizes.entry(len).or_default();
        s.ios += 1;
        s.reads += u64::from(op == Op::Read);
        s.trims += u64::from(op == Op::Trim);
        s.fua += u64::from(fua);
        s.continued += u64::from(last_end[op as usize] == offset);
        s.offsets |= offset;
        last_end[op as usize] = offset + len as u64;
        w.zones[((offset / zone_bytes) as usize).min(ZONES - 1)] += 1;
    }
    if let Some((s, e)) = cover {
        w.busy_ns += e - s;
        w.end_ns = w.end_ns.max(e);
    }
    windows.push(w);
    // Alike neighbours are one phase; so is a window with under 1 % of the I/Os (a stray
    // I/O, the tail of a run) and the phase before it, or after it if it is the first.
    let total = windows.iter().map(Window::ios).sum::<u64>();
    let minor = |w: &Window| w.ios() * 100 < total;
    let mut merged: Vec<Window> = Vec::new();
    for w in windows {
        let first = merged.len() == 1;
        match merged.last_mut() {
            Some(m) if minor(m) && first => {
                let stray = std::mem::replace(m, w);
                m.absorb_before(stray);
            }
            Some(m) if m.alike(&w) || minor(&w) => m.absorb(w),
            _ => merged.push(w),
        }
    }
    let count = merged.len();
    let phases = merged
        .into_iter()
        .enumerate()
        .map(|(k, w)| {
            let label = if count == 1 { name.to_string() } else { format!("{name}-phase{}", k + 1) };
            phase(&w, label)
        })
        .collect::<Result<Vec<_>>>()
        .map_err(|e| e.context(path.display()))?;
    Ok(Distilled { summary, phases })
}

fn phase(w: &Window, name: String) -> Result<Phase> {
    let data = w.data_ios().max(1);
    // Sizes of at least 1 % of the I/Os, at most 16; the rest join the nearest by ratio.
    let mut kept: Vec<(u32, Size)> =
        w.sizes.iter().filter(|(_, s)| s.ios * 100 >= data).map(|(&l, s)| (l, s.clone())).collect();
    kept.sort_by_key(|(_, s)| std::cmp::Reverse(s.ios));
    kept.truncate(16);
    if kept.is_empty() {
        kept.push((w.main_size(), Size::default()));
    }
    let mut lost = Vec::new();
    let folded: u64 = w.sizes.iter().filter(|(l, _)| !kept.iter().any(|(k, _)| k == *l)).map(|(_, s)| s.ios).sum();
    if folded > 0 {
        lost.push(format!("{folded} I/Os of sizes under 1 % each counted as the nearest size kept"));
    }
    for (&len, s) in &w.sizes {
        if kept.iter().any(|(l, _)| *l == len) {
            continue;
        }
        let near = kept
            .iter_mut()
            .min_by(|a, b| {
                let d = |l: u32| (l.max(1) as f64 / len.max(1) as f64).ln().abs();
                d(a.0).total_cmp(&d(b.0))
            })
            .expect("a kept size");
        near.1 += s;
    }
    kept.sort_by_key(|(l, _)| *l);
    let line_shares = percent_shares(&kept.iter().map(|(_, s)| s.ios).collect::<Vec<_>>());
    let flush_pct = (w.flushes * 100).div_ceil(w.ios().max(1)) as u32;
    let zoned = zones(&w.zones);
    let lines = kept
        .iter()
        .zip(line_shares)
        .map(|((len, s), share)| {
            if *len == 0 || len % 512 != 0 {
                return Err(input(format!("transfer size {len} is not a multiple of 512 bytes")));
            }
            let of = |n: u64| (n as f64 * f64::from(100 - flush_pct) / s.ios.max(1) as f64).round() as u32;
            let mut l = SpecLine::new(*len as u64, share, of(s.reads), 100);
            l.trim = of(s.trims).min(100 - l.read);
            l.flush = flush_pct.min(100 - l.read - l.trim);
            if s.trims > 0 && l.trim == 0 {
                lost.push(format!(
                    "{} trims of {} too few for a whole % of the line",
                    s.trims,
                    human_size(*len as u64)
                ));
            }
            // FUA is a line's, all its writes or none: the most of them decide.
            let writes = s.ios - s.reads - s.trims;
            l.fua = l.write() > 0 && s.fua * 2 > writes;
            let off = if l.fua { writes - s.fua } else { s.fua };
            if off > 0 {
                let how = if l.fua { "without FUA, written with it" } else { "with FUA, written without it" };
                lost.push(format!("{off} writes of {} {how}", human_size(*len as u64)));
            }
            // Runs: each starts somewhere new, the rest follow it.
            let runs = (s.ios - s.continued).max(1);
            let mean_run = s.ios as f64 / runs as f64;
            if mean_run >= 1.5 {
                l.seek_every = mean_run.round() as u32;
            } else {
                l.random = 100 - (s.continued * 100 / s.ios.max(1)) as u32;
            }
            let align = 1u64 << s.offsets.trailing_zeros().min(40);
            if align < *len as u64 && align >= 512 {
                l.align = Some(align);
            }
            if let Some(z) = &zoned {
                l.distribution = z.clone();
            }
            Ok(l)
        })
        .collect::<Result<Vec<_>>>()?;
    let secs = w.secs();
    let spec = AccessSpec {
        description: format!("distilled from a trace: {:.1}-{:.1} s", w.start_ns as f64 / 1e9, w.end_ns as f64 / 1e9),
        name,
        lines,
        ..Default::default()
    };
    spec.validate()?;
    let timed = w.timed && secs > 0.0;
    Ok(Phase {
        start_ns: w.start_ns,
        end_ns: w.end_ns,
        ios: w.ios(),
        iops: w.iops(),
        read_pct: w.read_pct(),
        in_flight: timed.then(|| w.latency_ns as f64 / 1e9 / secs),
        busy_pct: timed.then(|| (w.busy_ns as f64 / 1e9 / secs * 100.0).min(100.0)),
        spec,
        lost,
    })
}

/// A `zoned` law over the tenths of the reach when one is more than 5 points off its 10 %.
fn zones(counts: &[u64; ZONES]) -> Option<Distribution> {
    let total: u64 = counts.iter().sum();
    let off = counts.iter().any(|&c| (c as f64 * 100.0 / total.max(1) as f64 - 100.0 / ZONES as f64).abs() > 5.0);
    (total > 0 && off).then(|| {
        let pct = percent_shares(counts);
        Distribution::Zoned(
            pct.into_iter().map(|p| Zone { io_pct: f64::from(p), range_pct: 100.0 / ZONES as f64 }).collect(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_zones_only_when_a_tenth_is_off() {
        assert_eq!(zones(&[10; ZONES]), None);
        let mut hot = [5; ZONES];
        hot[0] = 55;
        let Some(Distribution::Zoned(z)) = zones(&hot) else { panic!("zoned") };
        assert_eq!(z[0].io_pct, 55.0);
        assert_eq!(z.iter().map(|z| z.io_pct).sum::<f64>(), 100.0);
    }
}
