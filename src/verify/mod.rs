//! Data verification (`--verify`, `--journal`, `iogauge verify`).
//!
//! Every block a verified test writes carries a header naming the write and a checksum
//! ([`block`]); workers check what they read back ([`checker`]); the test leaves a map of the
//! last write of every block ([`map`]), and with `--journal` a record of every write made
//! before it is issued ([`journal`]), so a target can be re-read and checked later, even after
//! a crash ([`check_target`]).

pub mod block;
pub mod checker;
mod crc32c;
pub mod journal;
pub mod map;

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{Run, TestConfig};
use crate::engine::AlignedBuf;
use crate::plan::WorkerPlan;
use crate::targets::{TargetInfo, TargetKind};
use block::{HEADER_BYTES, Mismatch};
use checker::{CheckerSpec, WorkingMap};
use journal::{JournalHead, JournalWriter};
use map::BlockMap;

/// The largest map iogauge keeps in memory (8 bytes per block).
const MAX_MAP_BYTES: u64 = 1 << 30;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Whether a worker works on real targets (a worker never mixes them with the null target).
fn real(w: &crate::config::WorkerConfig) -> bool {
    w.targets.iter().any(|t| t != crate::targets::NULL)
}

/// Whether any run writes to a real target: else there is nothing to verify.
fn writes_to_real(config: &TestConfig, runs: &[Run]) -> bool {
    runs.iter().any(|r| config.workers.iter().zip(&r.specs).any(|(w, s)| real(w) && s.writes()))
}

/// Checks a verified test as a whole (every manager's workers): something must write to a real
/// target, and with several managers a journal needs `{rank}` in its path.
pub fn check_test(job: &TestConfig, runs: &[Run], managers: usize) -> Result<(), String> {
    if !writes_to_real(job, runs) {
        return Err("--verify: no worker writes to a real target, so there is nothing to check; \
                    run a test that writes (iogauge verify re-reads a target after one)"
            .into());
    }
    if let (Some(j), true) = (&job.test.journal, managers > 1) {
        if !j.to_string_lossy().contains("{rank}") {
            return Err(format!(
                "--journal {}: {managers} managers would share it; put {{rank}} in the path so each keeps its own \
                 (e.g. --journal /safe/journal.{{rank}})",
                j.display()
            ));
        }
    }
    Ok(())
}

/// The block size of this manager's part of a verified test (None if it writes to no real
/// target): the largest that divides every transfer size and
/// alignment of a worker on a real target, and every working set's start; and warnings.
/// Workers given the same working set of a target (`--workers N`) will each verify their own
/// part of it ([`split_shared`]); a test whose workers overlap otherwise is refused, as is one
/// whose maps would not fit in memory.
pub fn block_size(
    config: &TestConfig,
    runs: &[Run],
    targets: &[TargetInfo],
) -> Result<Option<(u64, Vec<String>)>, String> {
    if runs.len() > map::MAX_RUNS || config.workers.len() >= map::MAX_WORKERS {
        return Err(format!(
            "--verify tells apart at most {} runs and {} workers",
            map::MAX_RUNS,
            map::MAX_WORKERS - 1
        ));
    }
    if !writes_to_real(config, runs) {
        return Ok(None);
    }
    let mut b = 0;
    for r in runs {
        for (w, s) in config.workers.iter().zip(&r.specs) {
            if !real(w) {
                continue;
            }
            for l in s.lines.iter().filter(|l| l.share > 0) {
                b = gcd(b, gcd(l.size, l.align.unwrap_or(l.size)));
            }
            b = gcd(b, w.offset);
        }
    }
    if b % 512 != 0 {
        return Err(format!(
            "--verify needs transfer sizes, alignments and offsets that are multiples of 512 bytes; these share only {b}"
        ));
    }
    let (mut map_bytes, mut warnings) = (0, Vec::new());
    for t in targets.iter().filter(|t| t.kind != TargetKind::Null) {
        let sets: Vec<(usize, u64, u64)> = config
            .workers
            .iter()
            .enumerate()
            .filter(|(_, w)| w.targets.contains(&t.path))
            .map(|(i, w)| crate::plan::working_set(t, w).map(|(s, n)| (i, s, s + n)))
            .collect::<Result<_, _>>()?;
        for (k, a) in sets.iter().enumerate() {
            if let Some(o) = sets[k + 1..].iter().find(|o| a.1 < o.2 && o.1 < a.2 && (a.1, a.2) != (o.1, o.2)) {
                return Err(format!(
                    "--verify: workers {} and {} both use bytes {}..{} of {}; a verified test needs each worker's \
                     blocks to be its own: give them the same working set (each then verifies a part of it), \
                     or different ones that do not overlap",
                    a.0 + 1,
                    o.0 + 1,
                    a.1.max(o.1),
                    a.2.min(o.2),
                    t.path
                ));
            }
        }
        for a in &sets {
            let same: Vec<usize> = sets.iter().filter(|o| (o.1, o.2) == (a.1, a.2)).map(|o| o.0).collect();
            if same.len() < 2 || same[0] != a.0 {
                continue;
            }
            let part = (a.2 - a.1) / same.len() as u64 / b * b;
            let largest =
                same.iter().flat_map(|&w| runs.iter().map(move |r| r.specs[w].max_transfer())).max().unwrap_or(0);
            let names: Vec<String> = same.iter().map(|w| (w + 1).to_string()).collect();
            if part < largest {
                return Err(format!(
                    "--verify: workers {} share {} bytes of {}; each verifies its own part of them, {part} bytes, \
                     smaller than a {largest}-byte transfer: use a larger working set or fewer workers",
                    names.join(", "),
                    a.2 - a.1,
                    t.path
                ));
            }
            warnings.push(format!(
                "--verify: workers {} share {}: each uses and verifies its own {part} bytes of the working set",
                names.join(", "),
                t.path
            ));
        }
        map_bytes += sets.iter().map(|s| s.2).max().unwrap_or(0).div_ceil(b) * 8;
    }
    if map_bytes > MAX_MAP_BYTES {
        return Err(format!(
            "--verify keeps 8 bytes per {b}-byte block: {map_bytes} bytes for these working sets, more than {MAX_MAP_BYTES}; \
             use smaller working sets (working_set = ...) or larger transfers"
        ));
    }
    Ok(Some((b, warnings)))
}

/// Gives each worker of a group sharing the same working set of a target its own equal part
/// of it (block-aligned; the last takes what is left), so verified workers never share blocks.
pub fn split_shared(plans: &mut [WorkerPlan], block: u64) {
    let sets: Vec<(usize, usize, usize, u64, u64)> = plans
        .iter()
        .enumerate()
        .flat_map(|(p, plan)| plan.targets.iter().enumerate().map(move |(k, ws)| (p, k, ws.target, ws.start, ws.size)))
        .collect();
    for &(_, _, target, start, size) in &sets {
        let group: Vec<&(usize, usize, usize, u64, u64)> =
            sets.iter().filter(|s| (s.2, s.3, s.4) == (target, start, size)).collect();
        if group.len() < 2 || plans[group[0].0].targets[group[0].1].size != size {
            continue; // alone, or already split
        }
        let part = size / group.len() as u64 / block * block;
        for (i, &&(p, k, ..)) in group.iter().enumerate() {
            let ws = &mut plans[p].targets[k];
            ws.start = start + i as u64 * part;
            ws.size = if i + 1 == group.len() { size - i as u64 * part } else { part };
        }
    }
}

/// A verified test's state across its runs: the last write of every block of every target.
pub struct Verification {
    block: u64,
    runs: Vec<u64>,
    /// Per target of the manager (None for the null target).
    maps: Vec<Option<Vec<u64>>>,
    paths: Vec<String>,
    journal: Option<PathBuf>,
}

impl Verification {
    /// Starts a verified test on `targets`, whose runs' plans are `plans`, journaled in
    /// `journal` (emptied by [`journal::start`] when the test was prepared).
    pub fn new(block: u64, targets: &[TargetInfo], plans: &[Vec<WorkerPlan>], journal: Option<PathBuf>) -> Self {
        let maps = (0..targets.len())
            .map(|t| {
                let end = plans.iter().flatten().flat_map(|p| &p.targets).filter(|ws| ws.target == t);
                let end = end.map(|ws| ws.start + ws.size).max().unwrap_or(0);
                (targets[t].kind != TargetKind::Null).then(|| vec![0; end.div_ceil(block) as usize])
            })
            .collect();
        Verification { block, runs: Vec::new(), maps, paths: targets.iter().map(|t| t.path.clone()).collect(), journal }
    }

    /// Starts a run: numbers it (its start time, unique) and records it in the journal.
    pub fn start_run(&mut self) -> Result<(), String> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        self.runs.push(now.max(self.runs.last().map_or(0, |l| l + 1)));
        if let Some(dir) = &self.journal {
            let head = JournalHead {
                schema: journal::SCHEMA.into(),
                block_bytes: self.block,
                targets: self
                    .paths
                    .iter()
                    .zip(&self.maps)
                    .map(|(p, m)| (p.clone(), m.as_ref().map_or(0, |m| m.len() as u64)))
                    .collect(),
                runs: self.runs.clone(),
            };
            head.save(dir).map_err(|e| format!("journal {}: {e}", dir.display()))?;
        }
        Ok(())
    }

    /// The checker of worker `worker` (index in the test) running `plan` with `slots` slots;
    /// None for a worker on the null target.
    pub fn checker(&self, worker: usize, plan: &WorkerPlan, slots: usize) -> Result<Option<checker::Checker>, String> {
        let mut maps = Vec::new();
        for ws in &plan.targets {
            let Some(all) = &self.maps[ws.target] else { return Ok(None) };
            let (first, end) = (ws.start / self.block, (ws.start + ws.size).div_ceil(self.block));
            maps.push(WorkingMap { first, entries: all[first as usize..end as usize].to_vec() });
        }
        let journal = match &self.journal {
            Some(dir) => {
                Some(JournalWriter::create(dir, worker, slots).map_err(|e| format!("journal {}: {e}", dir.display()))?)
            }
            None => None,
        };
        let spec = CheckerSpec {
            block: self.block,
            run_index: self.runs.len() - 1,
            runs: self.runs.clone(),
            worker: worker as u32,
            targets: plan.targets.iter().map(|ws| (self.paths[ws.target].clone(), ws.target as u32)).collect(),
            maps,
            journal,
        };
        Ok(Some(checker::Checker::new(spec, slots)))
    }

    /// Takes back a worker's maps after a run.
    pub fn absorb(&mut self, plan: &WorkerPlan, c: &checker::Checker) {
        for (ws, m) in plan.targets.iter().zip(&c.maps) {
            if let Some(all) = &mut self.maps[ws.target] {
                let first = m.first as usize;
                all[first..first + m.entries.len()].copy_from_slice(&m.entries);
            }
        }
    }

    /// Bytes per block.
    pub fn block(&self) -> u64 {
        self.block
    }

    /// The maps of every real target.
    pub fn maps(&self) -> Vec<BlockMap> {
        self.paths
            .iter()
            .zip(&self.maps)
            .filter_map(|(p, m)| {
                let entries = m.clone()?;
                Some(BlockMap { path: p.clone(), block: self.block, runs: self.runs.clone(), entries })
            })
            .collect()
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

/// Re-reads `map.path` and checks every block against the last write `map` records there;
/// `in_flight` (from a journal) names writes that may or may not have landed.
pub fn check_target(map: &BlockMap, in_flight: Option<&[u64]>) -> Result<TargetCheck, String> {
    let path = &map.path;
    let open = |flags| std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path);
    // O_DIRECT, so the storage is read and not a cached copy; tmpfs and the like refuse it.
    let file = open(libc::O_DIRECT).or_else(|_| open(0)).map_err(|e| format!("target {path}: cannot open: {e}"))?;
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
        read_exact_at(&file, bytes, at).map_err(|e| format!("target {path}: reading at offset {at}: {e}"))?;
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

fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}
