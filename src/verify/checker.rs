//! A worker's side of verification: it stamps every block it writes, keeps the last write of
//! every block of its working sets, and checks every block it reads whose last write it knows.
//!
//! Two I/Os of a worker never overlap while in flight (the worker draws another offset), so
//! the last completed write of a block is what a read of it must find. Workers sharing a
//! target have disjoint working sets (checked before the test), so no other worker's write
//! can land in between.

use std::ops::Range;

use super::block::{self, Mismatch, Stamp};
use super::journal::JournalWriter;
use super::map::{UNKNOWN, pack, stamp_of};

/// Mismatches a worker keeps in full (all are counted).
const KEPT: usize = 100;

/// The blocks of one working set: entries of blocks `first..first + entries.len()`.
pub struct WorkingMap {
    /// Index of the first block on the target.
    pub first: u64,
    /// One map entry per block.
    pub entries: Vec<u64>,
}

#[derive(Clone, Copy, Default)]
struct InFlight {
    offset: u64,
    end: u64,
    entry: u64,
}

/// One worker's verification state for one run.
pub struct Checker {
    block: u64,
    run_index: usize,
    runs: Vec<u64>,
    worker: u32,
    seq: u64,
    /// Unix time of the run's epoch (ns), for the headers' issue times.
    unix_base_ns: u64,
    paths: Vec<String>,
    /// The test's index of each of the worker's targets (for the journal).
    target_ids: Vec<u32>,
    /// The worker's working sets, in plan order.
    pub maps: Vec<WorkingMap>,
    in_flight: Vec<InFlight>,
    journal: Option<JournalWriter>,
    /// Blocks read and checked.
    pub checked: u64,
    /// Blocks that did not match.
    pub mismatch_count: u64,
    /// The first of them.
    pub mismatches: Vec<Mismatch>,
}

/// What a worker's checker needs to know.
pub struct CheckerSpec {
    /// Bytes per block.
    pub block: u64,
    /// This run's index among the test's runs, and every run's number so far (this one last).
    pub run_index: usize,
    /// Run numbers.
    pub runs: Vec<u64>,
    /// The worker's index in the test.
    pub worker: u32,
    /// Its targets' paths and test indexes, in plan order.
    pub targets: Vec<(String, u32)>,
    /// Its working sets' maps, as earlier runs left them.
    pub maps: Vec<WorkingMap>,
    /// Its journal, if the test keeps one.
    pub journal: Option<JournalWriter>,
}

impl Checker {
    /// A checker for a worker with `slots` I/O slots.
    pub fn new(spec: CheckerSpec, slots: usize) -> Checker {
        let (paths, target_ids) = spec.targets.into_iter().unzip();
        Checker {
            block: spec.block,
            run_index: spec.run_index,
            runs: spec.runs,
            worker: spec.worker,
            seq: 0,
            unix_base_ns: 0,
            paths,
            target_ids,
            maps: spec.maps,
            in_flight: vec![InFlight::default(); slots],
            journal: spec.journal,
            checked: 0,
            mismatch_count: 0,
            mismatches: Vec::new(),
        }
    }

    /// Sets the Unix time of the run's epoch.
    pub fn start(&mut self, unix_base_ns: u64) {
        self.unix_base_ns = unix_base_ns;
    }

    /// Whether `offset..offset + len` overlaps an I/O in flight in `slots` (one target's).
    pub fn overlaps(&self, slots: Range<usize>, offset: u64, len: u32) -> bool {
        let end = offset + len as u64;
        self.in_flight[slots].iter().any(|f| f.offset < end && offset < f.end)
    }

    /// Stamps the blocks of a write about to be issued from `buf`, and journals it.
    pub fn issue_write(&mut self, slot: u32, target: u32, buf: &mut [u8], offset: u64, now_ns: u64) {
        self.seq += 1;
        let entry = pack(self.run_index, self.worker, self.seq);
        let stamp = Stamp { run: self.runs[self.run_index], worker: self.worker, seq: self.seq };
        for (k, b) in buf.chunks_exact_mut(self.block as usize).enumerate() {
            block::stamp(b, offset + k as u64 * self.block, stamp, self.unix_base_ns + now_ns);
        }
        let len = buf.len() as u32;
        self.in_flight[slot as usize] = InFlight { offset, end: offset + len as u64, entry };
        if let Some(j) = &mut self.journal {
            j.issued(self.target_ids[target as usize], offset, len, entry);
        }
    }

    /// Notes a read about to be issued.
    pub fn issue_read(&mut self, slot: u32, offset: u64, len: u32) {
        self.in_flight[slot as usize] = InFlight { offset, end: offset + len as u64, entry: 0 };
    }

    fn blocks(&self, target: u32, offset: u64, len: u64) -> Range<usize> {
        let m = &self.maps[target as usize];
        let first = (offset / self.block - m.first) as usize;
        first..first + (len / self.block) as usize
    }

    /// A write completed: its blocks now hold it (`ok`), or anything (it failed).
    pub fn write_done(&mut self, slot: u32, target: u32, ok: bool) {
        let f = std::mem::take(&mut self.in_flight[slot as usize]);
        let blocks = self.blocks(target, f.offset, f.end - f.offset);
        self.maps[target as usize].entries[blocks].fill(if ok { f.entry } else { UNKNOWN });
        if let Some(j) = &mut self.journal {
            j.completed(self.target_ids[target as usize], f.offset, (f.end - f.offset) as u32, f.entry, ok);
        }
    }

    /// A read completed: checks every block whose last write is known. Returns how many
    /// did not match.
    pub fn read_done(&mut self, slot: u32, target: u32, buf: &[u8], ok: bool) -> u64 {
        let f = std::mem::take(&mut self.in_flight[slot as usize]);
        if !ok {
            return 0;
        }
        let before = self.mismatch_count;
        let blocks = self.blocks(target, f.offset, f.end - f.offset);
        for (k, b) in blocks.enumerate() {
            let Some(expected) = stamp_of(self.maps[target as usize].entries[b], &self.runs) else { continue };
            self.checked += 1;
            let offset = f.offset + k as u64 * self.block;
            let data = &buf[k * self.block as usize..(k + 1) * self.block as usize];
            if let Some((kind, found, text)) = block::compare(data, offset, expected, None) {
                self.mismatch_count += 1;
                if self.mismatches.len() < KEPT {
                    let path = self.paths[target as usize].clone();
                    self.mismatches.push(Mismatch { path, offset, kind, expected, found, text });
                }
            }
        }
        self.mismatch_count - before
    }

    /// What it checked and found, as in the result document.
    pub fn result(&self) -> super::block::VerifyResult {
        super::block::VerifyResult {
            block_bytes: self.block,
            checked_blocks: self.checked,
            mismatches: self.mismatch_count,
            found: self.mismatches.clone(),
        }
    }

    /// Whether it keeps a journal of writes.
    pub fn journals(&self) -> bool {
        self.journal.is_some()
    }

    /// Puts the journal's records on stable storage (before issuing what they describe).
    pub fn flush_journal(&mut self) -> std::io::Result<()> {
        self.journal.as_mut().map_or(Ok(()), JournalWriter::flush)
    }
}
