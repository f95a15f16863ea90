//! The checks a verified test (`--verify`, `--journal`) must pass before its first I/O, and how
//! workers sharing a working set split it so each verifies its own blocks.

use super::{Share, WorkerPlan};
use crate::config::{Test, Worker, Workload};
use crate::error::{Result, input};
use crate::targets::fit::working_set;
use crate::targets::{NULL, TargetInfo, TargetKind};
use crate::units;
use crate::verify::map;

/// The largest map iogauge keeps in memory (8 bytes per block).
const MAX_MAP_BYTES: u64 = map::MAX_BLOCKS * 8;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Whether a worker works on real targets (a worker never mixes them with the null target).
fn real(w: &Worker) -> bool {
    w.targets.iter().any(|t| t != NULL)
}

/// Whether any workload writes to a real target: else there is nothing to verify.
fn writes_to_real(workers: &[Worker], workloads: &[Workload]) -> bool {
    workloads.iter().any(|r| workers.iter().zip(&r.specs).any(|(w, s)| real(w) && s.writes()))
}

/// Checks a verified test as a whole (every manager's workers): something must write to a real
/// target, and with several managers a journal needs `{rank}` in its path.
pub fn check_test(test: &Test, managers: usize) -> Result<()> {
    if !writes_to_real(&test.workers, &test.workloads) {
        return Err(input(
            "--verify: no worker writes to a real target, so there is nothing to check; \
                    run a test that writes (iogauge verify re-reads a target after one)",
        ));
    }
    if let Some(spec) = test.workloads.iter().flat_map(|r| &r.specs).find(|s| s.trims()) {
        return Err(input(format!(
            "--verify: specification '{}' trims, and what a trimmed block reads back is the device's choice \
             (zeroes, old data or anything), so it cannot be checked; verify a test without trims",
            spec.name
        )));
    }
    if let (Some(j), true) = (&test.settings.journal, managers > 1) {
        if !j.to_string_lossy().contains("{rank}") {
            return Err(input(format!(
                "--journal {}: {managers} managers would share it; put {{rank}} in the path so each keeps its own \
                 (e.g. --journal /safe/journal.{{rank}})",
                j.display()
            )));
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
pub fn block_size(share: &Share, targets: &[TargetInfo]) -> Result<Option<(u64, Vec<String>)>> {
    let (workers, runs) = (&share.workers, &share.workloads);
    if runs.len() > map::MAX_RUNS || workers.len() >= map::MAX_WORKERS {
        return Err(input(format!(
            "--verify tells apart at most {} runs and {} workers",
            map::MAX_RUNS,
            map::MAX_WORKERS - 1
        )));
    }
    if !writes_to_real(workers, runs) {
        return Ok(None);
    }
    let b = common_block(workers, runs)?;
    let (mut map_bytes, mut warnings) = (0, Vec::new());
    for t in targets.iter().filter(|t| t.kind != TargetKind::Null) {
        map_bytes += working_sets_apart(t, workers, runs, b, &mut warnings)?.div_ceil(b) * 8;
    }
    if map_bytes > MAX_MAP_BYTES {
        return Err(input(format!(
            "--verify keeps 8 bytes per {} block: {} for these working sets, more than {}; \
             use smaller working sets (working_set = ...) or larger transfers",
            units::human_size(b),
            units::human_size(map_bytes),
            units::human_size(MAX_MAP_BYTES)
        )));
    }
    Ok(Some((b, warnings)))
}

/// The largest block (a multiple of 512 bytes) dividing every transfer size, alignment, skip
/// and working-set start of the workers on real targets.
fn common_block(workers: &[Worker], runs: &[Workload]) -> Result<u64> {
    let mut b = 0;
    for r in runs {
        for (w, s) in workers.iter().zip(&r.specs).filter(|(w, _)| real(w)) {
            for l in s.lines.iter().filter(|l| l.share > 0) {
                b = gcd(b, gcd(gcd(l.size, l.largest()), l.align.unwrap_or(l.size)));
                b = gcd(b, l.skip.unsigned_abs());
            }
            b = gcd(b, w.offset);
        }
    }
    if b % 512 != 0 {
        return Err(input(format!(
            "--verify needs transfer sizes, alignments and offsets that are multiples of 512 bytes; these share only {b} bytes"
        )));
    }
    Ok(b)
}

/// Checks that the workers on target `t` either share one working set (each then verifies an
/// equal part of it, said in `warnings`) or use ones apart. Returns the end of the furthest
/// working set (the map's extent).
fn working_sets_apart(
    t: &TargetInfo,
    workers: &[Worker],
    runs: &[Workload],
    b: u64,
    warnings: &mut Vec<String>,
) -> Result<u64> {
    let sets: Vec<(usize, u64, u64)> = workers
        .iter()
        .enumerate()
        .filter(|(_, w)| w.targets.iter().any(|n| *n == t.path))
        .map(|(i, w)| working_set(t, w).map(|(s, n)| (i, s, s + n)))
        .collect::<Result<_>>()?;
    for (k, a) in sets.iter().enumerate() {
        if let Some(o) = sets[k + 1..].iter().find(|o| a.1 < o.2 && o.1 < a.2 && (a.1, a.2) != (o.1, o.2)) {
            return Err(input(format!(
                "--verify: workers {} and {} both use bytes {}..{} of {}; a verified test needs each worker's \
                 blocks to be its own: give them the same working set (each then verifies a part of it), \
                 or different ones that do not overlap",
                a.0 + 1,
                o.0 + 1,
                a.1.max(o.1),
                a.2.min(o.2),
                t.path
            )));
        }
    }
    for a in &sets {
        let same: Vec<usize> = sets.iter().filter(|o| (o.1, o.2) == (a.1, a.2)).map(|o| o.0).collect();
        if same.len() < 2 || same[0] != a.0 {
            continue;
        }
        let part = (a.2 - a.1) / same.len() as u64 / b * b;
        let largest = same.iter().flat_map(|&w| runs.iter().map(move |r| r.specs[w].max_transfer())).max().unwrap_or(0);
        let names: Vec<String> = same.iter().map(|w| (w + 1).to_string()).collect();
        if part < largest {
            return Err(input(format!(
                "--verify: workers {} share {} of {}; each verifies its own part of them, {}, \
                 smaller than a {} transfer: use a larger working set or fewer workers",
                names.join(", "),
                units::human_size(a.2 - a.1),
                t.path,
                units::human_size(part),
                units::human_size(largest)
            )));
        }
        warnings.push(format!(
            "--verify: workers {} share {}: each uses and verifies its own {} of the working set",
            names.join(", "),
            t.path,
            units::human_size(part)
        ));
    }
    Ok(sets.iter().map(|s| s.2).max().unwrap_or(0))
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
