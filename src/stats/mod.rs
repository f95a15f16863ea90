//! Raw counters a worker keeps per target, merged with `+=` into workers, targets and totals.
//!
//! Workers never share these: each owns its own and hands them over when the run ends.

pub mod histogram;

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

pub use histogram::{Histogram, LiveHistogram};

/// What an I/O does: the four operations an access specification mixes, each counted and
/// timed apart. A trim (discard) gives blocks back to the device; a flush (fdatasync or fsync)
/// asks it to make the writes completed before it stable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Op {
    /// Reads data.
    #[default]
    Read = 0,
    /// Writes data.
    Write = 1,
    /// Discards blocks (BLKDISCARD on a device, a punched hole in a file).
    Trim = 2,
    /// Makes completed writes stable (fdatasync or fsync); transfers no data.
    Flush = 3,
}

impl Op {
    /// Every operation, in the order tables list them.
    pub const ALL: [Op; 4] = [Op::Read, Op::Write, Op::Trim, Op::Flush];

    /// A read, or a write if `write`.
    #[inline(always)]
    pub fn data(write: bool) -> Op {
        if write { Op::Write } else { Op::Read }
    }

    /// Its name in documents and tables: `read`, `write`, `trim`, `flush`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Flush => "flush",
        }
    }

    /// What doing it is called in a message: `reading`, `writing`...
    pub fn doing(self) -> &'static str {
        match self {
            Op::Read => "reading",
            Op::Write => "writing",
            Op::Trim => "trimming",
            Op::Flush => "flushing",
        }
    }
}

/// Completed I/Os of one operation (reads, writes, trims or flushes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    /// Successful I/Os.
    pub ios: u64,
    /// Bytes they transferred.
    pub bytes: u64,
    /// Sum of their response times (ns).
    pub response_sum_ns: u64,
    /// Smallest response time (ns); 0 when no I/O.
    pub response_min_ns: u64,
    /// Largest response time (ns).
    pub response_max_ns: u64,
    /// Failed I/Os.
    pub errors: u64,
    /// Response times of successful I/Os.
    pub histogram: Histogram,
}

impl DirStats {
    /// Counts one successful I/O.
    #[inline(always)]
    pub fn record(&mut self, bytes: u64, response_ns: u64) {
        if self.ios == 0 || response_ns < self.response_min_ns {
            self.response_min_ns = response_ns;
        }
        self.ios += 1;
        self.bytes += bytes;
        self.response_sum_ns += response_ns;
        self.response_max_ns = self.response_max_ns.max(response_ns);
        self.histogram.record(response_ns);
    }
}

impl AddAssign<&DirStats> for DirStats {
    fn add_assign(&mut self, o: &DirStats) {
        if o.ios > 0 && (self.ios == 0 || o.response_min_ns < self.response_min_ns) {
            self.response_min_ns = o.response_min_ns;
        }
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.response_sum_ns += o.response_sum_ns;
        self.response_max_ns = self.response_max_ns.max(o.response_max_ns);
        self.errors += o.errors;
        self.histogram += &o.histogram;
    }
}

/// Everything counted for one target (of one worker, or merged).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoStats {
    /// Reads.
    pub read: DirStats,
    /// Writes.
    pub write: DirStats,
    /// Trims (absent from documents written before trims were counted).
    #[serde(default)]
    pub trim: DirStats,
    /// Flushes (no bytes).
    #[serde(default)]
    pub flush: DirStats,
    /// Errors by errno (negative kernel result), sorted; a short transfer counts as errno 0.
    pub errnos: Vec<(i32, u64)>,
}

impl IoStats {
    /// The stats of one operation.
    #[inline(always)]
    pub fn of_mut(&mut self, op: Op) -> &mut DirStats {
        match op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
            Op::Trim => &mut self.trim,
            Op::Flush => &mut self.flush,
        }
    }

    /// The stats of one operation.
    pub fn of(&self, op: Op) -> &DirStats {
        match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
            Op::Trim => &self.trim,
            Op::Flush => &self.flush,
        }
    }

    /// Counts a failed I/O: `errno` positive, or 0 for a short transfer.
    pub fn record_error(&mut self, op: Op, errno: i32) {
        self.of_mut(op).errors += 1;
        match self.errnos.binary_search_by_key(&errno, |e| e.0) {
            Ok(i) => self.errnos[i].1 += 1,
            Err(i) => self.errnos.insert(i, (errno, 1)),
        }
    }

    /// Every operation together, for the "all I/Os" figures.
    pub fn all(&self) -> DirStats {
        let mut d = self.read.clone();
        for op in [Op::Write, Op::Trim, Op::Flush] {
            d += self.of(op);
        }
        d
    }
}

impl AddAssign<&IoStats> for IoStats {
    fn add_assign(&mut self, o: &IoStats) {
        for op in Op::ALL {
            *self.of_mut(op) += o.of(op);
        }
        for &(errno, n) in &o.errnos {
            match self.errnos.binary_search_by_key(&errno, |e| e.0) {
                Ok(i) => self.errnos[i].1 += n,
                Err(i) => self.errnos.insert(i, (errno, n)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_min_max_and_errors() {
        let mut a = IoStats::default();
        a.read.record(4096, 500);
        a.record_error(Op::Write, libc::EIO);
        let mut b = IoStats::default();
        b.read.record(4096, 300);
        b.read.record(4096, 900);
        b.record_error(Op::Write, libc::EIO);
        b.record_error(Op::Read, libc::ENOSPC);
        b.trim.record(1 << 20, 2000);
        b.record_error(Op::Flush, libc::EIO);
        a += &b;
        assert_eq!((a.trim.ios, a.trim.bytes, a.flush.errors), (1, 1 << 20, 1));
        assert_eq!((a.all().ios, a.all().response_max_ns), (4, 2000));
        assert_eq!((a.read.ios, a.read.bytes, a.read.response_sum_ns), (3, 12288, 1700));
        assert_eq!((a.read.response_min_ns, a.read.response_max_ns), (300, 900));
        assert_eq!(a.errnos, vec![(libc::EIO, 3), (libc::ENOSPC, 1)]);
        assert_eq!((a.read.errors, a.write.errors), (1, 2));
        let mut empty = IoStats::default();
        empty += &a;
        assert_eq!(empty.read.response_min_ns, 300);
    }

    /// The fastest and slowest response are the samples', whatever the order they come in and
    /// whichever side of a merge holds them; merging nothing changes neither.
    #[test]
    fn min_and_max_whatever_the_order() {
        let of = |responses: &[u64]| {
            let mut d = DirStats::default();
            responses.iter().for_each(|&r| d.record(512, r));
            d
        };
        assert_eq!(of(&[500, 300, 900, 200]).response_min_ns, 200, "recorded falling");
        let (fast, slow) = (of(&[100, 150]), of(&[300, 900]));
        for (mut into, from) in [(fast.clone(), &slow), (slow.clone(), &fast)] {
            into += from;
            assert_eq!((into.response_min_ns, into.response_max_ns), (100, 900));
        }
        let mut kept = slow.clone();
        kept += &DirStats::default();
        assert_eq!(kept, slow, "an empty side changes nothing");
    }

    #[test]
    fn an_operation_is_read_or_write_as_asked() {
        assert_eq!((Op::data(false), Op::data(true)), (Op::Read, Op::Write));
    }
}
