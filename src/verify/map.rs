//! The last write of every block of a target, as a run leaves it: saved after a verified run
//! and read back by `iogauge verify`.
//!
//! File format: one line of JSON ([`MapHead`]), then one little-endian u64 per block from
//! offset 0: 0 for a block never written, [`UNKNOWN`] for one whose last write failed, or a
//! packed [`Stamp`] (run index + 1 in the top 8 bits, worker in the next 16, write number in
//! the low 40).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::block::Stamp;
use crate::error::{Result, input};

/// The entry of a block whose last write failed: it may hold anything.
pub const UNKNOWN: u64 = u64::MAX;

/// The name and version of the map format.
pub const SCHEMA: &str = "iogauge.map/1";

/// Most runs a map can tell apart (8 bits, 0 meaning never written).
pub const MAX_RUNS: usize = 254;
/// Most workers (16 bits).
pub const MAX_WORKERS: usize = 1 << 16;
const SEQ_BITS: u32 = 40;
/// The most a map's first line (its JSON head) is read for: its runs are at most [`MAX_RUNS`].
const MAX_HEAD: u64 = 1 << 20;

/// Most blocks a map may describe: 1 GiB of entries (`plan` keeps maps within that too).
pub const MAX_BLOCKS: u64 = 1 << 27;

/// Checks the geometry a map or journal file claims before anything is allocated from it:
/// blocks of 512 bytes to 1 GiB, in multiples of 512; at most [`MAX_BLOCKS`] of them; at most
/// [`MAX_RUNS`] runs.
pub fn check_geometry(block_bytes: u64, blocks: u64, runs: usize) -> Result<()> {
    if block_bytes < 512 || block_bytes % 512 != 0 || block_bytes > 1 << 30 {
        return Err(input(format!(
            "block_bytes = {block_bytes}: iogauge writes blocks of 512 bytes to 1 GiB, in multiples of 512"
        )));
    }
    if blocks > MAX_BLOCKS {
        return Err(input(format!("{blocks} blocks: a map holds at most {MAX_BLOCKS}")));
    }
    if runs > MAX_RUNS {
        return Err(input(format!("{runs} runs: a map tells apart at most {MAX_RUNS}")));
    }
    Ok(())
}

/// Whether `entry` can name a write of one of `runs` runs (0 and [`UNKNOWN`] name none).
pub fn valid_entry(entry: u64, runs: usize) -> bool {
    let run = (entry >> 56) as usize;
    entry == 0 || entry == UNKNOWN || (1..=runs).contains(&run)
}

/// Packs a write into a map entry.
#[inline(always)]
pub fn pack(run_index: usize, worker: u32, seq: u64) -> u64 {
    ((run_index as u64 + 1) << 56) | ((worker as u64) << SEQ_BITS) | seq
}

/// What a map's target was when the map was made, so that `iogauge verify` checks the same
/// target and not whatever now has its name (a loop device attached to another file, a disk
/// renumbered).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetFacts {
    /// A block device's number, "major:minor".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// A file's filesystem and inode (for a loop device, its backing file's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inode: Option<(u64, u64)>,
    /// Size in bytes.
    pub size: u64,
    /// What names the device across reboots, where the kernel gives it: its WWID or serial,
    /// a device-mapper UUID, or the file a loop device is attached to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
}

impl TargetFacts {
    /// Why `now` is not the target these facts describe, if it is not: the size must match,
    /// and the serial where both have one, else the device number or inode.
    pub fn differs(&self, now: &TargetFacts) -> Option<String> {
        let describe = |f: &TargetFacts| {
            let id = match (&f.serial, &f.device, f.inode) {
                (Some(s), _, _) => s.clone(),
                (None, Some(d), _) => format!("device {d}"),
                (None, None, Some((d, i))) => format!("inode {i} on device {d}"),
                _ => "unknown".into(),
            };
            format!("{id}, {}", crate::units::human_size(f.size))
        };
        // The most lasting fact both have decides: a serial, else an inode (a loop device's
        // map records its backing file's, so the file itself can be verified), else the
        // device number.
        let same = self.size == now.size
            && match (&self.serial, &now.serial, self.inode, now.inode) {
                (Some(a), Some(b), _, _) => a == b,
                (_, _, Some(a), Some(b)) => a == b,
                _ => self.device.is_some() && self.device == now.device,
            };
        (!same).then(|| format!("the map describes {}; the target is now {}", describe(self), describe(now)))
    }
}

/// The first line of a map file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapHead {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The target, as the run named it.
    pub path: String,
    /// Bytes per block.
    pub block_bytes: u64,
    /// Run numbers ([`Stamp::run`]) of the runs whose writes the entries name.
    pub runs: Vec<u64>,
    /// Number of entries that follow.
    pub blocks: u64,
    /// What the target was (maps written before iogauge recorded it have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetFacts>,
}

/// The last write of every block of a target.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockMap {
    /// Target path.
    pub path: String,
    /// Bytes per block.
    pub block: u64,
    /// Run numbers, indexed by the entries.
    pub runs: Vec<u64>,
    /// One per block from offset 0.
    pub entries: Vec<u64>,
    /// What the target was when the map was made.
    pub target: Option<TargetFacts>,
}

impl BlockMap {
    /// The write an entry names (None: never written, or unknown).
    #[inline]
    pub fn stamp(&self, entry: u64) -> Option<Stamp> {
        stamp_of(entry, &self.runs)
    }

    /// Writes the map to `file` (whole or not at all: a temporary file renamed).
    pub fn save(&self, file: &Path) -> std::io::Result<()> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let head = MapHead {
            schema: SCHEMA.into(),
            path: self.path.clone(),
            block_bytes: self.block,
            runs: self.runs.clone(),
            blocks: self.entries.len() as u64,
            target: self.target.clone(),
        };
        let mut bytes = serde_json::to_vec(&head).expect("a map head serialises");
        bytes.push(b'\n');
        bytes.reserve(self.entries.len() * 8);
        for e in &self.entries {
            bytes.extend_from_slice(&e.to_le_bytes());
        }
        let tmp = file.with_extension("tmp");
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    }

    /// Reads a map written by [`BlockMap::save`].
    pub fn load(file: &Path) -> Result<BlockMap> {
        let bad = |why: String| input(format!("verify map {}: {why}", file.display()));
        let f = std::fs::File::open(file).map_err(|e| bad(e.to_string()))?;
        // A map is a file the run wrote: never a device read to its end.
        if !f.metadata().is_ok_and(|m| m.is_file()) {
            return Err(bad("not a regular file: give the map a run with --verify left".into()));
        }
        let mut r = BufReader::new(f);
        let mut line = String::new();
        (&mut r).take(MAX_HEAD).read_line(&mut line).map_err(|e| bad(e.to_string()))?;
        let head: MapHead =
            super::own_json(line.trim_end().as_bytes(), SCHEMA).map_err(|e| bad(format!("not a verify map ({e})")))?;
        check_geometry(head.block_bytes, head.blocks, head.runs.len())
            .map_err(|e| e.context(format!("verify map {}", file.display())))?;
        let mut raw = Vec::new();
        r.take(head.blocks * 8 + 1).read_to_end(&mut raw).map_err(|e| bad(e.to_string()))?;
        if raw.len() as u64 != head.blocks * 8 {
            let why = if (raw.len() as u64) < head.blocks * 8 { "cut short" } else { "damaged" };
            return Err(bad(format!("{} bytes of entries for {} blocks: the file is {why}", raw.len(), head.blocks)));
        }
        let entries: Vec<u64> =
            raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        if let Some(b) = entries.iter().position(|&e| !valid_entry(e, head.runs.len())) {
            return Err(bad(format!("block {b} names a run the map does not list: the file is damaged")));
        }
        Ok(BlockMap { path: head.path, block: head.block_bytes, runs: head.runs, entries, target: head.target })
    }
}

/// The write an entry names, given the runs' numbers.
#[inline]
pub fn stamp_of(entry: u64, runs: &[u64]) -> Option<Stamp> {
    if entry == 0 || entry == UNKNOWN {
        return None;
    }
    Some(Stamp {
        run: runs[(entry >> 56) as usize - 1],
        worker: ((entry >> SEQ_BITS) & 0xffff) as u32,
        seq: entry & ((1 << SEQ_BITS) - 1),
    })
}

/// Where a verified run leaves the map of `target`: `maps/` next to the history database,
/// one file per target, named by its absolute path.
pub fn default_file(data_dir: &Path, target: &str) -> PathBuf {
    let abs = std::fs::canonicalize(target).unwrap_or_else(|_| PathBuf::from(target));
    let name: String = abs
        .to_string_lossy()
        .chars()
        .map(|c| match c {
            '%' => "%25".to_string(),
            '/' => "%2F".to_string(),
            c => c.to_string(),
        })
        .collect();
    data_dir.join("maps").join(format!("{name}.map"))
}

/// Removes the saved map of `target`, which a test is about to write: a map of the data
/// before would call every block written since stale, even if this test is killed or its own
/// map cannot be saved.
pub fn forget(target: &str) -> Result<()> {
    let Some(dir) = crate::host::dirs::data() else { return Ok(()) };
    let file = default_file(&dir, target);
    match std::fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(input(format!("cannot remove the old verify map {} of {target}: {e}", file.display())))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_a_file() {
        let runs = vec![1_700_000_000_000_000_001, 1_700_000_000_000_000_002];
        let mut entries = vec![0u64; 100];
        entries[3] = pack(1, 65535, (1 << 40) - 1);
        entries[4] = UNKNOWN;
        entries[5] = pack(0, 0, 1);
        let m = BlockMap { path: "/dev/x".into(), block: 4096, runs: runs.clone(), entries, target: None };
        let dir = std::env::temp_dir().join(format!("iogauge-map-test-{}", std::process::id()));
        let f = dir.join("a.map");
        m.save(&f).unwrap();
        let back = BlockMap::load(&f).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.stamp(back.entries[3]), Some(Stamp { run: runs[1], worker: 65535, seq: (1 << 40) - 1 }));
        assert_eq!(back.stamp(back.entries[4]), None);
        assert_eq!(back.stamp(back.entries[5]), Some(Stamp { run: runs[0], worker: 0, seq: 1 }));
        let len = std::fs::metadata(&f).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&f).unwrap().set_len(len - 3).unwrap();
        assert!(BlockMap::load(&f).unwrap_err().to_string().contains("cut short"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
