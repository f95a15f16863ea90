//! Raw counters a worker keeps per target, merged with `+=` into workers, targets and totals.
//!
//! Workers never share these: each owns its own and hands them over when the run ends.

pub mod histogram;

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

pub use histogram::Histogram;

/// Completed I/Os of one direction (reads or writes).
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
    /// Errors by errno (negative kernel result), sorted; a short transfer counts as errno 0.
    pub errnos: Vec<(i32, u64)>,
}

impl IoStats {
    /// The stats of one direction.
    #[inline(always)]
    pub fn dir(&mut self, write: bool) -> &mut DirStats {
        if write { &mut self.write } else { &mut self.read }
    }

    /// Counts a failed I/O: `errno` positive, or 0 for a short transfer.
    pub fn record_error(&mut self, write: bool, errno: i32) {
        self.dir(write).errors += 1;
        match self.errnos.binary_search_by_key(&errno, |e| e.0) {
            Ok(i) => self.errnos[i].1 += 1,
            Err(i) => self.errnos.insert(i, (errno, 1)),
        }
    }

    /// Reads and writes together, for the "all I/Os" figures.
    pub fn both(&self) -> DirStats {
        let mut d = self.read.clone();
        d += &self.write;
        d
    }
}

impl AddAssign<&IoStats> for IoStats {
    fn add_assign(&mut self, o: &IoStats) {
        self.read += &o.read;
        self.write += &o.write;
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
        a.record_error(true, libc::EIO);
        let mut b = IoStats::default();
        b.read.record(4096, 300);
        b.read.record(4096, 900);
        b.record_error(true, libc::EIO);
        b.record_error(false, libc::ENOSPC);
        a += &b;
        assert_eq!((a.read.ios, a.read.bytes, a.read.response_sum_ns), (3, 12288, 1700));
        assert_eq!((a.read.response_min_ns, a.read.response_max_ns), (300, 900));
        assert_eq!(a.errnos, vec![(libc::EIO, 2), (libc::ENOSPC, 1)]);
        assert_eq!((a.read.errors, a.write.errors), (1, 2));
        let mut empty = IoStats::default();
        empty += &a;
        assert_eq!(empty.read.response_min_ns, 300);
    }
}
