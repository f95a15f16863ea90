//! Replay: a trace's I/Os issued again, each at its own time (open loop: an I/O is due at its
//! time whether or not earlier ones completed), or as fast as the worker's outstanding I/Os
//! allow. The trace is read as the replay goes, one line ahead, so its length costs no memory.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Reader, Summary, TraceIo};
use crate::error::{Error, Result, Unreadable, input};
use crate::spec::{AccessSpec, SpecLine, percent_shares};
use crate::stats::{Histogram, Op};

/// How fast a trace is replayed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// At its own times divided by this (2: twice as fast).
    Times(f64),
    /// As fast as possible, with the worker's outstanding I/Os.
    Max,
}

impl Speed {
    /// `2`, `0.5`, `max`.
    pub fn parse(s: &str) -> std::result::Result<Speed, Unreadable> {
        if s == "max" {
            return Ok(Speed::Max);
        }
        match s.trim_end_matches('x').parse::<f64>() {
            Ok(v) if v > 0.0 && v.is_finite() => Ok(Speed::Times(v)),
            _ => Err(Unreadable(format!(
                "speed {s:?}: give a positive factor (1: the trace's own times, 2: twice as fast) or max"
            ))),
        }
    }
}

impl std::fmt::Display for Speed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Speed::Times(v) => write!(f, "{v}"),
            Speed::Max => f.write_str("max"),
        }
    }
}

impl Serialize for Speed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Speed::Times(v) => s.serialize_f64(*v),
            Speed::Max => s.serialize_str("max"),
        }
    }
}

impl<'de> Deserialize<'de> for Speed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Speed, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Text(String),
        }
        match Written::deserialize(d)? {
            Written::Number(v) => Speed::parse(&v.to_string()),
            Written::Text(t) => Speed::parse(&t),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// Where a trace's offsets go on a target smaller than the trace reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fit {
    /// Where they are (the plan refuses a trace that reaches past the working set).
    #[default]
    None,
    /// Modulo the working set.
    Wrap,
    /// Scaled by the working set over the trace's reach.
    Scale,
}

/// A worker's replay, as a job writes it (`[[worker]] replay = { trace = "...", speed = 1 }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// The trace: an iogauge capture or a fio iolog (v2, v3).
    pub trace: PathBuf,
    /// How fast; default 1, the trace's own times.
    #[serde(default = "own_times")]
    pub speed: Speed,
    /// Offsets past the working set; default none (refused).
    #[serde(default, skip_serializing_if = "is_none")]
    pub fit: Fit,
}

fn own_times() -> Speed {
    Speed::Times(1.0)
}
fn is_none(f: &Fit) -> bool {
    *f == Fit::None
}

/// The access specification a trace's replay plans as: one line per operation the trace
/// has, at its largest transfer of that operation, aligned as every offset of the trace is. It is what the
/// plan checks (writes, trims, alignment, sizes) and the buffers are sized by, not what is
/// issued.
pub(crate) fn spec_of(name: &str, s: &Summary) -> Result<AccessSpec> {
    let total = s.total();
    if total == 0 {
        return Err(input("the trace has no I/O"));
    }
    // Each operation's line at its own largest size: a trim of GiB holds no buffer, and
    // must not make the reads' and writes' buffers that large.
    let size = |len: u32| (len as u64).div_ceil(512).max(1) * 512;
    let present: Vec<Op> = Op::ALL.into_iter().filter(|o| s.ios[*o as usize] > 0).collect();
    let shares = percent_shares(&present.iter().map(|o| s.ios[*o as usize]).collect::<Vec<_>>());
    let lines: Vec<SpecLine> = present
        .iter()
        .zip(shares)
        .map(|(&op, share)| {
            let len = if op == Op::Trim { s.max_trim } else { s.max_len };
            let mut l = SpecLine::new(size(len), share, u32::from(op == Op::Read) * 100, 100);
            l.trim = u32::from(op == Op::Trim) * 100;
            l.flush = u32::from(op == Op::Flush) * 100;
            // The plan checks that a target can do what the trace asks (FUA over NBD).
            l.fua = op == Op::Write && s.fua > 0;
            l.align = Some(s.align.max(512));
            l
        })
        .collect();
    let spec =
        AccessSpec { name: name.into(), description: format!("the I/Os of trace {name}"), lines, ..Default::default() };
    spec.validate()?;
    Ok(spec)
}

/// One worker's replay under way.
pub(crate) struct Replayer {
    reader: Reader,
    next: Option<TraceIo>,
    speed: Speed,
    fit: Fit,
    /// The working set: its start and size on the target.
    start: u64,
    size: u64,
    /// The trace's reach (its furthest byte), for `Fit::Scale`.
    reach: u64,
    /// Offsets mapped by a fit stay multiples of this.
    align: u64,
    /// The first I/O's time in the trace: due at the worker's epoch, where the run starts for
    /// every worker, so that a worker that starts late (a loaded host) shows it as lateness
    /// and the run's time is the trace's plus what the lateness and responses say.
    origin_ns: u64,
    /// Why reading the trace failed, if it did.
    pub(crate) error: Option<Error>,
    /// How late each I/O was issued against its due time (ns).
    pub(crate) lateness: Histogram,
}

/// The next I/O of a replay: where it goes on the target, and when it is due (ns from the
/// worker's epoch; 0 as fast as possible).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Due {
    pub io: TraceIo,
    pub due_ns: u64,
}

impl Replayer {
    /// Opens `r.trace` for a working set of `size` bytes at `start`; `summary` is the
    /// trace's (its reach and alignment).
    pub(crate) fn new(r: &Replay, summary: &Summary, start: u64, size: u64, block: u64) -> Result<Replayer> {
        let mut reader = Reader::open(&r.trace)?;
        let next = reader.next_io()?;
        Ok(Replayer {
            reader,
            origin_ns: next.map_or(0, |io| io.at_ns),
            next,
            speed: r.speed,
            fit: r.fit,
            start,
            size,
            reach: summary.end.max(1),
            align: summary.align.max(block).max(512),
            error: None,
            lateness: Histogram::default(),
        })
    }

    /// Whether I/Os are due at times (rather than as fast as possible).
    pub(crate) fn timed(&self) -> bool {
        matches!(self.speed, Speed::Times(_))
    }

    /// The next I/O and when it is due; None at the end of the trace (or a read error).
    #[inline]
    pub(crate) fn peek(&self) -> Option<Due> {
        let io = self.next?;
        let due_ns = match self.speed {
            Speed::Times(v) => ((io.at_ns.saturating_sub(self.origin_ns)) as f64 / v) as u64,
            Speed::Max => 0,
        };
        Some(Due { io: TraceIo { offset: self.place(io.offset, io.len), ..io }, due_ns })
    }

    /// The I/O [`peek`](Self::peek) gave (`issued`) went out at `now_ns`: counts how late,
    /// moves on to the following one.
    #[inline]
    pub(crate) fn advance(&mut self, issued: &Due, now_ns: u64) {
        if self.timed() {
            self.lateness.record(now_ns.saturating_sub(issued.due_ns));
        }
        match self.reader.next_io() {
            Ok(next) => self.next = next,
            Err(e) => {
                self.next = None;
                self.error = Some(e);
            }
        }
    }

    /// Where an I/O at `offset` of `len` bytes goes in the working set.
    fn place(&self, offset: u64, len: u32) -> u64 {
        let room = self.size.saturating_sub(len as u64);
        let at = match self.fit {
            Fit::None => offset,
            Fit::Wrap => offset % self.size.max(1),
            Fit::Scale => (offset as u128 * self.size as u128 / self.reach as u128) as u64,
        };
        let at = if self.fit == Fit::None { at } else { at.min(room) / self.align * self.align };
        self.start + at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_parse() {
        assert_eq!(Speed::parse("2"), Ok(Speed::Times(2.0)));
        assert_eq!(Speed::parse("0.5x"), Ok(Speed::Times(0.5)));
        assert_eq!(Speed::parse("max"), Ok(Speed::Max));
        assert!(Speed::parse("0").unwrap_err().0.contains("positive factor"));
    }

    #[test]
    fn a_replay_spec_has_the_traces_operations_and_largest_size() {
        let s = Summary { ios: [70, 29, 0, 1], max_len: 65536, align: 4096, end: 1 << 30, ..Summary::default() };
        let spec = spec_of("t", &s).unwrap();
        let shares: Vec<(u32, u32, u32, u64)> = spec.lines.iter().map(|l| (l.share, l.read, l.flush, l.size)).collect();
        assert_eq!(shares, [(70, 100, 0, 65536), (29, 0, 0, 65536), (1, 0, 100, 65536)]);
        assert!(spec.writes());
    }
}
