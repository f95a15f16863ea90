//! A worker's state: the job it is given, what it hands back, and the resources it makes
//! before the start (targets open, buffers, generator, per-slot bookkeeping) so that the run
//! itself allocates nothing.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::generator::Generator;
use super::log_chunks;
use crate::config::{Arrivals, DataPattern};
use crate::content;
use crate::engine::{self, AlignedBuf, EngineKind};
use crate::error::{Error, Result, runtime};
use crate::plan::WorkerPlan;
use crate::stats::{Histogram, IoStats, Op};
use crate::targets::{self, TargetInfo};
use crate::trace::replay::Replayer;
use crate::verify::checker::Checker;

/// Everything a worker thread needs.
pub struct WorkerJob {
    /// Index among the test's workers (seeds its generator).
    pub index: usize,
    /// What to do.
    pub plan: WorkerPlan,
    /// Its targets, in plan order.
    pub targets: Vec<TargetInfo>,
    /// Engine for real targets.
    pub engine: EngineKind,
    /// Written data.
    pub data: DataPattern,
    /// Generator seed.
    pub seed: u64,
    /// Stop after issuing this many I/Os.
    pub ios_limit: Option<u64>,
    /// Stop after issuing this many bytes.
    pub bytes_limit: Option<u64>,
    /// Spacing of open-loop arrivals, when the plan has a rate.
    pub arrivals: Arrivals,
    /// Stop the whole test at the first failed I/O (`test.on_error = "stop"`).
    pub stop_on_error: bool,
    /// With `--verify`: stamps writes, checks reads.
    pub checker: Option<Checker>,
    /// Once the worker stops issuing, how long it waits for the I/Os still in flight before
    /// it gives them up as timed out (`test.io_timeout`).
    pub io_timeout: Duration,
    /// With `--log-dir`: every recorded completion, to the log's writer.
    pub log: Option<log_chunks::IoLog>,
    /// I/Os handed to the kernel in one system call (`test.submit_batch`).
    pub submit_batch: usize,
    /// Completions waited for at once (`test.completion_batch`).
    pub completion_batch: usize,
    /// Its I/Os spread over up to this many io-wq threads at once (`test.io_wq_threads`).
    pub io_wq_threads: Option<u32>,
}

/// A worker's first failed I/O.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FailedIo {
    /// Index of the target in the worker's plan.
    pub target: usize,
    /// Where it was.
    pub offset: u64,
    /// What it did.
    pub op: Op,
    /// errno (0: a short transfer).
    pub errno: i32,
    /// When it completed (ns from the epoch).
    pub at_ns: u64,
}

/// What a worker hands back (all empty: a worker that did no I/O).
#[derive(Default)]
pub struct WorkerOutcome {
    /// Stats per target, in plan order.
    pub targets: Vec<IoStats>,
    /// The engine and features used.
    pub engine: String,
    /// Time of the last recorded completion (ns from the epoch), for count-limited tests.
    pub last_ns: u64,
    /// Why the worker could not run or stopped, if it did.
    pub error: Option<Error>,
    /// Its first failed I/O, if any.
    pub first_error: Option<FailedIo>,
    /// Its verification state, maps and mismatches (with `--verify`).
    pub checker: Option<Checker>,
    /// The CPUs its thread ran on (its affinity).
    pub cpus: Vec<u32>,
    /// Targets (plan order) on which I/Os it gave up still wait in the kernel's io-wq threads
    /// for a filesystem that does not answer: its thread cannot end, nor the process exit,
    /// until they do.
    pub held: Vec<usize>,
    /// A replay at the trace's times: how late each I/O was issued against its schedule (ns).
    pub lateness: Option<Histogram>,
}

/// Per-slot bookkeeping.
#[derive(Clone, Copy, Default)]
pub(super) struct SlotMeta {
    pub(super) submit_ns: u64,
    /// The worker's count of I/Os issued before this one: I/Os issued in one batch share
    /// `submit_ns`, and a target that stops answering is best named by the first it never
    /// answered.
    pub(super) issued: u64,
    pub(super) offset: u64,
    pub(super) len: u32,
    pub(super) target: u32,
    pub(super) op: Op,
}

/// A worker's resources, made before the start so the run itself allocates nothing.
pub(super) struct SetUp {
    /// The targets, open, until the engine takes them.
    pub(super) targets: Vec<engine::Target>,
    pub(super) generator: Generator,
    pub(super) read_buf: Option<AlignedBuf>,
    pub(super) write_buf: Option<AlignedBuf>,
    /// What each write's blocks hold (None: alike by design, or no write buffer).
    pub(super) blocks: Option<content::Blocks>,
    pub(super) max_size: usize,
    pub(super) meta: Vec<SlotMeta>,
    pub(super) stats: Vec<IoStats>,
    pub(super) first_error: Option<FailedIo>,
    pub(super) checker: Option<Checker>,
    pub(super) log: Option<log_chunks::IoLog>,
    /// The trace it replays, if it does: it says what each I/O is instead of the generator.
    pub(super) replay: Option<Replayer>,
}

impl SetUp {
    pub(super) fn new(job: &WorkerJob, checker: Option<Checker>) -> Result<Self> {
        let spec = &job.plan.spec;
        let writes = spec.writes();
        let opened: Vec<engine::Target> =
            job.targets.iter().map(|t| targets::open(t, writes, job.io_timeout)).collect::<Result<_>>()?;
        let null = opened.iter().all(|t| matches!(t, engine::Target::Null));
        let slots = job.plan.outstanding as usize * job.targets.len();
        let max_size = spec.max_transfer() as usize;
        let reads = spec.lines.iter().any(|l| l.share > 0 && l.read > 0);
        // Verified writes are stamped in their slot's own buffer, so verification needs one
        // even for a test without reads.
        let read_buf = (!null && (reads || checker.is_some())).then(|| AlignedBuf::new(slots * max_size));
        // A write's data is in its slot's own part of the write buffer, made its blocks
        // (`content::Blocks`) when issued, while no other I/O uses it; blocks alike by design
        // (a repeated byte, zeros) are filled in once. Every run's blocks are its own, on every
        // worker and rank: a store that dedupes must not find them written before.
        let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let salt = unix ^ (u64::from(std::process::id()) << 40) ^ ((job.index as u64) << 20);
        let blocks = (!null && writes).then(|| content::Blocks::new(job.data, salt)).flatten();
        let write_buf = (!null && writes).then(|| {
            let mut b = AlignedBuf::new(slots * max_size);
            if blocks.is_none() {
                content::fill(b.as_mut_slice(), job.data.content, job.seed);
            }
            b
        });
        let replay = match &job.plan.replay {
            Some((r, summary)) => {
                let (ws, block) = (&job.plan.targets[0], job.targets[0].logical_block);
                Some(Replayer::new(r, summary, ws.start, ws.size, block).map_err(|e| runtime(e.to_string()))?)
            }
            None => None,
        };
        Ok(SetUp {
            replay,
            targets: opened,
            generator: Generator::new(spec, &job.plan, &job.targets, job.seed.wrapping_add(job.index as u64)),
            read_buf,
            write_buf,
            blocks,
            max_size,
            meta: vec![SlotMeta::default(); slots],
            stats: vec![IoStats::default(); job.targets.len()],
            first_error: None,
            checker,
            log: None,
        })
    }

    /// Buffer regions in registration order: 0 = read slots, 1 = write data.
    pub(super) fn regions(&self) -> Vec<(*mut u8, usize)> {
        let r = |b: &Option<AlignedBuf>| b.as_ref().map_or((std::ptr::null_mut(), 0), |b| (b.as_ptr(), b.len()));
        let (read, write) = (r(&self.read_buf), r(&self.write_buf));
        match (read.1, write.1) {
            (0, 0) => vec![],
            // Registration needs non-empty regions: an unused one borrows the other's memory.
            (0, _) => vec![write, write],
            (_, 0) => vec![read],
            _ => vec![read, write],
        }
    }
}
