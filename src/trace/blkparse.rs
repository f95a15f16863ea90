//! blkparse's text: what `blkparse -i DEV` prints by default, one event a line,
//!
//! ```text
//!   8,0    1       12     0.000412934  1201  D   W 2048 + 8 [fio]
//! ```
//!
//! device, CPU, sequence, seconds since the trace began, process id, action, RWBS, then the
//! sectors (`SECTOR + COUNT`), a completion's error (`[ERR]`) or a remap's origin
//! (`<- (MAJ,MIN) SECTOR`). Read as the same events as blktrace's binary files
//! (`super::blktrace`), so an I/O is the same whichever form the trace came in. Lines of
//! another shape (blkparse's per-CPU summary at the end, notes) carry no event.

use std::path::Path;

use super::Lines;
use super::blktrace::{
    Event, Events, TA_COMPLETE, TA_ISSUE, TA_QUEUE, TA_REMAP, TA_REQUEUE, TC_DISCARD, TC_FLUSH, TC_FUA, TC_PC, TC_WRITE,
};
use crate::error::{Error, Result};

/// Whether `line` is an event line of blkparse's default format.
pub(crate) fn looks_like(line: &str) -> bool {
    let f: Vec<&str> = line.split_whitespace().collect();
    f.len() >= 7 && device(f[0]).is_some() && f[1].parse::<u32>().is_ok() && nanos(f[3]).is_some()
}

/// `MAJ,MIN` as the kernel's `major << 20 | minor`.
fn device(text: &str) -> Option<u32> {
    let (major, minor) = text.trim_matches(|c| c == '(' || c == ')').split_once(',')?;
    Some(major.parse::<u32>().ok()? << 20 | minor.parse::<u32>().ok()?)
}

/// blkparse's `SECONDS.NANOSECONDS` as ns.
fn nanos(text: &str) -> Option<u64> {
    let (s, ns) = text.split_once('.')?;
    let frac: String = ns.chars().chain(std::iter::repeat('0')).take(9).collect();
    s.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(frac.parse().ok()?)
}

/// The category bits of an RWBS: `F` first is a preflush, then `D` discard, `W` write, `R`
/// read or `N` none; an `F` after them is FUA.
fn category(rwbs: &str) -> u32 {
    let (flush, rest) = match rwbs.strip_prefix('F') {
        Some(rest) => (TC_FLUSH, rest),
        None => (0, rwbs),
    };
    let op = match rest.chars().next() {
        Some('D') => TC_DISCARD,
        Some('W') => TC_WRITE,
        _ => 0,
    };
    let fua = if rest.len() > 1 && rest[1..].contains('F') { TC_FUA } else { 0 };
    flush | op | fua
}

/// A blkparse text file read event by event.
pub(crate) struct Text {
    lines: Lines,
}

impl Text {
    pub(crate) fn open(path: &Path) -> Result<Text> {
        Ok(Text { lines: Lines::open(path)? })
    }

    fn bad(&self, what: &str) -> Error {
        self.lines.bad(what)
    }

    /// The event of the line read, None for a line that holds none.
    fn event(&self) -> Result<Option<Event>> {
        let line = &self.lines.line;
        let f: Vec<&str> = line.split_whitespace().collect();
        if !looks_like(line) {
            return Ok(None);
        }
        let action = match f[5] {
            "Q" => TA_QUEUE,
            "D" => TA_ISSUE,
            "C" => TA_COMPLETE,
            "R" => TA_REQUEUE,
            "A" => TA_REMAP,
            // Notes (`m`) and the steps an I/O goes through between queue and issue.
            _ => return Ok(None),
        };
        let time = nanos(f[3]).expect("looks_like checked it");
        let dev = device(f[0]).expect("looks_like checked it");
        let mut e = Event {
            time,
            sector: 0,
            bytes: 0,
            action: action | category(f[6]) << 16,
            device: dev,
            error: 0,
            remap: None,
        };
        // `SECTOR + COUNT`; a request of no sectors (a flush) has none.
        let rest = &f[7..];
        if let [sector, "+", count, ..] = rest {
            e.sector = sector.parse().map_err(|_| self.bad("the sector is not a number"))?;
            let count: u64 = count.parse().map_err(|_| self.bad("the sector count is not a number"))?;
            e.bytes = u32::try_from(count * 512).map_err(|_| self.bad("an I/O of 4 GiB or more"))?;
        } else if f[6] == "N" {
            // A passthrough command (its payload in parentheses): no I/O of a workload.
            e.action |= TC_PC << 16;
        }
        match action {
            TA_COMPLETE => {
                if let Some(err) = rest.iter().find_map(|t| t.strip_prefix('[')?.strip_suffix(']')?.parse::<i32>().ok())
                {
                    e.error = err.unsigned_abs() as u16;
                }
            }
            TA_REMAP => {
                if let Some(at) = rest.iter().position(|t| *t == "<-") {
                    let from = rest.get(at + 1).and_then(|d| device(d));
                    let sector = rest.get(at + 2).and_then(|s| s.parse().ok());
                    e.remap = from.zip(sector);
                }
            }
            _ => {}
        }
        Ok(Some(e))
    }
}

impl Events for Text {
    fn next_event(&mut self) -> Result<Option<Event>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            if let Some(e) = self.event()? {
                return Ok(Some(e));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: &str) -> Option<Event> {
        let mut t = Text::open(Path::new("/dev/null")).unwrap();
        t.lines.line = line.into();
        t.event().unwrap()
    }

    #[test]
    fn lines_read_as_blktraces_events() {
        let e = event("  8,16   1       12     1.000412934  1201  D  WFS 2048 + 8 [fio]").unwrap();
        assert_eq!((e.device, e.time, e.sector, e.bytes), (8 << 20 | 16, 1_000_412_934, 2048, 4096));
        assert_eq!((e.action & 0xff, e.action >> 16), (TA_ISSUE, TC_WRITE | TC_FUA));
        let e = event("  8,0    0       30     0.5  0  C  DS 4096 + 2048 [-5]").unwrap();
        assert_eq!((e.action & 0xff, e.action >> 16, e.bytes, e.error), (TA_COMPLETE, TC_DISCARD, 1 << 20, 5));
        let e = event("  8,0    0        3     0.000001  77  D  FN [kworker/0:1H]").unwrap();
        assert_eq!((e.action >> 16, e.bytes), (TC_FLUSH, 0));
        let e = event("  8,1    0        1     0.000000000  77  A   R 4196352 + 8 <- (8,1) 2048").unwrap();
        assert_eq!((e.action & 0xff, e.remap), (TA_REMAP, Some((8 << 20 | 1, 2048))));
        // Steps between queue and issue, notes, and blkparse's closing summary carry none.
        for line in ["  8,0  0  2  0.1  77  G   R 2048 + 8 [fio]", "CPU0 (8,0):", " Reads Queued: 1, 4KiB", ""] {
            assert!(event(line).is_none(), "{line}");
        }
    }
}
