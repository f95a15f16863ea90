//! One thread's part of a test: its files, one after another, record by record, with plain
//! pread/pwrite as IOzone does (one I/O in flight per thread; the page cache in between unless
//! O_DIRECT).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::config::{Content, FsTest};
use crate::engine::AlignedBuf;
use crate::rng::Rng;
use crate::run::Lane;
use crate::stats::{IoStats, Op};

/// What a thread does in a test.
pub(super) struct Work {
    pub(super) test: FsTest,
    /// Its files, in order.
    pub(super) files: Vec<PathBuf>,
    pub(super) file_bytes: u64,
    pub(super) record: u64,
    pub(super) stride: u64,
    pub(super) direct: bool,
    pub(super) fsync: bool,
    pub(super) close: bool,
    /// Seeds the random order and the written data.
    pub(super) seed: u64,
}

/// The first I/O that failed.
pub(super) struct Failure {
    pub(super) path: PathBuf,
    pub(super) offset: u64,
    pub(super) write: bool,
    pub(super) errno: i32,
    pub(super) at_ns: u64,
}

/// How a thread ended a test.
pub(super) struct Outcome {
    pub(super) stats: IoStats,
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
    /// Bytes and records done when the first thread finished, and when that was for this
    /// thread (its own end if it finished first).
    pub(super) stonewall: (u64, u64, u64),
    pub(super) failure: Option<Failure>,
}

/// The record numbers of one file in the order `test` visits them.
fn order(test: FsTest, records: u64, stride: u64, rng: &mut Rng) -> Vec<u64> {
    match test {
        FsTest::BackwardsRead => (0..records).rev().collect(),
        // Every stride-th record from 0, then from 1..., so each is read once.
        FsTest::StrideRead => (0..stride.min(records)).flat_map(|s| (s..records).step_by(stride as usize)).collect(),
        FsTest::RandomRead | FsTest::RandomWrite => {
            let mut v: Vec<u64> = (0..records).collect();
            for i in (1..v.len()).rev() {
                v.swap(i, rng.below(i as u64 + 1) as usize);
            }
            v
        }
        FsTest::Write | FsTest::Rewrite | FsTest::Read | FsTest::Reread => (0..records).collect(),
    }
}

fn open(path: &PathBuf, w: &Work) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.custom_flags(libc::O_CLOEXEC | if w.direct { libc::O_DIRECT } else { 0 });
    match w.test {
        // Made new (or emptied, when an earlier run kept it): the write allocates every block.
        FsTest::Write => o.write(true).create(true).truncate(true),
        // Overwritten in place: the blocks exist, the file does not grow.
        FsTest::Rewrite | FsTest::RandomWrite => o.write(true),
        _ => o.read(true),
    };
    o.open(path)
}

/// Runs `w` as thread `index`: every record of every file, from the moment all threads start.
/// `first_done_ns`: when the first thread finished (ns from the epoch; 0: none yet), IOzone's
/// stonewall, which the first to finish sets.
pub(super) fn run(index: usize, w: &Work, lane: Lane, first_done_ns: &AtomicU64) -> Outcome {
    let mut buf = AlignedBuf::new(w.record as usize);
    crate::content::fill(buf.as_mut_slice(), Content::Random, w.seed);
    let mut rng = Rng::new(w.seed, index as u64);
    let records = w.file_bytes / w.record;
    let Lane { live, stop, epoch } = lane;
    let now = || epoch.elapsed().as_nanos() as u64;
    let mut out = Outcome { stats: IoStats::default(), start_ns: 0, end_ns: 0, stonewall: (0, 0, 0), failure: None };
    let mut stonewalled = false;
    out.start_ns = now();
    let writes = w.test.writes();
    let op = Op::data(writes);
    let fail = |out: &mut Outcome, path: &PathBuf, offset: u64, e: std::io::Error| {
        out.stats.record_error(op, e.raw_os_error().unwrap_or(0));
        live.count_error(0, op);
        out.failure = Some(Failure {
            path: path.clone(),
            offset,
            write: writes,
            errno: e.raw_os_error().unwrap_or(0),
            at_ns: now(),
        });
        stop.store(true, Relaxed);
    };
    'files: for (k, path) in w.files.iter().enumerate() {
        let f = match open(path, w) {
            Ok(f) => f,
            Err(e) => {
                fail(&mut out, path, 0, e);
                break;
            }
        };
        for r in order(w.test, records, w.stride, &mut rng) {
            if stop.load(Relaxed) {
                break 'files;
            }
            let offset = r * w.record;
            let t0 = now();
            // A short transfer is an error: the files are whole records long, so only a
            // failing device or a full file system makes one.
            let slice = &mut buf.as_mut_slice()[..w.record as usize];
            let done = if writes { f.write_all_at(slice, offset) } else { f.read_exact_at(slice, offset) };
            let t1 = now();
            if let Err(e) = done {
                fail(&mut out, path, offset, e);
                break 'files;
            }
            out.stats.of_mut(op).record(w.record, t1 - t0);
            live.count_one(0, op, w.record, t1 - t0);
            if !stonewalled && first_done_ns.load(Relaxed) != 0 {
                stonewalled = true;
                let d = out.stats.of_mut(op);
                out.stonewall = (d.bytes, d.ios, t1);
            }
        }
        if w.fsync && writes {
            if let Err(e) = f.sync_all() {
                fail(&mut out, path, w.file_bytes, e);
                break;
            }
        }
        // Closing is inside the time with --close; with several files, closing the earlier
        // ones always is (as opening each one is).
        if k + 1 == w.files.len() && !w.close {
            out.end_ns = now();
        }
        drop(f);
    }
    if out.end_ns == 0 {
        out.end_ns = now();
    }
    let d = out.stats.of_mut(op);
    if !stonewalled {
        out.stonewall = (d.bytes, d.ios, out.end_ns);
    }
    // The first to finish (not to fail) stonewalls the others, at once.
    if out.failure.is_none() && !stop.load(Relaxed) {
        let _ = first_done_ns.compare_exchange(0, out.end_ns.max(1), Relaxed, Relaxed);
    }
    // Marked as iogauge's once the time is taken and the others told: bookkeeping, not the
    // workload (a file left unmarked by a crash is refused by the next test, not overwritten;
    // one never made fails to take the mark, which is all it needs).
    if w.test == FsTest::Write {
        w.files.iter().for_each(|p| crate::targets::mark_created(&p.to_string_lossy()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_visits_each_record_once() {
        let mut rng = Rng::new(1, 0);
        for test in crate::config::FS_TESTS {
            for (records, stride) in [(1, 17), (100, 17), (34, 17), (16, 17), (1000, 3)] {
                let mut o = order(test, records, stride, &mut rng);
                o.sort_unstable();
                assert_eq!(o, (0..records).collect::<Vec<_>>(), "{test:?} {records} {stride}");
            }
        }
        assert_eq!(order(FsTest::StrideRead, 5, 2, &mut rng), [0, 2, 4, 1, 3]);
        assert_eq!(order(FsTest::BackwardsRead, 3, 2, &mut rng), [2, 1, 0]);
    }
}
