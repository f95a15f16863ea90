//! The managers of an MPI job: one per rank of `MPI_COMM_WORLD` (built with `--features mpi`).
//!
//! Collectives are blocking and called only from the main thread (`MPI_THREAD_FUNNELED`). A
//! watchdog thread bounds each wait: a rank that hangs (a device that stopped answering) would
//! otherwise hold every other rank in a collective for ever. When the watchdog fires it names
//! the step and leaves without `MPI_Finalize`, which makes the launcher stop every rank. A rank
//! that dies is seen by the launcher itself, which stops the others and names it.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::{Group, Manager};
use crate::error::{Result, runtime};

/// MPI's world, the managers, and the watchdog over every collective.
pub struct Mpi {
    // Dropped last: finalises MPI.
    _universe: Universe,
    world: SimpleCommunicator,
    managers: Vec<Manager>,
    me: usize,
    watchdog: Watchdog,
}

impl Mpi {
    /// Initialises MPI and learns every rank's host name. `MPI_Init` waits for every rank to
    /// start (its exchange of addresses): the watchdog bounds that wait too, so a rank that
    /// never starts (stopped, its host frozen) holds no other for ever.
    pub fn init(timeout: Duration) -> Result<Mpi> {
        let host = crate::host::name();
        // The launcher's rank, until MPI's own is known (they are the same).
        let rank = super::launched_rank().unwrap_or(0);
        let watchdog = Watchdog::start(Manager { rank, host: host.clone() }, timeout);
        let universe = {
            let _armed = watchdog.arm("start-up", Some(timeout));
            mpi::initialize_with_threading(mpi::Threading::Funneled)
                .ok_or_else(|| runtime("MPI was already initialised"))?
                .0
        };
        let world = universe.world();
        let me = world.rank() as usize;
        let mut mpi = Mpi { _universe: universe, world, managers: Vec::new(), me, watchdog };
        let names = mpi.gather_bytes(host.as_bytes(), "start-up", Some(timeout));
        mpi.managers = names
            .into_iter()
            .enumerate()
            .map(|(rank, name)| Manager { rank: rank as u32, host: String::from_utf8_lossy(&name).into_owned() })
            .collect();
        Ok(mpi)
    }

    fn gather_bytes(&self, bytes: &[u8], step: &str, timeout: Option<Duration>) -> Vec<Vec<u8>> {
        let _armed = self.watchdog.arm(step, timeout);
        let n = self.world.size() as usize;
        let mut counts = vec![0i32; n];
        self.world.all_gather_into(&(bytes.len() as i32), &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut parts = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(bytes, &mut parts);
        }
        counts.iter().zip(&displs).map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec()).collect()
    }
}

impl Group for Mpi {
    fn me(&self) -> &Manager {
        &self.managers[self.me]
    }
    fn all(&self) -> &[Manager] {
        &self.managers
    }
    fn barrier(&self, step: &str) {
        let _armed = self.watchdog.arm(step, Some(self.watchdog.timeout));
        self.world.barrier();
    }
    fn all_gather(&self, bytes: &[u8], step: &str, timeout: Option<Duration>) -> Vec<Vec<u8>> {
        self.gather_bytes(bytes, step, timeout)
    }
    fn sum(&self, values: &[u64], step: &str) -> Vec<u64> {
        self.all_reduce(values, step, SystemOperation::sum())
    }
    fn max(&self, values: &[u64], step: &str) -> Vec<u64> {
        self.all_reduce(values, step, SystemOperation::max())
    }
}

impl Mpi {
    fn all_reduce(&self, values: &[u64], step: &str, op: SystemOperation) -> Vec<u64> {
        let _armed = self.watchdog.arm(step, Some(self.watchdog.timeout));
        let mut out = vec![0u64; values.len()];
        self.world.all_reduce_into(values, &mut out[..], op);
        out
    }
}

/// Leaves the process when a collective waits longer than its limit.
struct Watchdog {
    armed: Arc<(Mutex<Option<Deadline>>, Condvar)>,
    timeout: Duration,
}

/// When the collective now waited for must have returned: its step, and its limit (for the message).
struct Deadline {
    at: Instant,
    step: String,
    limit: Duration,
}

/// Disarms the watchdog when the collective returns.
struct Armed<'a>(&'a Watchdog);

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        let (lock, cv) = &*self.0.armed;
        *lock.lock().expect("watchdog lock") = None;
        cv.notify_one();
    }
}

impl Watchdog {
    fn start(me: Manager, timeout: Duration) -> Watchdog {
        let armed: Arc<(Mutex<Option<Deadline>>, Condvar)> = Arc::default();
        let shared = Arc::clone(&armed);
        std::thread::Builder::new()
            .name("iogauge-watchdog".into())
            .spawn(move || {
                let (lock, cv) = &*shared;
                let mut g = lock.lock().expect("watchdog lock");
                loop {
                    g = match &*g {
                        None => cv.wait(g).expect("watchdog lock"),
                        Some(Deadline { at, step, limit }) => {
                            let now = Instant::now();
                            if now >= *at {
                                say!(
                                    "{me}: no answer from the other managers within {} at {step}; stopping every manager (one hung, or its host is unreachable)",
                                    humantime::format_duration(*limit)
                                );
                                // SAFETY: _exit ends the process at once; nothing is shared
                                // with code that could run after it. Skipping MPI_Finalize is
                                // what makes the launcher stop the other ranks.
                                unsafe { libc::_exit(1) };
                            }
                            let left = *at - now;
                            cv.wait_timeout(g, left).expect("watchdog lock").0
                        }
                    }
                }
            })
            .expect("spawn the watchdog thread");
        Watchdog { armed, timeout }
    }

    fn arm(&self, step: &str, limit: Option<Duration>) -> Option<Armed<'_>> {
        let limit = limit?;
        let (lock, cv) = &*self.armed;
        *lock.lock().expect("watchdog lock") =
            Some(Deadline { at: Instant::now() + limit, step: step.to_string(), limit });
        cv.notify_one();
        Some(Armed(self))
    }
}
