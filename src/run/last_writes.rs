//! A verified test's state across its workloads: the last write of every block of every
//! target, handed to each worker's checker before a workload and taken back after it.

use std::path::PathBuf;

use crate::error::{Result, runtime};
use crate::plan::WorkerPlan;
use crate::targets::{TargetInfo, TargetKind};
use crate::verify::checker::{self, CheckerSpec, WorkingMap};
use crate::verify::journal::{self, JournalHead, JournalWriter};
use crate::verify::map::{BlockMap, TargetFacts};

/// A verified test's state across its runs: the last write of every block of every target.
pub struct Verification {
    block: u64,
    runs: Vec<u64>,
    /// Per target of the manager (None for the null target).
    maps: Vec<Option<Vec<u64>>>,
    paths: Vec<String>,
    /// What each target was at the start (a loop device may be detached by the end).
    facts: Vec<Option<TargetFacts>>,
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
        let paths = targets.iter().map(|t| t.path.clone()).collect();
        let facts = targets.iter().map(crate::targets::facts_of).collect();
        Verification { block, runs: Vec::new(), maps, paths, facts, journal }
    }

    /// Starts a run: numbers it (its start time, unique) and records it in the journal.
    pub fn start_workload(&mut self) -> Result<()> {
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
            head.save(dir).map_err(|e| runtime(format!("journal {}: {e}", dir.display())))?;
        }
        Ok(())
    }

    /// The checker of worker `worker` (index in the test) running `plan` with `slots` slots;
    /// None for a worker on the null target.
    pub fn checker(&self, worker: usize, plan: &WorkerPlan, slots: usize) -> Result<Option<checker::Checker>> {
        let mut maps = Vec::new();
        for ws in &plan.targets {
            let Some(all) = &self.maps[ws.target] else { return Ok(None) };
            let (first, end) = (ws.start / self.block, (ws.start + ws.size).div_ceil(self.block));
            maps.push(WorkingMap { first, entries: all[first as usize..end as usize].to_vec() });
        }
        let journal = match &self.journal {
            Some(dir) => Some(
                JournalWriter::create(dir, worker, slots)
                    .map_err(|e| runtime(format!("journal {}: {e}", dir.display())))?,
            ),
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

    /// The maps of every real target.
    pub fn maps(&self) -> Vec<BlockMap> {
        self.paths
            .iter()
            .zip(&self.maps)
            .zip(&self.facts)
            .filter_map(|((p, m), target)| {
                let entries = m.clone()?;
                let target = target.clone();
                Some(BlockMap { path: p.clone(), block: self.block, runs: self.runs.clone(), entries, target })
            })
            .collect()
    }
}
