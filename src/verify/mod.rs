//! Data verification (`--verify`, `--journal`, `iogauge verify`).
//!
//! Every block a verified test writes carries a header naming the write and a checksum
//! ([`block`]); workers check what they read back (`checker`); the test leaves a map of the
//! last write of every block ([`map`]), and with `--journal` a record of every write made
//! before it is issued ([`journal`]), so a target can be re-read and checked later, even after
//! a crash ([`check_target`]).

pub mod block;
pub(crate) mod checker;
mod crc32c;
pub mod journal;
pub mod map;

use serde::{Deserialize, Serialize};

use crate::engine::AlignedBuf;
use crate::error::Result;
use block::{HEADER_BYTES, Mismatch};
use map::BlockMap;

/// The result of re-reading one target (`iogauge verify`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetCheck {
    /// The target.
    pub path: String,
    /// Bytes per block.
    pub block_bytes: u64,
    /// Blocks whose last write is known and were checked.
    pub checked_blocks: u64,
    /// Blocks skipped: a write failed there, or was in flight at a crash and never written before.
    pub uncertain_blocks: u64,
    /// Every block that does not hold its last write.
    pub mismatches: Vec<Mismatch>,
}

/// Re-reads `map.path` through `read_at` (fill the buffer from the byte offset given) and
/// checks every block against the last write `map` records there; `in_flight` (from a
/// journal) names writes that may or may not have landed.
pub fn check_target(
    map: &BlockMap,
    in_flight: Option<&[u64]>,
    mut read_at: impl FnMut(&mut [u8], u64) -> Result<()>,
) -> Result<TargetCheck> {
    let path = &map.path;
    let block = map.block as usize;
    let chunk_blocks = (4 << 20) / block.max(1) + 1;
    let mut buf = AlignedBuf::new(chunk_blocks * block);
    let mut out = TargetCheck {
        path: path.clone(),
        block_bytes: map.block,
        checked_blocks: 0,
        uncertain_blocks: 0,
        mismatches: Vec::new(),
    };
    let maybe = |b: usize| in_flight.and_then(|f| map.stamp(f[b]));
    let mut first = 0;
    while first < map.entries.len() {
        let n = chunk_blocks.min(map.entries.len() - first);
        let wanted = &map.entries[first..first + n];
        let unknown = |b: usize| map.entries[b] == map::UNKNOWN || (map.entries[b] == 0 && maybe(b).is_some());
        out.uncertain_blocks += (first..first + n).filter(|&b| unknown(b)).count() as u64;
        if wanted.iter().all(|&e| map.stamp(e).is_none()) {
            first += n;
            continue;
        }
        let bytes = &mut buf.as_mut_slice()[..n * block];
        let at = first as u64 * map.block;
        read_at(bytes, at).map_err(|e| e.context(format!("target {path}: reading at offset {at}")))?;
        for (k, &e) in wanted.iter().enumerate() {
            let Some(expected) = map.stamp(e) else { continue };
            out.checked_blocks += 1;
            let offset = at + (k * block) as u64;
            let data = &bytes[k * block..(k + 1) * block];
            debug_assert!(data.len() >= HEADER_BYTES);
            if let Some((kind, found, text)) = block::compare(data, offset, expected, maybe(first + k)) {
                out.mismatches.push(Mismatch { path: path.clone(), offset, kind, expected, found, text });
            }
        }
        first += n;
    }
    Ok(out)
}

/// A JSON file of iogauge's own (a verify map's head, a journal's) that names its format in
/// `schema`: refused without quoting it unless `schema` is `want`, then read as `T`, a field
/// that does not read named by its path.
pub(crate) fn own_json<T: serde::de::DeserializeOwned>(json: &[u8], want: &str) -> std::result::Result<T, String> {
    /// The one field each of them has.
    #[derive(serde::Deserialize)]
    struct Head {
        schema: Option<String>,
    }
    let head: Head = serde_json::from_slice(json).map_err(|e| crate::error::unquoted(&e))?;
    if head.schema.as_deref() != Some(want) {
        return Err(format!("its `schema` is not {want}"));
    }
    let mut de = serde_json::Deserializer::from_slice(json);
    let v = serde_path_to_error::deserialize(&mut de).map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
    de.end().map_err(|e| e.to_string())?;
    Ok(v)
}
