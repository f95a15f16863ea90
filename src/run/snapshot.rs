//! One interval of a running test as every live consumer sees it (the live line, `--live-json`
//! lines, `/metrics`, the live page): made once by whatever keeps the clock, every manager's
//! figures added up, and handed to the [`Observer`](super::Observer).

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use serde::{Deserialize, Serialize};

use crate::result::Interval;
use crate::stats::Op;
use crate::worker::Control;

/// Which part of a run a snapshot describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Ramp-up: running, not recorded.
    Ramp,
    /// Recording.
    #[serde(rename = "recording")]
    Run,
}

/// One interval of a running workload.
#[derive(Debug, Clone)]
pub struct Snapshot<'a> {
    /// The workload running: its specification's name.
    pub workload: &'a str,
    /// Ramp-up or recording.
    pub phase: Phase,
    /// Seconds into the phase: since the workers started during ramp-up, since recording
    /// began after it.
    pub elapsed_s: f64,
    /// How long the phase lasts, when the test is timed.
    pub total_s: Option<f64>,
    /// The interval just ended, every manager together, as a result's `intervals[i]` (its
    /// `t_s` counts from the start of the phase).
    pub interval: Interval,
    /// I/Os completed in it (ramp-up's too), their bytes and the sum of their response times.
    pub ios: u64,
    /// Bytes of those I/Os.
    pub bytes: u64,
    /// Sum of their response times (ns).
    pub response_ns: u64,
    /// I/Os in flight at its end, every worker together.
    pub in_flight: u64,
    /// What the result counts so far in this workload (recorded I/Os and bytes, errors), per
    /// manager, worker, target and operation; rows with nothing counted are left out.
    pub counts: Vec<Count>,
    /// Where a study is, when the test is one of its points.
    pub study: Option<Progress>,
}

/// What one worker counted on one target for one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Count {
    /// Its manager's rank.
    pub manager: u32,
    /// The worker's name.
    pub worker: String,
    /// The target's path (or URL, `null`).
    pub target: String,
    /// The operation.
    pub op: Op,
    /// Successful I/Os recorded.
    pub ios: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Failed I/Os.
    pub errors: u64,
}

/// Where a study is: the point running, how many there are, and the time left.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// What the point is ("point 3 of 12: outstanding=8", "search oltp outstanding=16").
    pub label: String,
    /// The point running, from 1 (its index in the study document + 1).
    pub point: usize,
    /// How many points the study runs; None while a search decides.
    pub points: Option<usize>,
    /// The round, in a study that runs rounds until steady.
    pub round: Option<u32>,
    /// Since the study started (s).
    pub elapsed_s: f64,
    /// An estimate of the time left (s): the points to come at the pace of those done (or,
    /// before any is done, at their settings' time); None when the count is not known.
    pub left_s: Option<f64>,
}

/// This manager's counts of the workload running, readable at any moment (a scrape between two
/// intervals sees them as they are, not as the last interval left them).
#[derive(Clone)]
pub struct Counters {
    pub(super) ctl: Arc<Control>,
    /// Each worker's name and its targets' paths.
    pub(super) names: Arc<Vec<(String, Vec<String>)>>,
    /// This manager's rank.
    pub(super) rank: u32,
    /// The workload running.
    pub(super) workload: String,
}

impl Counters {
    /// This manager's rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The workload running.
    pub fn workload(&self) -> &str {
        &self.workload
    }

    /// Every worker's counts so far, per target and operation (rows with nothing counted left
    /// out).
    pub fn counts(&self) -> Vec<Count> {
        let mut rows = Vec::new();
        for (live, (worker, targets)) in self.ctl.live.iter().zip(self.names.iter()) {
            for (target, ops) in targets.iter().zip(live.recorded.iter()) {
                for (op, c) in Op::ALL.into_iter().zip(ops) {
                    let (ios, bytes, errors) = (c.ios.load(Relaxed), c.bytes.load(Relaxed), c.errors.load(Relaxed));
                    if ios + errors > 0 {
                        let (worker, target) = (worker.clone(), target.clone());
                        rows.push(Count { manager: self.rank, worker, target, op, ios, bytes, errors });
                    }
                }
            }
        }
        rows
    }
}
