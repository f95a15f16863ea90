//! vdbench's journal: every verified write is recorded, durably, before it is issued and after
//! it completes, so that a test cut short (a crash, a power loss) can still be verified: a
//! write the storage acknowledged must be there; one in flight may or may not be.
//!
//! A journal directory holds `journal.json` ([`JournalHead`]: block size, targets, runs) and
//! one file of records per worker, `w{N}.jnl`. A record is 32 bytes, little-endian: tag (u8:
//! 1 issued, 2 completed, 3 failed), 3 zero bytes, target index (u32), offset (u64), length
//! (u32), 4 zero bytes, the write's map entry (u64, see [`super::map`]). Records are written
//! with O_DSYNC before each batch of I/Os is submitted, so an issued write's record is on
//! stable storage before the write can reach the target.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::map::{BlockMap, UNKNOWN};
use crate::error::{Result, input};
use crate::host::files::Ours;

/// The name and version of the journal format.
pub const SCHEMA: &str = "iogauge.journal/1";

const RECORD: usize = 32;
const ISSUED: u8 = 1;
const COMPLETED: u8 = 2;
const FAILED: u8 = 3;

/// `journal.json`: what the records refer to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalHead {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Bytes per block.
    pub block_bytes: u64,
    /// The targets, indexed by the records: path and number of blocks.
    pub targets: Vec<(String, u64)>,
    /// Run numbers of the runs so far, indexed by the entries.
    pub runs: Vec<u64>,
}

impl JournalHead {
    /// Writes `journal.json` in `dir` (whole or not at all).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join("journal.json.tmp");
        let mut f = File::create(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(self).expect("a journal head serialises"))?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join("journal.json"))?;
        File::open(dir)?.sync_all()
    }
}

/// Whether `name` is a file a journal is made of: `journal.json` or a worker's `wN.jnl`.
pub(crate) fn journal_file(name: &str) -> bool {
    let worker = name.strip_prefix('w').and_then(|n| n.strip_suffix(".jnl"));
    name == "journal.json" || worker.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// What `--journal` replaces in its directory: an earlier journal's files, where that directory
/// holds an iogauge journal (its `journal.json`).
pub(crate) const JOURNAL: Ours = Ours { what: "a file of an iogauge journal", is: in_a_journal };

fn in_a_journal(path: &Path) -> bool {
    let head = path.parent().and_then(|dir| std::fs::read(dir.join("journal.json")).ok());
    head.and_then(|h| serde_json::from_slice::<JournalHead>(&h).ok()).is_some_and(|h| h.schema == SCHEMA)
}

/// Empties `dir` of an earlier test's journal (and creates it). Only a journal's own files
/// are removed, and only from a directory that holds an iogauge journal: anything else in
/// it stays, and files that look like a journal's without its `journal.json` are refused.
pub fn start(dir: &Path) -> Result<()> {
    let failed = |e: std::io::Error| input(format!("--journal {}: {e}", dir.display()));
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(input(format!("--journal {}: not a directory: give a directory for the journal", dir.display())));
    }
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut ours = Vec::new();
    for e in std::fs::read_dir(dir).map_err(failed)? {
        let name = e.map_err(failed)?.file_name();
        if journal_file(&name.to_string_lossy()) {
            ours.push(dir.join(name));
        }
    }
    if !ours.is_empty() && !in_a_journal(&dir.join("journal.json")) {
        return Err(input(format!(
            "--journal {}: it holds {} but no iogauge journal: give a new or empty directory",
            dir.display(),
            ours[0].file_name().unwrap_or_default().to_string_lossy()
        )));
    }
    for p in ours {
        std::fs::remove_file(p).map_err(failed)?;
    }
    Ok(())
}

/// One worker's journal file.
pub struct JournalWriter {
    file: File,
    buf: Vec<u8>,
}

impl JournalWriter {
    /// Creates worker `worker`'s file in `dir`, room for `slots` I/Os' records per batch.
    pub fn create(dir: &Path, worker: usize, slots: usize) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_DSYNC | libc::O_CLOEXEC)
            .open(dir.join(format!("w{worker}.jnl")))?;
        // A batch holds at most one issue and one completion record per slot.
        Ok(JournalWriter { file, buf: Vec::with_capacity(2 * slots * RECORD) })
    }

    fn record(&mut self, tag: u8, target: u32, offset: u64, len: u32, entry: u64) {
        self.buf.extend_from_slice(&[tag, 0, 0, 0]);
        self.buf.extend_from_slice(&target.to_le_bytes());
        self.buf.extend_from_slice(&offset.to_le_bytes());
        self.buf.extend_from_slice(&len.to_le_bytes());
        self.buf.extend_from_slice(&[0; 4]);
        self.buf.extend_from_slice(&entry.to_le_bytes());
    }

    /// A write about to be issued.
    pub fn issued(&mut self, target: u32, offset: u64, len: u32, entry: u64) {
        self.record(ISSUED, target, offset, len, entry);
    }

    /// A write completed (`ok`) or failed.
    pub fn completed(&mut self, target: u32, offset: u64, len: u32, entry: u64, ok: bool) {
        self.record(if ok { COMPLETED } else { FAILED }, target, offset, len, entry);
    }

    /// Writes the records so far to stable storage.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

/// What a journal says of one target: the last completed write of each block, and the write
/// in flight on it when the journal ends (0: none).
pub struct Replayed {
    /// Completed writes.
    pub map: BlockMap,
    /// Writes issued but never seen complete, one entry per block.
    pub in_flight: Vec<u64>,
}

/// The most `journal.json` is read for: its runs are at most [`super::map::MAX_RUNS`], its
/// targets a test's.
const MAX_HEAD: u64 = 1 << 20;

/// A file of the journal, a regular file of at most `most` bytes (never a device or a FIFO
/// put in its place, read to no end).
fn read_regular(file: &Path, most: u64) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let f = File::open(file).map_err(|e| e.to_string())?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    f.take(most.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    match bytes.len() as u64 > most {
        true => Err(format!("larger than {most} bytes: not a journal's")),
        false => Ok(bytes),
    }
}

/// A target of `blocks` blocks of `block_bytes` is what the journal says: a file or device
/// that holds them (a network target is checked when it is read).
fn within_target(path: &str, blocks: u64, block_bytes: u64) -> std::result::Result<(), String> {
    if crate::engine::network::protocol_of(path).is_some() {
        return Ok(());
    }
    let size = crate::host::files::existing_size(Path::new(path)).map_err(|e| format!("target {path}: {e}"))?;
    match blocks <= size.div_ceil(block_bytes) {
        true => Ok(()),
        false => Err(format!("target {path}: {blocks} blocks of {block_bytes} bytes, and it holds {size} bytes")),
    }
}

/// Reads a journal directory back.
pub fn replay(dir: &Path) -> Result<Vec<Replayed>> {
    // A journal that cannot be read back is the user's to fix (the wrong directory, a copy
    // cut short): bad input.
    let bad = |why: String| input(format!("journal {}: {why}", dir.display()));
    let head_file = dir.join("journal.json");
    let text = read_regular(&head_file, MAX_HEAD).map_err(|e| bad(format!("journal.json: {e}")))?;
    let head: JournalHead = super::own_json(&text, SCHEMA).map_err(|e| bad(format!("journal.json: {e}")))?;
    let mut all = 0u64;
    for (path, blocks) in &head.targets {
        super::map::check_geometry(head.block_bytes, *blocks, head.runs.len())
            .map_err(|e| e.context(format!("journal {}: journal.json", dir.display())))?;
        all = all.saturating_add(*blocks);
        within_target(path, *blocks, head.block_bytes).map_err(|e| bad(format!("journal.json: {e}")))?;
    }
    // Each block costs 16 bytes here (its last write, one in flight): the bound of one map.
    if all > super::map::MAX_BLOCKS {
        return Err(bad(format!(
            "journal.json: {all} blocks in all: a journal holds at most {}",
            super::map::MAX_BLOCKS
        )));
    }
    let mut out: Vec<Replayed> = head
        .targets
        .iter()
        .map(|(path, blocks)| Replayed {
            map: BlockMap {
                path: path.clone(),
                block: head.block_bytes,
                runs: head.runs.clone(),
                entries: vec![0; *blocks as usize],
                target: None,
            },
            in_flight: vec![0; *blocks as usize],
        })
        .collect();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| bad(e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jnl"))
        .collect();
    files.sort();
    for f in files {
        let bytes = read_regular(&f, u64::MAX).map_err(|e| bad(format!("{}: {e}", f.display())))?;
        // A record cut short by the crash is ignored: its write was never issued.
        for r in bytes.chunks_exact(RECORD) {
            let target = u32::from_le_bytes(r[4..8].try_into().expect("4 bytes")) as usize;
            let offset = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
            let len = u32::from_le_bytes(r[16..20].try_into().expect("4 bytes")) as u64;
            let entry = u64::from_le_bytes(r[24..32].try_into().expect("8 bytes"));
            let Some(t) = out.get_mut(target) else {
                return Err(bad(format!(
                    "{}: a record names target {target}, journal.json has {}",
                    f.display(),
                    head.targets.len()
                )));
            };
            let first = (offset / head.block_bytes) as usize;
            let last = (offset.saturating_add(len) / head.block_bytes) as usize;
            if last > t.map.entries.len() || !super::map::valid_entry(entry, head.runs.len()) {
                return Err(bad(format!("{}: a record lies outside {}", f.display(), t.map.path)));
            }
            for b in first..last {
                match r[0] {
                    ISSUED => t.in_flight[b] = entry,
                    COMPLETED => (t.map.entries[b], t.in_flight[b]) = (entry, 0),
                    FAILED => (t.map.entries[b], t.in_flight[b]) = (UNKNOWN, 0),
                    tag => return Err(bad(format!("{}: unknown record tag {tag}", f.display()))),
                }
            }
        }
    }
    Ok(out)
}
