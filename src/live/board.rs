//! What the live servers show, kept between intervals: counters that only grow (every workload
//! finished, plus the running one), the response-time histogram of the recorded intervals, the
//! recent intervals as JSON lines, and where the test is.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use super::lines;
use crate::result::WorkloadResult;
use crate::run::{Counters, Phase, Progress, Snapshot};
use crate::stats::Op;

/// The upper bounds of the response-time histogram's buckets (s): Prometheus wants few, and
/// these hold the marks storage people read (100 µs flash, 20 ms the seeds' limit).
pub(super) const BUCKETS_S: [f64; 19] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// The intervals the page can ask for again (an hour at 1 s).
const RECENT: usize = 3600;

/// One series of the counts: manager, workload, worker, target, operation.
pub(super) type Key = (u32, String, String, String, Op);

/// Counted I/Os, bytes and errors.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Tally {
    pub(super) ios: u64,
    pub(super) bytes: u64,
    pub(super) errors: u64,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.errors += o.errors;
    }
}

/// Response times of the recorded intervals of one workload, in [`BUCKETS_S`] (the last
/// bucket is +Inf), with their sum.
#[derive(Debug, Clone, Default)]
pub(super) struct Latency {
    pub(super) buckets: [u64; BUCKETS_S.len() + 1],
    pub(super) sum_s: f64,
}

/// Where the test is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// Before the first interval (planning, making test files).
    Starting,
    Ramp,
    Recording,
    /// The command has ended; the servers show its last figures until they close.
    Ended,
}

impl State {
    pub(super) const ALL: [State; 4] = [State::Starting, State::Ramp, State::Recording, State::Ended];

    pub(super) fn name(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Ramp => "ramp",
            State::Recording => "recording",
            State::Ended => "ended",
        }
    }
}

/// Everything the board holds.
#[derive(Debug, Clone)]
pub(super) struct Figures {
    /// Every manager: rank and host.
    pub(super) managers: Vec<(u32, String)>,
    /// Counts of the workloads finished, exactly as their results have them.
    pub(super) done: BTreeMap<Key, Tally>,
    /// The running workload's counts so far (other managers', when this one's are read live).
    pub(super) running: Vec<(Key, Tally)>,
    /// Per workload.
    pub(super) latency: BTreeMap<String, Latency>,
    pub(super) state: State,
    /// The last interval's I/Os in flight and CPU utilisation of the hosts (%).
    pub(super) in_flight: u64,
    pub(super) host_cpu_pct: f64,
    /// The running phase's elapsed and total time (s).
    pub(super) phase_s: (f64, Option<f64>),
    pub(super) study: Option<Progress>,
    /// The recent intervals as JSON lines, numbered from 1.
    pub(super) recent: VecDeque<(u64, String)>,
    pub(super) seq: u64,
}

impl Figures {
    /// Every series' count now: the finished workloads' plus the running one's.
    pub(super) fn totals(&self) -> BTreeMap<Key, Tally> {
        let mut all = self.done.clone();
        for (k, t) in &self.running {
            *all.entry(k.clone()).or_default() += *t;
        }
        all
    }

    pub(super) fn host(&self, rank: u32) -> &str {
        self.managers.iter().find(|m| m.0 == rank).map_or("", |m| m.1.as_str())
    }
}

/// The figures every server reads, updated by the command's observer.
pub struct Board {
    figures: Mutex<Figures>,
    /// This manager's counts of the workload running, read at each scrape.
    running: Mutex<Option<Counters>>,
}

impl Board {
    /// An empty board for a test of these managers (rank, host).
    pub fn new(managers: Vec<(u32, String)>) -> Board {
        Board {
            figures: Mutex::new(Figures {
                managers,
                done: BTreeMap::new(),
                running: Vec::new(),
                latency: BTreeMap::new(),
                state: State::Starting,
                in_flight: 0,
                host_cpu_pct: 0.0,
                phase_s: (0.0, None),
                study: None,
                recent: VecDeque::new(),
                seq: 0,
            }),
            running: Mutex::new(None),
        }
    }

    fn counters(&self) -> MutexGuard<'_, Option<Counters>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A workload starts on this manager.
    pub fn workload_started(&self, counters: &Counters) {
        *self.counters() = Some(counters.clone());
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Figures> {
        // A server that panicked mid-read leaves figures that are still whole.
        self.figures.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes in an interval.
    pub fn interval(&self, s: &Snapshot) {
        let line = lines::line(s);
        // This manager's own counts are read when asked; the others' come with the intervals.
        let me = self.counters().as_ref().map(Counters::rank);
        let mut f = self.lock();
        f.running = s
            .counts
            .iter()
            .filter(|c| Some(c.manager) != me)
            .map(|c| {
                let key = (c.manager, s.workload.to_string(), c.worker.clone(), c.target.clone(), c.op);
                (key, Tally { ios: c.ios, bytes: c.bytes, errors: c.errors })
            })
            .collect();
        if s.phase == Phase::Run {
            if let Some(h) = &s.interval.histogram {
                let l = f.latency.entry(s.workload.to_string()).or_default();
                for (lo, hi, n) in h.buckets() {
                    let mid_s = (lo + hi) as f64 / 2e9;
                    let b = BUCKETS_S.iter().position(|&le| mid_s <= le).unwrap_or(BUCKETS_S.len());
                    l.buckets[b] += n;
                }
                l.sum_s += s.response_ns as f64 / 1e9;
            }
        }
        f.state = if s.phase == Phase::Run { State::Recording } else { State::Ramp };
        f.in_flight = s.in_flight;
        f.host_cpu_pct = s.interval.cpu_pct;
        f.phase_s = (s.elapsed_s, s.total_s);
        f.study = s.study.clone();
        f.seq += 1;
        let seq = f.seq;
        f.recent.push_back((seq, line));
        if f.recent.len() > RECENT {
            f.recent.pop_front();
        }
    }

    /// Takes in a finished workload: its result's counts replace the running ones (equal or
    /// more: the result also holds what completed after the last interval).
    pub fn workload_done(&self, r: &WorkloadResult) {
        *self.counters() = None;
        let mut f = self.lock();
        f.running.clear();
        for w in &r.workers {
            for t in &w.targets {
                for op in Op::ALL {
                    let d = t.metrics.raw.of(op);
                    if d.ios + d.errors > 0 {
                        let key = (w.manager, r.spec.clone(), w.name.clone(), t.path.clone(), op);
                        *f.done.entry(key).or_default() += Tally { ios: d.ios, bytes: d.bytes, errors: d.errors };
                    }
                }
            }
        }
    }

    /// A copy of the figures as they are now, this manager's counts read from its workers (a
    /// copy, so the monitor never waits for a scrape to be encoded).
    pub(super) fn now(&self) -> Figures {
        let mut figures = self.lock().clone();
        if let Some(counters) = self.counters().as_ref() {
            let w = counters.workload();
            figures.running.extend(counters.counts().into_iter().map(|c| {
                (
                    (c.manager, w.to_string(), c.worker, c.target, c.op),
                    Tally { ios: c.ios, bytes: c.bytes, errors: c.errors },
                )
            }));
        }
        figures
    }

    /// `/live.json?after=N`: the intervals after the N-th (as many as are kept), the last
    /// one's number and the state.
    pub fn since(&self, after: u64) -> Vec<u8> {
        let f = self.lock();
        let lines: Vec<&str> = f.recent.iter().filter(|(n, _)| *n > after).map(|(_, l)| l.as_str()).collect();
        format!("{{\"seq\":{},\"state\":\"{}\",\"lines\":[{}]}}", f.seq, f.state.name(), lines.join(",")).into_bytes()
    }

    /// The command has ended.
    pub fn ended(&self) {
        self.lock().state = State::Ended;
    }
}
