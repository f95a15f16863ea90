//! The main thread during a run: the clock (ramp-up, recording, interval samples, CPU), the
//! [`Snapshot`] of each interval it gives the [`Observer`], and the stop (time, count, Ctrl-C,
//! a stalled target).

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant, SystemTime};

use super::device_time::{self, DeviceCount};
use super::snapshot::{Count, Counters, Phase, Snapshot};
use crate::config::TestSettings;
use crate::host::cpu::{self, CpuSnapshot, CpuWaits};
use crate::host::stops::Stops;
use crate::managers::Group;
use crate::result::{DeviceTime, Interval, WorkloadResult, percentiles_of};
use crate::stats::Histogram;
use crate::stats::histogram::LIVE_BUCKETS;
use crate::worker::{Control, Live};

/// What a running test tells the outside, and the one thing it asks of it (ripgrep's `Sink`):
/// each interval, the end of each workload, and whether the user asked to stop. A study's
/// observer also hears of each point (`study::run::StudyObserver`).
pub trait Observer {
    /// A workload starts: this manager's counts, which may be read at any time until it ends.
    fn workload_started(&mut self, _counters: &Counters) {}
    /// Once per interval, every manager's figures added up.
    fn interval(&mut self, _snapshot: &Snapshot) {}
    /// A workload has ended: its result, every manager's parts merged.
    fn run_done(&mut self, _result: &WorkloadResult) {}
    /// Whether the user asked to stop (Ctrl-C, SIGTERM): the workload running stops at once,
    /// and the result, marked interrupted, holds what was measured. Asked every few ms.
    fn stop_requested(&self) -> bool {
        false
    }
    /// Whether a study's point is to stop at once too, as a run does (SIGTERM, SIGHUP, the
    /// workbench's Stop), rather than run to its end; its result, marked interrupted, is kept.
    fn stop_point_requested(&self) -> bool {
        self.stop_now_requested()
    }
    /// Whether the user asked again: the workload (a study's point too) stops at once, the
    /// I/Os still in flight are given up without waiting io_timeout (each counts as timed
    /// out), and what was measured is kept.
    fn stop_now_requested(&self) -> bool {
        false
    }
}

/// Shows nothing, never stops early.
pub struct Silent;

impl Observer for Silent {}

#[derive(Debug, Clone, Default)]
struct Sums {
    /// Every completion, ramp-up included.
    ios: u64,
    bytes: u64,
    /// The completions recorded (as the result counts them: by their own time against the
    /// window), so recording's samples add up to the result exactly.
    recorded_ios: u64,
    recorded_bytes: u64,
    response_ns: u64,
    /// Every worker's response-time histogram, added up (LIVE_BUCKETS counts).
    latency: Vec<u64>,
}

fn sum_live(live: &[Live]) -> Sums {
    let mut s = Sums { latency: vec![0; LIVE_BUCKETS], ..Sums::default() };
    for l in live {
        s.ios += l.ios.load(Relaxed);
        s.bytes += l.bytes.load(Relaxed);
        s.response_ns += l.response_ns.load(Relaxed);
        l.latency.add_to(&mut s.latency);
        for c in l.recorded.iter().flatten() {
            s.recorded_ios += c.ios.load(Relaxed);
            s.recorded_bytes += c.bytes.load(Relaxed);
        }
    }
    s
}

/// The interval samples, the last one made up so that they sum to `ios` and `bytes`, the
/// totals. Samples read the running counters, which can disagree with the totals at the end
/// either way: a worker's already hold the I/Os completed between the end of recording and
/// the monitor's last look (the totals, kept by each completion's own timestamp, do not); a
/// file-system thread stopped by Ctrl-C finishes the record it had begun after that look
/// (the totals count it).
pub(super) fn reconciled(intervals: &[Interval], ios: u64, bytes: u64) -> Vec<Interval> {
    let mut out = intervals.to_vec();
    let Some((last, before)) = out.split_last_mut() else { return out };
    let (seen_ios, seen_bytes) =
        before.iter().fold((0.0, 0.0), |(i, b), iv| (i + iv.iops * iv.duration_s, b + iv.mbps * 1e6 * iv.duration_s));
    let dt = last.duration_s;
    last.iops = (ios as f64 - seen_ios).max(0.0) / dt;
    last.mbps = (bytes as f64 - seen_bytes).max(0.0) / dt / 1e6;
    out
}

/// Every worker's recorded I/Os and bytes so far.
pub(super) fn recorded(live: &[Live]) -> (u64, u64) {
    let s = sum_live(live);
    (s.recorded_ios, s.recorded_bytes)
}

/// A point of the monitor's timeline.
#[derive(Debug, Clone)]
pub(super) struct Mark {
    pub(super) at_ns: u64,
    sums: Sums,
    pub(super) cpu: CpuSnapshot,
    /// Each worker's waits for a CPU so far, where the kernel counts them: read only for a
    /// mark that may bound recording (empty in the others).
    cpu_waits: Vec<Option<CpuWaits>>,
    /// Each target's block-device counters, read with `cpu_waits` (none for a target that is
    /// no block device).
    devices: Vec<Option<DeviceCount>>,
}

/// The counters now, stamped `at_ns`.
pub(super) fn mark(live: &[Live], at_ns: u64) -> Mark {
    Mark { at_ns, sums: sum_live(live), cpu: cpu::snapshot(), cpu_waits: Vec::new(), devices: Vec::new() }
}

/// [`mark`], with the workers' waits for a CPU and the counters of the targets' block devices
/// (`devices`, each target's `st_rdev`), read after the workers' counters, and the kernel's
/// threads' CPU time: a mark that may start recording.
pub(super) fn bounding_mark(live: &[Live], devices: &[Option<u64>], at_ns: u64) -> Mark {
    let mut m = mark(live, at_ns);
    (m.cpu_waits, m.devices) = bounds(live, devices);
    // After the counters read with the mark: a scan of /proc takes some ms.
    m.cpu.read_kernel_threads();
    m
}

/// What a mark bounding recording holds beside the workers' counters.
fn bounds(live: &[Live], devices: &[Option<u64>]) -> (Vec<Option<CpuWaits>>, Vec<Option<DeviceCount>>) {
    (live.iter().map(Live::cpu_waits).collect(), device_time::read_all(devices))
}

/// A run's timing: interval, ramp-up and recorded time (a counted test's `max_time`, or
/// u64::MAX).
pub(super) struct Clock {
    pub(super) interval_ns: u64,
    pub(super) ramp_ns: u64,
    pub(super) time_ns: u64,
    /// The run ends on a count of I/Os or bytes (at `time_ns` at the latest).
    counted: bool,
    /// How long a timed run's managers wait for one another at a boundary (`sync_timeout`).
    meeting_timeout: Option<Duration>,
}

impl Clock {
    /// The timing `s` asks for: a test that ends on a count has no ramp-up, and no time limit
    /// but its `max_time`.
    pub(super) fn of(s: &TestSettings) -> Clock {
        let counted = s.counted();
        let limit = s.max_time.map_or(u64::MAX, |t| t.as_nanos() as u64);
        Clock {
            interval_ns: s.interval.as_nanos() as u64,
            ramp_ns: if counted { 0 } else { s.ramp.as_nanos() as u64 },
            time_ns: if counted { limit } else { s.time.as_nanos() as u64 },
            counted,
            meeting_timeout: Some(s.sync_timeout),
        }
    }

    /// The timing of threads that each run to their own end (a file-system test): samples
    /// every `interval`, no ramp-up, no time limit.
    pub(super) fn until_done(interval: Duration) -> Clock {
        Clock {
            interval_ns: interval.as_nanos() as u64,
            ramp_ns: 0,
            time_ns: u64::MAX,
            counted: true,
            meeting_timeout: None,
        }
    }

    /// Whether the run ends at a time (else on a count of I/Os or bytes).
    pub(super) fn timed(&self) -> bool {
        !self.counted
    }
}

/// What the monitor saw: the marks at the start and end of recording, the samples between,
/// and the wall-clock time recording started.
pub(super) struct Window {
    pub(super) start: Mark,
    pub(super) end: Mark,
    pub(super) intervals: Vec<Interval>,
    pub(super) started_at: SystemTime,
    /// The process's stops while recording (Ctrl-Z, SIGSTOP).
    pub(super) stops: Stops,
}

impl Window {
    /// The window of a run that never started (a worker failed to set up).
    pub(super) fn empty(live: &[Live]) -> Window {
        Window {
            start: mark(live, 0),
            end: mark(live, 0),
            intervals: Vec::new(),
            started_at: SystemTime::now(),
            stops: Stops::default(),
        }
    }

    /// Worker `i`'s waits for a CPU while recording (a timed run's to the end of its time; a
    /// counted or stopped run's to the end mark, or to the worker's end before it): None where
    /// the kernel keeps no count, or for a run that never started.
    pub(super) fn cpu_waits(&self, i: usize) -> Option<CpuWaits> {
        let (start, end) = (self.start.cpu_waits.get(i)?, self.end.cpu_waits.get(i)?);
        Some(end.as_ref()?.since(start.as_ref()?))
    }

    /// What the block layer counted on target `i`'s device while recording: None for a
    /// target that is no block device, or a run that never started.
    pub(super) fn device_time(&self, i: usize) -> Option<DeviceTime> {
        let (start, end) = (self.start.devices.get(i)?, self.end.devices.get(i)?);
        let window_ns = self.end.at_ns.saturating_sub(self.start.at_ns);
        Some(device_time::between(start.as_ref()?, end.as_ref()?, window_ns))
    }
}

/// The main thread's part: sleeps to each interval boundary, samples the counters and the CPU,
/// and feeds the live line.
///
/// Every manager passes the same boundaries in the same order (every interval through
/// ramp-up, its end, every interval of recording, its end), so in a timed run each boundary is
/// a meeting point: the live line adds up every manager, and one manager's failure stops them
/// all at the next boundary. Recording starts when every manager has finished ramp-up.
pub(super) struct Monitor<'a> {
    /// What the workers and the main thread share.
    pub(super) ctl: &'a Control,
    /// Every manager of the test.
    pub(super) group: &'a dyn Group,
    /// The instant the workers' clocks count from, and the wall-clock time then.
    pub(super) epoch: Instant,
    pub(super) started: SystemTime,
    /// The mark at the epoch, taken before the workers started.
    pub(super) first: Mark,
    /// Each target's `st_rdev` where it is a block device (by the prepared targets' order).
    pub(super) devices: &'a [Option<u64>],
    /// Interval, ramp-up and run time.
    pub(super) clock: &'a Clock,
    /// The workload running.
    pub(super) spec: &'a str,
    /// This manager's counts, for the snapshot.
    pub(super) counters: &'a Counters,
    /// Hears every interval; says when to stop.
    pub(super) observer: &'a mut dyn Observer,
    /// A worker that completes no I/O for this long stops the test.
    pub(super) io_timeout: Duration,
}

impl Monitor<'_> {
    fn elapsed(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn all_done(&self) -> bool {
        self.ctl.finished.load(std::sync::atomic::Ordering::Acquire) == self.ctl.live.len()
    }

    /// Ends recording now and stops every worker.
    fn stop_at(&self, at_ns: u64) {
        self.ctl.record_end_ns.fetch_min(at_ns, Relaxed);
        self.ctl.stop.store(true, Relaxed);
    }

    /// Watches the run to its end (time, count, stop or a stalled target); returns the window.
    pub(super) fn watch(mut self) -> Window {
        let (iv, time) = (self.clock.interval_ns, self.clock.time_ns);
        // Recording's start, set before the workers started: the ramp-up's end, or the
        // instant every manager records from.
        let record_start = self.ctl.record_start_ns.load(Relaxed);
        let mut stalls =
            Stalls { seen: vec![(0, 0); self.ctl.live.len()], limit_ns: self.io_timeout.as_nanos() as u64 };
        let mut prev = self.first.clone();
        // Recording's start: ns from the epoch, the mark there, and its wall-clock time.
        let mut rec = (record_start == 0).then(|| (0, prev.clone(), self.started));
        let mut next = if record_start > 0 { iv.min(record_start) } else { iv.min(time) };
        let mut intervals = crate::result::Series::default();
        let mut bounds_at_end = None;
        loop {
            self.wait_until(next, &mut stalls);
            if self.observer.stop_requested() {
                // Recording ends now: what completes while the workers drain is not counted.
                self.stop_at(self.elapsed());
            }
            let end = rec.as_ref().map(|(rs, _, _): &(u64, Mark, SystemTime)| rs.saturating_add(time));
            if self.clock.timed() && end == Some(next) {
                bounds_at_end = Some(self.end_recording(next));
            }
            let at = self.mark_at(rec.is_some(), record_start);
            // Whether every thread of a counted test has finished, asked before the mark: then
            // the mark holds all they counted (asked after it, a thread finishing between the
            // two would end the test on a sample without its last I/Os).
            let finished = !self.clock.timed() && self.all_done();
            let mut m = mark(&self.ctl.live, at);
            if end == Some(next) {
                // Recording's end: the kernel's threads' time with the CPU counters it shares.
                m.cpu.read_kernel_threads();
            }
            let sample = Sample::between(&prev, &m, rec.is_some());
            let stopped = self.tell(&sample, &m, rec.as_ref().map(|r| r.0), finished);
            let last = stopped || end == Some(next);
            if last {
                (m.cpu_waits, m.devices) = bounds_at_end.take().unwrap_or_else(|| bounds(&self.ctl.live, self.devices));
                if end != Some(next) {
                    // Stopped early (a count reached, Ctrl-C, an error): read after the meeting.
                    m.cpu.read_kernel_threads();
                }
            }
            if let Some((rs, _, _)) = &rec {
                // A sliver of a last sample (a stop just after a boundary) is left out, but
                // never the only one: a test done within a millisecond has its one sample. One
                // in the middle (the sample after a late one) holds I/Os, and stays.
                if sample.seconds > 1e-3 || !last || intervals.is_empty() {
                    intervals.push(sample.interval(m.at_ns - rs));
                }
            }
            if last {
                self.stop_at(m.at_ns);
                let (_, start, started_at) = rec.unwrap_or_else(|| (0, m.clone(), SystemTime::now()));
                let stops = crate::host::stops::since(self.epoch, start.at_ns, m.at_ns);
                return Window { start, end: m, intervals: intervals.into_vec(), started_at, stops };
            }
            prev = m;
            next = match &rec {
                Some(_) => next.saturating_add(iv).min(end.expect("recording")),
                None if next < record_start => (next + iv).min(record_start),
                None => {
                    // Ramp-up is over: recording started at its end. Nothing is recorded
                    // before it, whatever is published by now.
                    let mut start = bounding_mark(&self.ctl.live, self.devices, record_start);
                    (start.sums.recorded_ios, start.sums.recorded_bytes) = (0, 0);
                    // The first sample of recording counts from its start.
                    prev = start.clone();
                    rec = Some((record_start, start, self.started + Duration::from_nanos(record_start)));
                    record_start + iv.min(time)
                }
            };
        }
    }

    /// Recording ends at `next` in a timed run: every completion before it is published once
    /// the workers have drained, and the last sample holds them all. A worker may be waiting
    /// for completions that do not come (a target that stopped answering near the end): its
    /// wait is interrupted until it has seen the stop, and it then gives its I/Os io_timeout
    /// to complete. Returns the workers' waits for a CPU and the devices' counts at the
    /// window's end, not their drain's.
    fn end_recording(&mut self, next: u64) -> (Vec<Option<CpuWaits>>, Vec<Option<DeviceCount>>) {
        self.stop_at(next);
        let devices = device_time::read_all(self.devices);
        let mut waited = 0u32;
        while !self.all_done() {
            if waited % 20 == 0 {
                self.ctl.give_up.fetch_or(self.observer.stop_now_requested(), Relaxed);
                crate::worker::wake(&self.ctl.live);
            }
            waited += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        // A worker held off its CPU across the end has that wait counted once it runs again:
        // its waits as it stopped issuing hold it, and none of its drain.
        (self.ctl.live.iter().map(Live::cpu_waits).collect(), devices)
    }

    /// When the next mark is stamped: when the counters are read, but never past the end of
    /// recording nor, before it starts, past its start.
    // The mark is stamped when the counters are read. A monitor woken late (a busy host)
    // reads that much more time's I/Os: stamped at the boundary, they made a nominal
    // second of a run paced at 20,000 IOPS hold 24,104 and the next 16,001 (a loaded
    // pass). Recording's end bounds it, the workers record nothing after it: the drain
    // at the end, or a stop (a stalled target, Ctrl-C) in the last interval, ends it
    // where it came.
    // The same holds at the ramp-up's end: the workers record from it whenever the
    // monitor wakes.
    fn mark_at(&self, recording: bool, record_start: u64) -> u64 {
        match (self.clock.timed(), recording) {
            (true, false) => self.elapsed().min(record_start),
            (true, true) => self.elapsed().min(self.ctl.record_end_ns.load(Relaxed)),
            (false, _) => self.elapsed(),
        }
    }

    /// Sleeps until `next` in short steps: a Ctrl-C or a stop (an I/O error) ends the sample at
    /// once, and when the end is a count the final mark follows the last I/O. A stalled target
    /// stops the test.
    fn wait_until(&self, next: u64, stalls: &mut Stalls) {
        let timed = self.clock.timed();
        while !(self.observer.stop_requested() || self.ctl.stop.load(Relaxed) || (!timed && self.all_done()))
            && self.elapsed() < next
        {
            if stalls.any(&self.ctl.live, self.elapsed(), self.epoch) {
                self.stop_at(self.elapsed());
                return;
            }
            let left = next.saturating_sub(self.elapsed());
            std::thread::sleep(Duration::from_nanos(left.min(if timed { 10_000_000 } else { 2_000_000 })));
        }
    }

    /// Tells the observer about the interval just ended, summed over every manager in a timed
    /// run (each boundary is a meeting). True if the test stops: a worker or manager stopped it,
    /// or (counted) every worker is done.
    /// `recording`: when recording started (ns from the epoch), once it has; `finished`: every
    /// worker of a counted test had finished before `m` was taken.
    fn tell(&mut self, sample: &Sample, m: &Mark, recording: Option<u64>, finished: bool) -> bool {
        let stop = self.ctl.stop.load(Relaxed);
        let cpu_milli = (sample.cpu_pct * 1000.0) as u64;
        let in_flight: u64 = self.ctl.live.iter().map(|l| l.in_flight.load(Relaxed)).sum();
        let mut d = vec![sample.ios, sample.bytes, sample.response_ns, cpu_milli, u64::from(stop), in_flight];
        // Every rank sums the same length: the sample's histogram is trimmed to its last used
        // bucket, which differs between managers (MPI_ERR_TRUNCATE otherwise).
        d.extend(sample.latency.counts().chain(std::iter::repeat(0)).take(LIVE_BUCKETS));
        let counts = self.counters.counts();
        // A counted run ends at a different boundary on each manager: only timed runs meet.
        let (all, stopped, cpu_pct, counts) = if self.clock.timed() {
            let s = self.group.sum(&d, "an interval");
            let (stopped, cpu) = (s[4] > 0, s[3] as f64 / 1000.0 / self.group.all().len() as f64);
            let mine = serde_json::to_vec(&counts).expect("counts serialise");
            // Bounded as the sum before it: a rank stopped between the two held the others
            // here for ever (a loaded pass of managers::a_hung_rank_stops_the_run_in_bounded_time).
            let parts = self.group.all_gather(&mine, "an interval's counts", self.clock.meeting_timeout);
            let counts = parts.iter().flat_map(|p| serde_json::from_slice::<Vec<Count>>(p).unwrap_or_default());
            (s, stopped, cpu, counts.collect())
        } else {
            (d, stop || finished, sample.cpu_pct, counts)
        };
        let merged = Sample {
            seconds: sample.seconds,
            ios: all[0],
            bytes: all[1],
            response_ns: all[2],
            cpu_pct,
            latency: Histogram::from_counts(all[6..].to_vec()),
        };
        let (ramp, time) = (self.clock.ramp_ns, self.clock.time_ns);
        let elapsed_ns = m.at_ns.saturating_sub(recording.unwrap_or(0));
        self.observer.interval(&Snapshot {
            workload: self.spec,
            phase: if recording.is_some() { Phase::Run } else { Phase::Ramp },
            elapsed_s: elapsed_ns as f64 / 1e9,
            total_s: self.clock.timed().then(|| if recording.is_some() { time } else { ramp } as f64 / 1e9),
            interval: merged.interval(elapsed_ns),
            ios: merged.ios,
            bytes: merged.bytes,
            response_ns: merged.response_ns,
            in_flight: all[5],
            counts,
            study: None,
        });
        stopped
    }
}

/// When each worker last completed an I/O: one that is still running and has completed none
/// for io_timeout waits on a target that stopped answering, and the test stops.
struct Stalls {
    /// Per worker: its count of completions when last seen to change, and when.
    seen: Vec<(u64, u64)>,
    limit_ns: u64,
}

impl Stalls {
    /// Whether a worker has completed nothing for the limit (`now`: ns from `epoch`), counted
    /// from the process's last stop (Ctrl-Z, SIGSTOP) where it went on since: a stopped
    /// worker's target is not the one that stopped answering.
    fn any(&mut self, live: &[Live], now: u64, epoch: Instant) -> bool {
        let mut since = None;
        for (l, (ios, at)) in live.iter().zip(&mut self.seen) {
            let done = l.ios.load(Relaxed);
            if done != *ios {
                (*ios, *at) = (done, now);
            }
            if l.thread.load(Relaxed) == 0 || now - *at < self.limit_ns {
                continue;
            }
            // Asked only of a worker that looks stalled: the stops are read once, not every look.
            let continued = *since.get_or_insert_with(|| {
                crate::host::stops::last_continued().map_or(0, |t| t.saturating_duration_since(epoch).as_nanos() as u64)
            });
            if now.saturating_sub((*at).max(continued)) >= self.limit_ns {
                return true;
            }
        }
        false
    }
}

/// This manager's I/Os, bytes, response time and CPU between two marks.
struct Sample {
    seconds: f64,
    ios: u64,
    bytes: u64,
    response_ns: u64,
    cpu_pct: f64,
    /// Response times of the I/Os completed in it.
    latency: Histogram,
}

impl Sample {
    /// The sample between two marks: of the completions recorded, once `recording`.
    fn between(prev: &Mark, m: &Mark, recording: bool) -> Sample {
        let (now, before) = (&m.sums.latency, &prev.sums.latency);
        let (ios, bytes) = match recording {
            true => (m.sums.recorded_ios - prev.sums.recorded_ios, m.sums.recorded_bytes - prev.sums.recorded_bytes),
            false => (m.sums.ios - prev.sums.ios, m.sums.bytes - prev.sums.bytes),
        };
        Sample {
            seconds: (m.at_ns - prev.at_ns).max(1) as f64 / 1e9,
            ios,
            bytes,
            response_ns: m.sums.response_ns - prev.sums.response_ns,
            cpu_pct: cpu::utilization(&prev.cpu, &m.cpu),
            latency: Histogram::from_counts(now.iter().zip(before).map(|(a, b)| a - b).collect()),
        }
    }

    /// The sample as an interval of the result, ending `t_ns` after recording started.
    fn interval(&self, t_ns: u64) -> Interval {
        let dt = self.seconds;
        Interval {
            t_s: t_ns as f64 / 1e9,
            duration_s: dt,
            iops: self.ios as f64 / dt,
            mbps: self.bytes as f64 / dt / 1e6,
            avg_response_ms: (self.ios > 0).then(|| self.response_ns as f64 / self.ios as f64 / 1e6),
            cpu_pct: self.cpu_pct,
            percentiles_ms: percentiles_of(&self.latency, None),
            histogram: Some(self.latency.clone()),
        }
    }
}
