//! The header every verified block carries, and what a block read back says about itself.
//!
//! A block is the unit of verification: the largest size that divides every transfer size,
//! alignment and working-set start of the test, so every write covers whole blocks. Each block
//! of each write starts with a 48-byte header, the rest is the test's data pattern:
//!
//! | bytes | field                                                   |
//! |-------|---------------------------------------------------------|
//! | 0-7   | magic `iogauge\x01`                                      |
//! | 8-15  | offset of the block on the target                        |
//! | 16-23 | run: a number unique to the run (its start, ns since 1970) |
//! | 24-31 | the writing worker's write number in the run, from 1    |
//! | 32-39 | when the write was issued (ns since 1970)               |
//! | 40-43 | worker index in the test                                |
//! | 44-47 | CRC-32C of the whole block, these 4 bytes left out      |
//!
//! All little-endian. The run number doubles as the seed the issue asks for: it tells this
//! run's writes from those of any other run, which a workload seed (fixed by default) cannot.

use serde::{Deserialize, Serialize};

use super::crc32c;

/// Bytes of header at the start of every block.
pub const HEADER_BYTES: usize = 48;

const MAGIC: [u8; 8] = *b"iogauge\x01";
const CRC_AT: usize = 44;

/// One write of one block: which run, which worker, which of its writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// The run (its start time in ns since 1970, unique per run).
    pub run: u64,
    /// The worker's index in the test.
    pub worker: u32,
    /// The worker's write number in the run, from 1.
    pub seq: u64,
}

/// A block iogauge wrote, as read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// The offset the block was written for.
    pub offset: u64,
    /// Which write it is.
    #[serde(flatten)]
    pub stamp: Stamp,
    /// When it was issued (ns since 1970).
    pub issued_unix_ns: u64,
}

/// What a block read back holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No iogauge header: data iogauge never wrote.
    Foreign,
    /// An iogauge header, but the checksum does not match the block.
    Damaged,
    /// An intact block iogauge wrote.
    Block(Written),
}

/// Stamps `block` (whose data is already in place) as write `stamp` of the block at `offset`.
pub fn stamp(block: &mut [u8], offset: u64, stamp: Stamp, issued_unix_ns: u64) {
    block[0..8].copy_from_slice(&MAGIC);
    block[8..16].copy_from_slice(&offset.to_le_bytes());
    block[16..24].copy_from_slice(&stamp.run.to_le_bytes());
    block[24..32].copy_from_slice(&stamp.seq.to_le_bytes());
    block[32..40].copy_from_slice(&issued_unix_ns.to_le_bytes());
    block[40..44].copy_from_slice(&stamp.worker.to_le_bytes());
    let crc = checksum(block);
    block[CRC_AT..HEADER_BYTES].copy_from_slice(&crc.to_le_bytes());
}

fn checksum(block: &[u8]) -> u32 {
    crc32c::append(crc32c::append(0, &block[..CRC_AT]), &block[HEADER_BYTES..])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads what `block` holds.
pub fn read(block: &[u8]) -> Found {
    // A damaged magic is still a header: one or two wrong bytes make a damaged block, not
    // a foreign one (random data matches 6 of 8 bytes about once in 10^12 blocks).
    let same = block[..8].iter().zip(&MAGIC).filter(|(a, b)| a == b).count();
    if same < 6 {
        return Found::Foreign;
    }
    let crc = u32::from_le_bytes(block[CRC_AT..HEADER_BYTES].try_into().expect("4 bytes"));
    if same < 8 || crc != checksum(block) {
        return Found::Damaged;
    }
    Found::Block(Written {
        offset: u64_at(block, 8),
        stamp: Stamp {
            run: u64_at(block, 16),
            seq: u64_at(block, 24),
            worker: u32::from_le_bytes(block[40..44].try_into().expect("4 bytes")),
        },
        issued_unix_ns: u64_at(block, 32),
    })
}

/// How a block differs from what was last written there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The block's bytes do not match its checksum.
    Corrupted,
    /// An older write of this block: the last write was lost.
    Stale,
    /// A block written for another offset.
    Misplaced,
    /// No block iogauge wrote: the write never reached the storage.
    NeverWritten,
}

impl Kind {
    /// The kind as in the JSON document.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Corrupted => "corrupted",
            Kind::Stale => "stale",
            Kind::Misplaced => "misplaced",
            Kind::NeverWritten => "never_written",
        }
    }
}

/// A block that is not what was written there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    /// The target.
    pub path: String,
    /// The block's offset.
    pub offset: u64,
    /// What went wrong.
    pub kind: Kind,
    /// The write expected there.
    pub expected: Stamp,
    /// The intact iogauge block found there, if any.
    pub found: Option<Written>,
    /// In words.
    pub text: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} offset {}: {}: {}", self.path, self.offset, self.kind.name(), self.text)
    }
}

fn describe(s: &Stamp) -> String {
    format!("write #{} of worker {} (run {})", s.seq, s.worker, s.run)
}

/// Compares `block`, read at `offset`, with the write `expected` there. `maybe` is a write
/// that was in flight when the writer died: finding it is as good as finding `expected`.
/// Returns the kind of mismatch and its text.
pub fn compare(
    block: &[u8],
    offset: u64,
    expected: Stamp,
    maybe: Option<Stamp>,
) -> Option<(Kind, Option<Written>, String)> {
    let exp = describe(&expected);
    let found = match read(block) {
        Found::Foreign => {
            return Some((Kind::NeverWritten, None, format!("expected {exp}, found no iogauge header")));
        }
        Found::Damaged => {
            return Some((Kind::Corrupted, None, format!("expected {exp}, found a block whose checksum fails")));
        }
        Found::Block(w) => w,
    };
    let got = describe(&found.stamp);
    if found.offset != offset {
        let text = format!("expected {exp}, found {got} meant for offset {}", found.offset);
        return Some((Kind::Misplaced, Some(found), text));
    }
    if found.stamp == expected || Some(found.stamp) == maybe {
        return None;
    }
    let older = if found.stamp.run == expected.run && found.stamp.worker == expected.worker {
        found.stamp.seq < expected.seq
    } else {
        found.stamp.run != expected.run
    };
    let (kind, why) = if older {
        (Kind::Stale, "an older write: the last one was lost")
    } else {
        (Kind::Corrupted, "a write the record does not know")
    };
    Some((kind, Some(found), format!("expected {exp}, found {got}: {why}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(offset: u64, s: Stamp) -> Vec<u8> {
        let mut b: Vec<u8> = (0..4096u32).map(|i| ((i * 31) >> 3) as u8).collect();
        stamp(&mut b, offset, s, 1_700_000_000_000_000_000);
        b
    }

    #[test]
    fn every_kind_is_told_apart() {
        let s = Stamp { run: 10, worker: 2, seq: 7 };
        let b = block(8192, s);
        assert_eq!(compare(&b, 8192, s, None), None);
        let mut flipped = b.clone();
        flipped[3000] ^= 0x10;
        assert_eq!(compare(&flipped, 8192, s, None).unwrap().0, Kind::Corrupted);
        let mut header_flip = b.clone();
        header_flip[2] ^= 1;
        assert_eq!(compare(&header_flip, 8192, s, None).unwrap().0, Kind::Corrupted);
        let older = block(8192, Stamp { seq: 3, ..s });
        assert_eq!(compare(&older, 8192, s, None).unwrap().0, Kind::Stale);
        let other_run = block(8192, Stamp { run: 9, seq: 900, ..s });
        assert_eq!(compare(&other_run, 8192, s, None).unwrap().0, Kind::Stale);
        let newer = block(8192, Stamp { seq: 8, ..s });
        assert_eq!(compare(&newer, 8192, s, None).unwrap().0, Kind::Corrupted);
        assert_eq!(compare(&newer, 8192, s, Some(Stamp { seq: 8, ..s })), None);
        let (kind, found, _) = compare(&block(4096, s), 8192, s, None).unwrap();
        assert_eq!((kind, found.unwrap().offset), (Kind::Misplaced, 4096));
        assert_eq!(compare(&vec![0u8; 4096], 8192, s, None).unwrap().0, Kind::NeverWritten);
    }
}

/// Verification in a run's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    /// Bytes per verified block.
    pub block_bytes: u64,
    /// Blocks read back and checked against their last write.
    pub checked_blocks: u64,
    /// How many did not match.
    pub mismatches: u64,
    /// The first mismatches (up to 100 per worker).
    pub found: Vec<Mismatch>,
}

impl VerifyResult {
    /// Adds another part's (another worker's or manager's).
    pub fn add(&mut self, o: &VerifyResult) {
        self.checked_blocks += o.checked_blocks;
        self.mismatches += o.mismatches;
        self.found.extend(o.found.iter().cloned());
    }
}
