//! A worker's log of every completed I/O (`--log-dir`, `--iolog`): entries go into a chunk on the I/O
//! path, and whole chunks go to a writer thread (run::log_files) that formats them, so the hot
//! loop neither formats, writes nor allocates per I/O (chunks come back to be reused).

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::stats::Op;

/// Entries per chunk: 64 Ki x 32 bytes, 2 MiB, about a tenth of a second of a fast worker.
const CHUNK: usize = 64 * 1024;

/// Chunks in flight between a worker and its writer before the worker waits (the writer fell
/// behind by this much: the log then paces the I/O rather than grow without bound).
const DEPTH: usize = 8;

/// One completed I/O.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Completion, ns from the start of recording.
    pub at_ns: u64,
    /// Response time (ns).
    pub response_ns: u64,
    /// Where it was.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// Its target, of the worker's (at most 65,536: MAX_SLOTS_PER_WORKER).
    pub target: u16,
    /// What it did.
    pub op: Op,
}

/// The worker's end: fills chunks and hands them over.
pub struct IoLog {
    chunk: Vec<Entry>,
    full: SyncSender<Vec<Entry>>,
    spare: Receiver<Vec<Entry>>,
}

/// The writer's end: full chunks in, emptied chunks back.
pub struct LogChunks {
    /// Full chunks, in order; the channel closes when the worker is done.
    pub full: Receiver<Vec<Entry>>,
    /// Emptied chunks for the worker to reuse.
    pub spare: SyncSender<Vec<Entry>>,
}

/// A worker's log and its writer's end.
pub fn channel() -> (IoLog, LogChunks) {
    let (full_tx, full_rx) = sync_channel(DEPTH);
    let (spare_tx, spare_rx) = sync_channel(DEPTH + 1);
    (
        IoLog { chunk: Vec::with_capacity(CHUNK), full: full_tx, spare: spare_rx },
        LogChunks { full: full_rx, spare: spare_tx },
    )
}

impl IoLog {
    /// Logs one completion.
    #[inline(always)]
    pub fn push(&mut self, e: Entry) {
        self.chunk.push(e);
        if self.chunk.len() == CHUNK {
            self.hand_over();
        }
    }

    #[cold]
    fn hand_over(&mut self) {
        let next = self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        let full = std::mem::replace(&mut self.chunk, next);
        // A writer that failed has gone; its error is reported from its side.
        let _ = self.full.send(full);
    }

    /// Hands over what is left; the writer ends when it has written it.
    pub fn finish(mut self) {
        if !self.chunk.is_empty() {
            let rest = std::mem::take(&mut self.chunk);
            let _ = self.full.send(rest);
        }
    }
}
