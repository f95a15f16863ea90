//! A worker: one thread, one access specification, its targets, and a fixed set of I/O slots
//! (outstanding I/Os x targets). Slot `s` belongs to target `s / outstanding`; when it completes
//! it is reissued on the same target, as Iometer does.
//!
//! The loop reads the clock once per wake-up, after reaping: that instant ends the response
//! time of every I/O reaped. Where the engine hands I/Os to the kernel as they are queued
//! (io_uring on files and devices: each in a system call of its own, `submit_batch = 1` as
//! fio's default, or each batch of N; not where they all go to io-wq from 8 outstanding on),
//! the clock is read again just before each I/O, and that starts its response time;
//! elsewhere the reading after the wait starts that of every I/O
//! issued before the next submit, counting the issuing of those before it (ns on the null
//! target, µs a system call where a round goes in one).
//! Nothing is allocated or locked per I/O: stats are the worker's own, and the live counters the
//! main thread reads are relaxed stores once per batch.
//!
//! By default each wait ends at the first completion (`completion_batch = 1`, as fio's
//! default), so an I/O is stamped when the worker first sees it: what it overstates is the
//! wake-up and the handling of the completions seen with it, not other I/Os' service times.
//! A larger batch saves wake-ups (CPU per I/O) and stamps an I/O reaped in a batch of `k` up to
//! `k - 1` completions late; the mean still obeys Little's law for the depth the application
//! keeps, and the document says the batch (docs/result-schema.md).

mod arrival;
mod control;
mod drive;
mod generator;
mod law;
pub mod log_chunks;
mod source;
mod state;

use std::sync::atomic::Ordering::Relaxed;
use std::time::{SystemTime, UNIX_EPOCH};

pub use control::{Control, Live, wake};
use drive::Loop;
use state::SetUp;
pub use state::{WorkerJob, WorkerOutcome};

use crate::engine;
use crate::error::runtime;
use crate::host::placement;
use crate::trace::replay::Replayer;

/// Runs a worker to the end of the test. Meets the main thread at the barrier twice whatever
/// happens, so a failed set-up never leaves anyone waiting.
pub fn run(mut job: WorkerJob, ctl: &Control) -> WorkerOutcome {
    let live = &ctl.live[job.index];
    live.thread_started();
    let checker = job.checker.take();
    let log = job.log.take();
    // Pinned before its buffers are allocated, so their pages come from its own node.
    let pinned = match job.plan.cpus.as_slice() {
        [] => Ok(()),
        cpus => placement::pin_thread(cpus)
            .map_err(|e| runtime(format!("{}: cannot run on CPUs {}: {e}", job.plan.name, placement::cpu_list(cpus)))),
    };
    let cpus = placement::thread_cpus().unwrap_or_default();
    let set_up = pinned.and_then(|_| SetUp::new(&job, checker)).map(|s| SetUp { log, ..s });
    if set_up.is_err() {
        ctl.failed.store(true, Relaxed);
    }
    ctl.barrier.wait();
    ctl.barrier.wait();
    // A worker that does no I/O hands back nothing but why.
    let idle = |error| WorkerOutcome { error, ..WorkerOutcome::default() };
    let mut s = match set_up {
        Ok(s) => s,
        Err(e) => return idle(Some(e)),
    };
    if ctl.failed.load(Relaxed) {
        // Another worker failed to set up and reports why; this one just does not run.
        return idle(None);
    }
    let epoch = *ctl.epoch.get().expect("epoch is set before the second meeting");
    if let Some(c) = &mut s.checker {
        let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        c.start(unix - epoch.elapsed().as_nanos() as u64);
    }
    let slots = s.meta.len();
    // SAFETY: pthread_self has no preconditions.
    live.thread.store(unsafe { libc::pthread_self() } as u64, Relaxed);
    let io_wq = engine::IoWqLimit { threads: job.io_wq_threads, cpus: job.plan.cpus.clone() };
    // A journaled write may reach its target only once the journal holds it on stable
    // storage, which the loop sees to once per round of issues: those go to the kernel together,
    // after it.
    let submit_batch = if s.checker.as_ref().is_some_and(|c| c.journals()) { usize::MAX } else { job.submit_batch };
    let resources =
        engine::Resources { targets: std::mem::take(&mut s.targets), regions: s.regions(), slots, io_wq, submit_batch };
    let driven = engine::drive(job.engine, resources, Loop { job: &job, s: &mut s, ctl, epoch });
    let (result, held) = match driven {
        Ok(d) => {
            if d.abandoned.pins_buffers {
                // The kernel may still write into them: never freed.
                std::mem::forget(s.read_buf.take());
                std::mem::forget(s.write_buf.take());
            }
            (d.output, d.abandoned.held)
        }
        Err(e) => (Err(e), Vec::new()),
    };
    live.thread.store(0, Relaxed);
    if let Some(log) = s.log.take() {
        log.finish();
    }
    live.thread_ending();
    // Release: a monitor that sees this worker finished sees all it counted.
    ctl.finished.fetch_add(1, std::sync::atomic::Ordering::Release);
    let lateness = s.replay.take().filter(Replayer::timed).map(|r| r.lateness);
    let (engine, last_ns, error) = match result {
        Ok((engine, last_ns)) => (engine, last_ns, None),
        Err(e) => {
            ctl.stop.store(true, Relaxed);
            // What the loop met while running (the engine, the journal, the trace).
            (String::new(), 0, Some(e.context(&job.plan.name)))
        }
    };
    WorkerOutcome {
        targets: s.stats,
        engine,
        last_ns,
        error,
        first_error: s.first_error,
        checker: s.checker,
        cpus,
        held,
        lateness,
    }
}
