//! Distil: a trace summed up as access specifications a user can run, sweep and compare.
//!
//! The method, per time window: transfer sizes and their shares (sizes under 1 % of the I/Os
//! fold into the nearest kept size, by ratio); for each size, its read, trim share and how
//! its offsets are aligned; sequential runs (an I/O that starts where the previous one of the
//! same operation ended continues a run) as `seek_every` (the mean run) or a random share;
//! hot zones as a `zoned` distribution over tenths of the trace's reach when a tenth's share
//! is more than 5 points off 10 %; flushes as a share of every line; and how the I/Os
//! arrived: from a capture's completion times, the I/Os in flight on average (Little's law),
//! at most, and how much of the time any was (busy).
//!
//! Phases: neighbouring windows are one phase unless the job distilled from them would
//! differ, by more than its rounding hides and beyond chance, in what a job can say: the read
//! share, the main size's share or the share of I/Os that continue a run (each by over 10
//! points), or how the I/Os arrived. A closed loop ([`super::Summary::closed_loop`]) is its
//! I/Os in flight, which no rate can express: its windows differ when they kept another most in
//! flight, not when the host let it go faster or slower (a busy CPU); an open loop is its rate
//! (one 1.5 times the other). One steady workload stays one phase. A change falls inside a
//! window, part of each side: a phase of one window whose figures lie between its
//! neighbours' is that change, and joins the nearer.
//!
//! Beyond chance, and how often a steady workload splits by it: each comparison is a
//! two-sided test at z = 5.6 ([`Z`]), whose normal tail beyond it is 2.1 x 10^-8: a share, by
//! the hypergeometric law of one share's events between the two windows ([`differ`]); a rate,
//! by the binomial law of one rate's I/Os between their lengths ([`beyond_chance`]); the most
//! in flight, as the share of I/Os issued above the lower most (none in its window). A trace
//! of W windows compares at most W - 1 pairs (each window with the phase before it), four
//! tests each: by the union bound, a steady workload splits with at most 4 (W - 1) x 2.1 x
//! 10^-8, under one in a million at the default (ten windows and the last I/O's own: 40
//! tests, 8.6 x 10^-7). The normal approximation holds for counts of some tens and more; a
//! window of under 1 % of the I/Os folds into its neighbour, and each share must also differ
//! by 10 points, which a window of hundreds of I/Os does by chance far more rarely still.
//!
//! Limits: interleaved streams hide each other's sequential runs (the trace has no stream
//! ids); a zone is a tenth of the reach, no finer; a phase's rate is its mean; the job keeps
//! one worker, whose I/Os in flight are the most of any phase.

use std::collections::BTreeMap;
use std::path::Path;

use super::{InFlight, Reader, Summary, TraceIo};
use crate::error::{Error, Result, input};
use crate::spec::distribution::{Distribution, Zone};
use crate::spec::{AccessSpec, SpecLine, percent_shares};
use crate::stats::Op;
use crate::units::human_size;

/// Tenths of the reach, for hot zones.
const ZONES: usize = 10;

/// z of each test: its two-sided normal tail, 2.1 x 10^-8, times the 40 tests of a trace in
/// the default windows, is under one false split in a million traces (the module's comment).
const Z: f64 = 5.6;

/// Whether `k` of `n` is beyond chance for a share `p` (normal approximation of the binomial,
/// at [`Z`]).
fn beyond_chance(k: u64, n: u64, p: f64) -> bool {
    let (n_f, k_f) = (n as f64, k as f64);
    let sd = (n_f * p * (1.0 - p)).sqrt();
    if sd == 0.0 {
        return (k_f - n_f * p).abs() > 0.5;
    }
    (k_f - n_f * p).abs() > Z * sd
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
    (a as f64 - k as f64 * p).abs() > Z * var.sqrt()
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
    /// I/Os issued with `k` others in flight, by `k` (captures only).
    depth: Vec<u64>,
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

    /// I/Os that continue a sequential run.
    fn continued(&self) -> u64 {
        self.sizes.values().map(|s| s.continued).sum()
    }

    /// The most I/Os it kept in flight (captures only; [`super::most_in_flight`]).
    fn most_in_flight(&self) -> Option<u64> {
        super::most_in_flight(&self.depth)
    }

    /// Whether `o` is the same job: a boundary needs a difference the job would show (10
    /// points of read share, of the main size's share or of I/Os continuing a run; another
    /// most in flight of a closed loop, a rate 1.5 times another of an open one) and beyond
    /// chance (the module's comment), so that one steady workload stays one phase.
    fn alike(&self, o: &Window, closed_loop: bool) -> bool {
        let (n, m) = (self.data_ios(), o.data_ios());
        let shares_differ = |a: u64, b: u64| {
            (a as f64 / n.max(1) as f64 - b as f64 / m.max(1) as f64).abs() > 0.10 && differ(a, n, b, m)
        };
        let reads = shares_differ(self.reads(), o.reads());
        let size = self.main_size();
        let of = |w: &Window| w.sizes.get(&size).map_or(0, |s| s.ios);
        let sizes = size != o.main_size() && shares_differ(of(self), of(o));
        let runs = shares_differ(self.continued(), o.continued());
        let arrivals = if closed_loop { self.depth_differs(o) } else { self.rate_differs(o) };
        !(reads || sizes || runs || arrivals)
    }

    /// Whether `o` arrived at another rate, 1.5 times this one's or more, beyond chance: under
    /// one rate, the two windows' I/Os fall into them in proportion to their lengths.
    fn rate_differs(&self, o: &Window) -> bool {
        let (Some(x), Some(y)) = (self.iops(), o.iops()) else { return false };
        let (t, u) = (self.secs(), o.secs());
        x.max(y) > 1.5 * x.min(y) && beyond_chance(self.ios(), self.ios() + o.ios(), t / (t + u))
    }

    /// Whether `o` kept another most in flight, beyond chance: the window with the lower most,
    /// `q`, issued (next to) no I/O that took it above `q`; under one closed loop its share of
    /// such I/Os would be the other's. A rate is no part of it: a closed loop goes as fast as
    /// its completions, and the CPU it is given, let it.
    fn depth_differs(&self, o: &Window) -> bool {
        let (Some(a), Some(b)) = (self.most_in_flight(), o.most_in_flight()) else { return false };
        let q = a.min(b) as usize;
        let above = |w: &Window| w.depth.iter().skip(q).sum::<u64>();
        let timed = |w: &Window| w.depth.iter().sum::<u64>();
        a != b && differ(above(self), timed(self), above(o), timed(o))
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
        self.timed |= o.timed;
        if self.depth.len() < o.depth.len() {
            self.depth.resize(o.depth.len(), 0);
        }
        for (d, n) in self.depth.iter_mut().zip(o.depth) {
            *d += n;
        }
    }
}

/// A phase of the trace, summed up.
#[derive(Debug, Clone)]
pub(crate) struct Phase {
    /// When it began and ended, from the trace's first I/O (ns).
    pub start_ns: u64,
    pub end_ns: u64,
    /// Its I/Os.
    pub ios: u64,
    /// I/Os per second over it (None: its I/Os carry no times, or one).
    pub iops: Option<f64>,
    /// Reads among its reads and writes (%).
    pub read_pct: f64,
    /// A capture's I/Os in flight on average (Little's law) and at most, and the share of
    /// the time any was (%).
    pub in_flight: Option<f64>,
    pub most_in_flight: Option<u64>,
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
    /// Whether its I/Os were issued in a closed loop (None: a trace without completion times).
    pub closed_loop: Option<bool>,
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
    let windows = read_windows(path, window_ns, summary.end.div_ceil(ZONES as u64).max(1))?;
    let closed_loop = summary.closed_loop();
    let merged = phases_of(windows, closed_loop == Some(true));
    let count = merged.len();
    let mut phases = merged
        .into_iter()
        .enumerate()
        .map(|(k, w)| {
            let label = if count == 1 { name.to_string() } else { format!("{name}-phase{}", k + 1) };
            phase(&w, label, summary.first_ns)
        })
        .collect::<Result<Vec<_>>>()
        .map_err(|e| e.context(path.display()))?;
    describe(&mut phases);
    Ok(Distilled { summary, closed_loop, phases })
}

/// The trace in windows of `window_ns` from its first I/O, each ending where the next begins
/// (the last at its last completion); hot zones of `zone_bytes`.
fn read_windows(path: &Path, window_ns: u64, zone_bytes: u64) -> Result<Vec<Window>> {
    let mut reader = Reader::open(path)?;
    let mut windows: Vec<Window> = Vec::new();
    let mut w = Window::default();
    // Where the current window's span ends.
    let mut boundary = 0;
    let mut last_end = [u64::MAX; 4];
    // The busy interval being built: [start, end).
    let mut cover: Option<(u64, u64)> = None;
    let mut in_flight = InFlight::default();
    while let Some(io) = reader.next_io()? {
        let TraceIo { at_ns, op, offset, len, latency_ns, fua } = io;
        if w.ios() == 0 {
            w.start_ns = at_ns;
            boundary = at_ns + window_ns;
        } else if at_ns >= boundary {
            w.end_ns = w.end_ns.max(at_ns);
            windows.push(std::mem::replace(&mut w, Window { start_ns: at_ns, ..Window::default() }));
            boundary += (at_ns - boundary) / window_ns * window_ns + window_ns;
        }
        w.end_ns = w.end_ns.max(at_ns);
        if let Some(l) = latency_ns {
            w.timed = true;
            w.latency_ns += l;
            super::count_depth(&mut w.depth, in_flight.issue(at_ns, l));
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
    Ok(windows)
}

/// Windows merged into phases: alike neighbours are one ([`Window::alike`]); so is a window
/// with under 1 % of the I/Os (a stray I/O, the tail of a run) and the phase before it, or
/// after it if it is the first; and the window in which the workload changed joins the
/// phase it is nearer ([`in_transition`]).
fn phases_of(windows: Vec<Window>, closed_loop: bool) -> Vec<Window> {
    let total = windows.iter().map(Window::ios).sum::<u64>();
    let minor = |w: &Window| w.ios() * 100 < total;
    // Each phase, and how many windows it merged.
    let mut merged: Vec<(Window, usize)> = Vec::new();
    for w in windows {
        let first = merged.len() == 1;
        match merged.last_mut() {
            Some((m, n)) if minor(m) && first => {
                let stray = std::mem::replace(m, w);
                m.absorb_before(stray);
                *n += 1;
            }
            Some((m, n)) if m.alike(&w, closed_loop) || minor(&w) => {
                m.absorb(w);
                *n += 1;
            }
            _ => merged.push((w, 1)),
        }
    }
    let mut phases: Vec<Window> = Vec::new();
    let mut rest = merged.into_iter().peekable();
    while let Some((w, n)) = rest.next() {
        let next = rest.peek_mut().map(|(c, _)| c);
        match (phases.last_mut(), next) {
            (Some(a), Some(c)) if n == 1 => match in_transition(a, &w, c, closed_loop) {
                Some(Nearer::Before) => a.absorb(w),
                Some(Nearer::After) => {
                    let after = std::mem::replace(c, w);
                    c.absorb(after);
                }
                None => phases.push(w),
            },
            _ => phases.push(w),
        }
    }
    phases
}

/// Which of the phases around a window it is nearer.
enum Nearer {
    Before,
    After,
}

/// Whether `w`, a phase of one window between phases `a` and `c`, is the window in which the
/// workload changed from `a` to `c`: part of each, every share it has (reads, the main size's,
/// I/Os continuing a run) lies between theirs, give or take the 10 points a split needs, and so
/// do its arrivals (its most in flight, or its rate within 1.5 times). It is then no job of its
/// own, and joins the one it is nearer by those shares. None if it is a phase of its own.
fn in_transition(a: &Window, w: &Window, c: &Window, closed_loop: bool) -> Option<Nearer> {
    let size = a.main_size();
    let shares = |x: &Window| {
        let n = x.data_ios().max(1) as f64;
        let of_size = x.sizes.get(&size).map_or(0, |s| s.ios);
        [x.reads(), of_size, x.continued()].map(|k| k as f64 / n)
    };
    let (sa, sw, sc) = (shares(a), shares(w), shares(c));
    let between = |x: f64, lo: f64, hi: f64, slack: f64| x >= lo.min(hi) - slack && x <= lo.max(hi) + slack;
    let mixed = (0..3).all(|k| between(sw[k], sa[k], sc[k], 0.10));
    let arrivals = match closed_loop {
        true => match (a.most_in_flight(), w.most_in_flight(), c.most_in_flight()) {
            (Some(x), Some(y), Some(z)) => between(y as f64, x as f64, z as f64, 0.0),
            _ => true,
        },
        false => match (a.iops(), w.iops(), c.iops()) {
            (Some(x), Some(y), Some(z)) => y >= x.min(z) / 1.5 && y <= x.max(z) * 1.5,
            _ => true,
        },
    };
    let distance = |s: [f64; 3]| (0..3).map(|k| (s[k] - sw[k]).abs()).sum::<f64>();
    (mixed && arrivals).then(|| if distance(sa) <= distance(sc) { Nearer::Before } else { Nearer::After })
}

/// A phase's specification and figures; its times from `origin_ns`, the trace's first I/O
/// (its description is set once every phase's times are known: [`describe`]).
fn phase(w: &Window, name: String, origin_ns: u64) -> Result<Phase> {
    let mut lost = Vec::new();
    let kept = kept_sizes(w, &mut lost);
    let line_shares = percent_shares(&kept.iter().map(|(_, s)| s.ios).collect::<Vec<_>>());
    let flush_pct = (w.flushes * 100).div_ceil(w.ios().max(1)) as u32;
    let zoned = zones(&w.zones);
    let lines = kept
        .iter()
        .zip(line_shares)
        .map(|((len, s), share)| spec_line(*len, s, share, flush_pct, zoned.as_ref(), &mut lost))
        .collect::<Result<Vec<_>>>()?;
    let secs = w.secs();
    let spec = AccessSpec { name, lines, ..Default::default() };
    spec.validate()?;
    let timed = w.timed && secs > 0.0;
    Ok(Phase {
        start_ns: w.start_ns.saturating_sub(origin_ns),
        end_ns: w.end_ns.saturating_sub(origin_ns),
        ios: w.ios(),
        iops: w.iops(),
        read_pct: w.read_pct(),
        in_flight: timed.then(|| w.latency_ns as f64 / 1e9 / secs),
        most_in_flight: w.most_in_flight(),
        busy_pct: timed.then(|| (w.busy_ns as f64 / 1e9 / secs * 100.0).min(100.0)),
        spec,
        lost,
    })
}

/// A window's transfer sizes as lines: those of at least 1 % of the I/Os, at most 16, in
/// size order; the rest join the nearest by ratio (said in `lost`).
fn kept_sizes(w: &Window, lost: &mut Vec<String>) -> Vec<(u32, Size)> {
    let data = w.data_ios().max(1);
    let mut kept: Vec<(u32, Size)> =
        w.sizes.iter().filter(|(_, s)| s.ios * 100 >= data).map(|(&l, s)| (l, s.clone())).collect();
    kept.sort_by_key(|(_, s)| std::cmp::Reverse(s.ios));
    kept.truncate(16);
    if kept.is_empty() {
        kept.push((w.main_size(), Size::default()));
    }
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
    kept
}

/// The line of one transfer size: its share, read, trim and flush shares, FUA, runs,
/// alignment and hot zones; what it cannot say goes to `lost`.
fn spec_line(
    len: u32,
    s: &Size,
    share: u32,
    flush_pct: u32,
    zoned: Option<&Distribution>,
    lost: &mut Vec<String>,
) -> Result<SpecLine> {
    if len == 0 || len % 512 != 0 {
        return Err(input(format!("transfer size {len} is not a multiple of 512 bytes")));
    }
    let of = |n: u64| (n as f64 * f64::from(100 - flush_pct) / s.ios.max(1) as f64).round() as u32;
    let mut l = SpecLine::new(len as u64, share, of(s.reads), 100);
    l.trim = of(s.trims).min(100 - l.read);
    l.flush = flush_pct.min(100 - l.read - l.trim);
    if s.trims > 0 && l.trim == 0 {
        lost.push(format!("{} trims of {} too few for a whole % of the line", s.trims, human_size(len as u64)));
    }
    // FUA is a line's, all its writes or none: the most of them decide.
    let writes = s.ios - s.reads - s.trims;
    l.fua = l.write() > 0 && s.fua * 2 > writes;
    let off = if l.fua { writes - s.fua } else { s.fua };
    if off > 0 {
        let how = if l.fua { "without FUA, written with it" } else { "with FUA, written without it" };
        lost.push(format!("{off} writes of {} {how}", human_size(len as u64)));
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
    if align < len as u64 && align >= 512 {
        l.align = Some(align);
    }
    if let Some(z) = zoned {
        l.distribution = z.clone();
    }
    Ok(l)
}

/// Each phase's description, its times with the decimals [`decimals`] gives them all.
fn describe(phases: &mut [Phase]) {
    let places = decimals(phases);
    for p in phases {
        p.spec.description =
            format!("distilled from a trace: {} from its first I/O", seconds(p.start_ns, p.end_ns, places));
    }
}

/// The decimals that show the shortest phase's length to three significant digits, so that
/// no two neighbouring phases' times print alike (1 at least).
pub(crate) fn decimals(phases: &[Phase]) -> usize {
    let shortest = phases.iter().map(|p| p.end_ns.saturating_sub(p.start_ns)).min().unwrap_or(0).max(1);
    (2.0 - (shortest as f64 / 1e9).log10().floor()).clamp(1.0, 9.0) as usize
}

/// A span of a trace in seconds with `places` decimals: `0.012-0.037 s`.
pub(crate) fn seconds(start_ns: u64, end_ns: u64, places: usize) -> String {
    format!("{:.places$}-{:.places$} s", start_ns as f64 / 1e9, end_ns as f64 / 1e9)
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
