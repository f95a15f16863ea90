//! A worker's loop on its engine: issue, wait, reap, until the test stops and what is in
//! flight drains or is given up. Built once per kind of loop (verified, replaying, plain), so
//! neither verification nor replay costs the plain loop anything (tests/it/cost.rs).

use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use super::arrival::Arrival;
use super::control::{Control, Live, LiveCount};
use super::generator::Generator;
use super::log_chunks;
use super::source::{Drawn, Next, Source};
use super::state::{FailedIo, SetUp, SlotMeta, WorkerJob};
use crate::engine::{self, Completion, Engine, Io};
use crate::error::{Result, runtime};
use crate::stats::{IoStats, Op};
use crate::trace::replay::Replayer;
use crate::verify::checker::Checker;

/// An open loop spins rather than sleeps through the last this many ns before an I/O is due
/// (a sleep wakes some tens of µs late).
const SPIN_NS: u64 = 100_000;

/// The longest a worker sleeps or waits before it looks whether the test stops (a signal
/// interrupts its waits for completions, not its sleeps: Rust's sleep resumes after one).
const STOP_SEEN_NS: u64 = 50_000_000;

/// A verified I/O that overlaps none in flight on its target (a read could see half a write,
/// two writes could land in either order): `first`, or another draw. None when 16 draws all
/// overlap (a crowded working set): the worker then waits for completions.
#[inline(never)]
fn draw_apart(c: &Checker, g: &mut Generator, target: usize, qd: usize, first: Drawn) -> Option<Drawn> {
    let mine = target * qd..(target + 1) * qd;
    let mut io = first;
    for _ in 0..16 {
        // A flush touches no blocks.
        if io.op == Op::Flush || !c.overlaps(mine.clone(), io.offset, io.len) {
            return Some(io);
        }
        io = g.draw(target);
    }
    None
}

/// Prepares a verified I/O: a write's data is copied from the pattern `window` into the slot's
/// own buffer and stamped there (the window is shared by writes in flight). Returns the buffer
/// to use, in region 0.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn verified_issue(
    c: &mut Checker,
    slot: u32,
    target: u32,
    write: bool,
    offset: u64,
    len: u32,
    written: *mut u8,
    slot_buf: *mut u8,
    now: u64,
) -> *mut u8 {
    if write {
        // SAFETY: the slot's buffer (max_size bytes) is not in flight and nothing else refers
        // to it; `written`, the slot's part of the write buffer, holds max_size bytes.
        let data = unsafe {
            std::ptr::copy_nonoverlapping(written, slot_buf, len as usize);
            std::slice::from_raw_parts_mut(slot_buf, len as usize)
        };
        c.issue_write(slot, target, data, offset, now);
    } else {
        c.issue_read(slot, offset, len);
    }
    slot_buf
}

/// A verified I/O completed: a write updates the map, a read is checked. True on a mismatch.
#[inline(never)]
fn verified_completion(c: &mut Checker, slot: u32, m: &SlotMeta, slot_buf: *const u8, ok: bool) -> bool {
    match m.op {
        Op::Write => {
            c.write_done(slot, m.target, ok);
            return false;
        }
        // Flushes have no blocks; a test that verifies has no trims (plan refuses them).
        Op::Flush | Op::Trim => return false,
        Op::Read => {}
    }
    let data = if ok {
        // SAFETY: the slot's read completed (the kernel no longer writes its buffer), which
        // holds m.len bytes.
        unsafe { std::slice::from_raw_parts(slot_buf, m.len as usize) }
    } else {
        &[]
    };
    c.read_done(slot, m.target, data, ok) > 0
}

fn now_ns(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

/// The worker's loop over its engine, with what it needs.
pub(super) struct Loop<'a> {
    pub(super) job: &'a WorkerJob,
    pub(super) s: &'a mut SetUp,
    pub(super) ctl: &'a Control,
    pub(super) epoch: Instant,
}

impl engine::Driver for Loop<'_> {
    /// The engine's description and the time of the last recorded completion, or why the
    /// loop stopped.
    type Output = Result<(String, u64)>;

    /// The loop, built three times: with verification (`s.checker`), replaying a trace
    /// (`s.replay`; the plan never verifies a replay), and drawing I/Os unverified, where
    /// neither costs anything. Also returns the targets (plan order) of the I/Os that never
    /// completed and were given up (see [`give_up`]).
    fn drive<E: Engine>(self, engine: &mut E) -> (Self::Output, Vec<usize>) {
        let Loop { job, s, ctl, epoch } = self;
        let r = if s.checker.is_some() {
            Drive::<E, true, false>::new(engine, job, s, ctl, epoch).run()
        } else if s.replay.is_some() {
            Drive::<E, false, true>::new(engine, job, s, ctl, epoch).run()
        } else {
            Drive::<E, false, false>::new(engine, job, s, ctl, epoch).run()
        };
        match r {
            Ok((described, last_ns, gave_up)) => (Ok((described, last_ns)), gave_up),
            Err(e) => (Err(e), Vec::new()),
        }
    }
}

/// The state of one worker's loop on its engine. A struct so the loop reads as its steps
/// (issue, wait, reap); its methods are inlined into [`Drive::run`], where the fields live in
/// registers as locals would (tests/it/cost.rs holds the count of instructions per I/O).
struct Drive<'a, E: Engine, const VERIFY: bool, const REPLAY: bool> {
    engine: &'a mut E,
    job: &'a WorkerJob,
    s: &'a mut SetUp,
    ctl: &'a Control,
    live: &'a Live,
    epoch: Instant,
    /// Outstanding I/Os per target (slot `s` belongs to target `s / qd`).
    qd: usize,
    /// The most I/Os in flight at once: all slots, or fewer if the engine says so.
    cap: usize,
    read_base: *mut u8,
    write_base: *mut u8,
    ios_limit: u64,
    bytes_limit: u64,
    in_flight: usize,
    issued: u64,
    issued_bytes: u64,
    /// Completed I/Os, bytes and response time, ramp-up included (for [`Live`]).
    total_ios: u64,
    total_bytes: u64,
    total_resp: u64,
    /// Nothing is issued before this instant (a transfer delay, the next arrival).
    next_issue_ns: u64,
    burst_count: u32,
    last_ns: u64,
    /// False once a limit is met or the test stops: what is in flight drains.
    issuing: bool,
    /// Once issuing stops, the I/Os in flight have io_timeout to complete.
    drain_deadline: Option<u64>,
    /// An I/O that takes longer than io_timeout (ns) counts as timed out.
    io_timeout_ns: u64,
    now: u64,
    /// Open loop: I/O k is due at its arrival time whether or not earlier ones completed, and
    /// its response time counts from then, so a stall shows as latency instead of hiding in a
    /// slower closed loop (coordinated omission).
    arrivals: Option<Arrival>,
    /// A replay at its trace's times (not as fast as possible).
    replay_timed: bool,
    /// The engine hands I/Os to the kernel as they are queued (each, or each batch): each is
    /// timed from just before its queueing.
    stamp_each: bool,
}

impl<'a, E: Engine, const VERIFY: bool, const REPLAY: bool> Drive<'a, E, VERIFY, REPLAY> {
    fn new(engine: &'a mut E, job: &'a WorkerJob, s: &'a mut SetUp, ctl: &'a Control, epoch: Instant) -> Self {
        let slots = s.meta.len();
        let now = now_ns(epoch);
        let arrivals = Arrival::new(job.plan.rate, job.arrivals, job.seed, now);
        let replay_timed = s.replay.as_ref().is_some_and(Replayer::timed);
        let stamp_each = engine.hands_over_at_queue();
        if arrivals.is_some() || replay_timed {
            // Sleeps and timed waits end up to the timer slack late (50 µs by default), and an
            // open loop counts that lateness as response time: ask for 1 ns.
            // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer and changes only this
            // thread.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        }
        Drive {
            cap: engine.max_in_flight().min(slots),
            engine,
            job,
            ctl,
            live: &ctl.live[job.index],
            epoch,
            qd: job.plan.outstanding as usize,
            read_base: s.read_buf.as_ref().map_or(std::ptr::null_mut(), |b| b.as_ptr()),
            write_base: s.write_buf.as_ref().map_or(std::ptr::null_mut(), |b| b.as_ptr()),
            s,
            ios_limit: job.ios_limit.unwrap_or(u64::MAX),
            bytes_limit: job.bytes_limit.unwrap_or(u64::MAX),
            in_flight: 0,
            issued: 0,
            issued_bytes: 0,
            total_ios: 0,
            total_bytes: 0,
            total_resp: 0,
            next_issue_ns: 0,
            burst_count: 0,
            last_ns: 0,
            // The issue step stops issuing at its first check if a limit is already met (a
            // worker whose share of --ios is 0).
            issuing: true,
            drain_deadline: None,
            io_timeout_ns: job.io_timeout.as_nanos() as u64,
            now,
            arrivals,
            replay_timed,
            stamp_each,
        }
    }

    /// Runs until the test stops and what is in flight has completed or been given up: the
    /// engine's description, the time of the last recorded completion, and the targets of the
    /// I/Os given up.
    fn run(mut self) -> Result<(String, u64, Vec<usize>)> {
        // The free slots and the completions reaped are locals, not fields: LLVM keeps their
        // pointers and lengths in registers only so (tests/it/cost.rs measured 6 more
        // instructions per I/O as fields).
        let slots = self.s.meta.len();
        let mut free: VecDeque<u32> = (0..slots as u32).collect();
        let mut done: Vec<Completion> = Vec::with_capacity(slots);
        let mut gave_up = Vec::new();
        loop {
            if self.issuing && self.now >= self.next_issue_ns {
                self.issue(&mut free);
            }
            if self.in_flight == 0 {
                if !self.issuing {
                    self.live.thread_stopped_issuing();
                    break;
                }
                self.wait_for_next_issue();
                continue;
            }
            let Some((reap, timeout)) = self.wait_for() else {
                gave_up = give_up(self.s, &free, self.now);
                break;
            };
            if let (true, Some(c)) = (VERIFY, &mut self.s.checker) {
                // Issued writes are journaled before they can reach the target.
                c.flush_journal().map_err(|e| runtime(format!("writing the journal: {e}")))?;
            }
            self.live.in_flight.store(self.in_flight as u64, Relaxed);
            self.engine
                .submit_and_wait(reap, timeout, &mut done)
                .map_err(|e| runtime(format!("I/O engine failed: {e}")))?;
            self.now = now_ns(self.epoch);
            self.reap(&mut done, &mut free);
        }
        if let Some(c) = &mut self.s.checker {
            c.flush_journal().map_err(|e| runtime(format!("writing the journal: {e}")))?;
        }
        if let Some(e) = self.s.replay.as_mut().and_then(|r| r.error.take()) {
            // Met mid-run, after I/Os went out: a failure of the run (exit 1), even where the
            // trace's own line is at fault, since an input error promises nothing was written.
            return Err(runtime(e.to_string()));
        }
        Ok((self.engine.describe(), self.last_ns, gave_up))
    }

    /// Queues I/Os into free slots until the engine is full, a limit is met, the next arrival,
    /// trace row or transfer delay is not yet due, or (verifying) every draw overlaps an I/O
    /// in flight.
    #[inline(always)]
    fn issue(&mut self, free: &mut VecDeque<u32>) {
        if let Some(a) = &mut self.arrivals {
            a.record_from(&self.ctl.record_start_ns, self.now);
        }
        while self.in_flight < self.cap && self.may_issue() {
            let Some(slot) = free.pop_front() else { return };
            let target = slot / self.qd as u32;
            let Some(io) = self.draw(target as usize) else {
                free.push_front(slot);
                return;
            };
            let line = &self.s.generator.lines[io.line];
            let (fsync, delay_ns, burst) = (line.fsync, line.delay_ns, line.burst);
            self.queue(slot, target, io, fsync);
            if self.burst_ends(delay_ns, burst) {
                return;
            }
        }
    }

    /// Whether another I/O may go now: no limit is met (else issuing stops) and the next
    /// arrival is due (else it is waited for).
    #[inline(always)]
    fn may_issue(&mut self) -> bool {
        if self.issued >= self.ios_limit || self.issued_bytes >= self.bytes_limit {
            self.issuing = false;
            return false;
        }
        match &self.arrivals {
            Some(a) if a.next_ns > self.now => {
                self.next_issue_ns = a.next_ns;
                false
            }
            _ => true,
        }
    }

    /// The next I/O on `target` from the worker's one source (a replay's trace, or the
    /// generator), verified to overlap none in flight; None when the source has none yet (its
    /// time is waited for) or ever again (issuing stops), or every verified draw overlaps.
    #[inline(always)]
    fn draw(&mut self, target: usize) -> Option<Drawn> {
        let next = match (REPLAY, &mut self.s.replay) {
            (true, Some(r)) => r.next_io(target, self.now),
            _ => self.s.generator.next_io(target, self.now),
        };
        let io = match next {
            Next::Io(io) => io,
            Next::At(due) => {
                self.next_issue_ns = due;
                return None;
            }
            Next::End => {
                self.issuing = false;
                return None;
            }
        };
        match (VERIFY, &self.s.checker) {
            (true, Some(c)) => draw_apart(c, &mut self.s.generator, target, self.qd, io),
            _ => Some(io),
        }
    }

    /// Hands `io` to the engine in `slot` and notes it in the slot's record.
    #[inline(always)]
    fn queue(&mut self, slot: u32, target: u32, io: Drawn, fsync: bool) {
        let Drawn { op, offset, len, fua, .. } = io;
        let (buf, region) = self.buffer(slot, target, &io);
        // An open loop times each I/O from when it was due; a closed one from when it went
        // to the kernel: each at its own time where the engine hands I/Os over as they are
        // queued (a system call each, or each batch, some µs apart), else all from the
        // worker's last look at the clock.
        let submit_ns = match &mut self.arrivals {
            Some(a) => a.take(len),
            None if self.stamp_each => now_ns(self.epoch),
            None => self.now,
        };
        // SAFETY: `buf` is the slot's own part of a buffer of slots x max_size bytes (len
        // <= max_size), which the worker keeps until the engine is gone (or for good, when
        // the engine says given-up I/Os pin it), and which no other I/O uses until this
        // slot's completion frees it.
        unsafe { self.engine.queue(&Io { slot, target, op, fua, fsync, offset, len, buf, region }) };
        self.s.meta[slot as usize] = SlotMeta { submit_ns, issued: self.issued, offset, len, target, op };
        self.in_flight += 1;
        self.issued += 1;
        self.issued_bytes += len as u64;
    }

    /// The buffer and region of `io` in `slot`: a read's, or a write's data (made afresh
    /// where the test asks; copied into the slot's own buffer and stamped when verifying).
    #[inline(always)]
    fn buffer(&mut self, slot: u32, target: u32, io: &Drawn) -> (*mut u8, u16) {
        // Each buffer holds slots x max_size bytes (none without reads or writes: never
        // used; the null target has neither).
        let slot_buf = self.read_base.wrapping_add(slot as usize * self.s.max_size);
        let (buf, region) = if io.op == Op::Write {
            let data = self.write_base.wrapping_add(slot as usize * self.s.max_size);
            if let Some(b) = &mut self.s.blocks {
                // SAFETY: the slot's part of the write buffer (max_size >= len bytes) is in
                // no I/O in flight: its last one completed before the slot was freed.
                b.prepare(unsafe { std::slice::from_raw_parts_mut(data, io.len as usize) });
            }
            (data, 1)
        } else {
            (slot_buf, 0)
        };
        match (VERIFY, &mut self.s.checker, io.op == Op::Flush) {
            (true, Some(c), false) => {
                (verified_issue(c, slot, target, io.op == Op::Write, io.offset, io.len, buf, slot_buf, self.now), 0)
            }
            _ => (buf, region),
        }
    }

    /// Counts an I/O into its line's burst of `burst` I/Os: true when the burst is complete,
    /// and the next I/O waits the line's transfer delay, `delay_ns`. Bursts start `delay` apart, counted from when
    /// this one was due, so a sleep that woke late does not stretch every period (a burst
    /// that started a whole delay late, held up by the storage, counts from now).
    #[inline(always)]
    fn burst_ends(&mut self, delay_ns: u64, burst: u32) -> bool {
        if delay_ns == 0 {
            return false;
        }
        self.burst_count += 1;
        if self.burst_count < burst {
            return false;
        }
        self.burst_count = 0;
        let due = self.next_issue_ns;
        let from = if self.now.saturating_sub(due) < delay_ns { due } else { self.now };
        self.next_issue_ns = from + delay_ns;
        true
    }

    /// Waits out a transfer delay or the next arrival with nothing in flight, but never past
    /// the end of recording, and in steps of at most [`STOP_SEEN_NS`], so a stop (Ctrl-C, an
    /// error elsewhere) is seen within them: a rate of one I/O a minute, or a trace's next row
    /// an hour on, must not hold the run. A sleep wakes some µs late; an open loop would count
    /// that as response time, so it spins through the last SPIN_NS.
    #[inline(always)]
    fn wait_for_next_issue(&mut self) {
        let paced = self.paced();
        loop {
            let until = self.next_issue_ns.min(self.ctl.record_end_ns.load(Relaxed));
            let left = until.saturating_sub(now_ns(self.epoch));
            if left == 0 || self.ctl.stop.load(Relaxed) {
                break;
            }
            if paced && left <= SPIN_NS {
                // On time within the clock's resolution instead of a wake-up's latency late.
                while now_ns(self.epoch) < until {
                    std::hint::spin_loop();
                }
                break;
            }
            let nap = if paced { left - SPIN_NS } else { left };
            std::thread::sleep(Duration::from_nanos(nap.min(STOP_SEEN_NS)));
        }
        self.now = now_ns(self.epoch);
        if self.now >= self.ctl.record_end_ns.load(Relaxed) || self.ctl.stop.load(Relaxed) {
            self.issuing = false;
        }
    }

    /// Whether I/Os are due at times: open-loop arrivals, or a replay at its trace's times.
    #[inline(always)]
    fn paced(&self) -> bool {
        self.arrivals.is_some() || (REPLAY && self.replay_timed)
    }

    /// When the next paced I/O is due (ns from the epoch).
    #[inline(always)]
    fn next_due(&mut self) -> u64 {
        match (&self.arrivals, &mut self.s.replay) {
            (Some(a), _) => a.next_ns,
            (None, Some(r)) => r.peek().map_or(u64::MAX, |d| d.due_ns),
            (None, None) => self.now,
        }
    }

    /// How many completions to wait for, and for how long at most; None once a drain has
    /// waited out io_timeout.
    #[inline(always)]
    fn wait_for(&mut self) -> Option<(usize, Option<Duration>)> {
        // An open loop reaps every completion at once, and with a slot free it also wakes for
        // its next arrival (with none free, arrivals wait for a completion anyway).
        let (reap, timeout) = match self.paced() {
            true if self.issuing && self.in_flight < self.cap => {
                // Woken SPIN_NS early, then polling: on time rather than a wake-up late; and
                // at the end of recording, or within STOP_SEEN_NS, to see a stop.
                let due = self.next_due().min(self.ctl.record_end_ns.load(Relaxed));
                let left = due.saturating_sub(self.now).saturating_sub(SPIN_NS).min(STOP_SEEN_NS);
                (1, Some(Duration::from_nanos(left)))
            }
            true => (1, None),
            false => (self.in_flight.min(self.job.completion_batch).max(1), None),
        };
        if self.issuing {
            return Some((reap, timeout));
        }
        if self.drain_deadline.is_none() {
            self.live.thread_stopped_issuing();
        }
        let deadline = *self.drain_deadline.get_or_insert(self.now + self.job.io_timeout.as_nanos() as u64);
        if self.ctl.give_up.load(Relaxed) {
            return None;
        }
        drain_wait(deadline, self.now, timeout).map(|t| (reap, Some(t)))
    }

    /// Accounts for the completions the engine returned: stats while recording, errors
    /// always, verification, the live counters; frees their slots.
    #[inline(always)]
    fn reap(&mut self, done: &mut Vec<Completion>, free: &mut VecDeque<u32>) {
        let (now, job, ctl, epoch) = (self.now, self.job, self.ctl, self.epoch);
        let end_ns = ctl.record_end_ns.load(Relaxed);
        let start_ns = ctl.record_start_ns.load(Relaxed);
        let recording = now >= start_ns && now < end_ns;
        // What completes after recording ended (the drain) is in no sample: an interval's
        // response times are those of the I/Os it counts.
        let sampled = now < end_ns;
        for c in done.drain(..) {
            self.in_flight -= 1;
            let m = self.s.meta[c.slot as usize];
            let response = now - m.submit_ns;
            let stats = &mut self.s.stats[m.target as usize];
            // A trim's completion is 0 (the kernel's) or its length (the null target's).
            let ok = c.result == m.len as i32 || (c.result == 0 && m.op == Op::Trim);
            if ok && response > self.io_timeout_ns && !stopped_meanwhile(epoch, m.submit_ns, now) {
                // It came back, but after a stall longer than io_timeout: an error too (the
                // psync engine cannot give up an I/O, only see how long it took). Not where
                // the test's process was stopped meanwhile (Ctrl-Z): the stall was the test's.
                failed(stats, self.live, &mut self.s.first_error, &m, libc::ETIMEDOUT, now, job.stop_on_error, ctl);
            }
            if let (true, Some(ch)) = (VERIFY, &mut self.s.checker) {
                // SAFETY: the slot's I/O completed; its buffer holds m.len bytes.
                let data = unsafe { self.read_base.add(c.slot as usize * self.s.max_size) };
                if verified_completion(ch, c.slot, &m, data, ok) && job.stop_on_error {
                    ctl.record_end_ns.fetch_min(now, Relaxed);
                    ctl.stop.store(true, Relaxed);
                }
            }
            if ok {
                if recording {
                    stats.of_mut(m.op).record(m.len as u64, response);
                    let live = &self.live.recorded[m.target as usize][m.op as usize];
                    LiveCount::bump(&live.ios, 1);
                    LiveCount::bump(&live.bytes, m.len as u64);
                    if let Some(log) = &mut self.s.log {
                        let (at_ns, response_ns, offset, len, op) = (now - start_ns, response, m.offset, m.len, m.op);
                        let target = m.target as u16;
                        log.push(log_chunks::Entry { at_ns, response_ns, offset, len, target, op });
                    }
                }
                self.total_ios += 1;
                self.total_bytes += m.len as u64;
                if sampled {
                    self.total_resp += response;
                    self.live.latency.record(response);
                }
            } else {
                // Errors count whenever they happen: a failing device must not look clean
                // because it failed during ramp-up.
                let errno = if c.result < 0 { -c.result } else { 0 };
                failed(stats, self.live, &mut self.s.first_error, &m, errno, now, job.stop_on_error, ctl);
            }
            free.push_back(c.slot);
        }
        if recording {
            self.last_ns = now;
        }
        self.live.ios.store(self.total_ios, Relaxed);
        self.live.bytes.store(self.total_bytes, Relaxed);
        self.live.response_ns.store(self.total_resp, Relaxed);
        if now >= end_ns || ctl.stop.load(Relaxed) {
            self.issuing = false;
        }
    }
}

/// Whether the test's process was stopped (Ctrl-Z, SIGSTOP) between two times (ns from `epoch`).
#[cold]
fn stopped_meanwhile(epoch: Instant, from_ns: u64, to_ns: u64) -> bool {
    crate::host::stops::since(epoch, from_ns, to_ns) != crate::host::stops::Stops::default()
}

/// A failed I/O (or one that came back after more than io_timeout: ETIMEDOUT): counted on its
/// target, the worker's first error if it has none; stops the test if errors do (recording
/// ends here; the monitor stops every worker and manager).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn failed(
    stats: &mut IoStats,
    live: &Live,
    first: &mut Option<FailedIo>,
    m: &SlotMeta,
    errno: i32,
    now: u64,
    stop_on_error: bool,
    ctl: &Control,
) {
    stats.record_error(m.op, errno);
    LiveCount::bump(&live.recorded[m.target as usize][m.op as usize].errors, 1);
    if first.is_none() {
        *first = Some(FailedIo { target: m.target as usize, offset: m.offset, op: m.op, errno, at_ns: now });
    }
    if stop_on_error {
        ctl.record_end_ns.fetch_min(now, Relaxed);
        ctl.stop.store(true, Relaxed);
    }
}

/// How long a draining worker may wait: until its `deadline` (io_timeout after the drain
/// began), or `timeout` if sooner. None once the deadline has passed.
#[cold]
fn drain_wait(deadline: u64, now: u64, timeout: Option<Duration>) -> Option<Duration> {
    let left = Duration::from_nanos(deadline.checked_sub(now).filter(|&l| l > 0)?);
    Some(timeout.map_or(left, |t| t.min(left)))
}

/// Gives up the I/Os still in flight after the drain's timeout: each counts as an error
/// (ETIMEDOUT) on its target, the oldest is the worker's first error if it has none, and a
/// verified write's blocks become unknown. Returns their targets (plan order, each once).
#[cold]
fn give_up(s: &mut SetUp, free: &VecDeque<u32>, now: u64) -> Vec<usize> {
    let mut idle = vec![false; s.meta.len()];
    for &f in free {
        idle[f as usize] = true;
    }
    let stuck: Vec<u32> = (0..s.meta.len() as u32).filter(|&i| !idle[i as usize]).collect();
    for &slot in &stuck {
        let m = s.meta[slot as usize];
        s.stats[m.target as usize].record_error(m.op, libc::ETIMEDOUT);
        if let Some(c) = &mut s.checker {
            verified_completion(c, slot, &m, std::ptr::null(), false);
        }
    }
    if let (None, Some(&oldest)) = (s.first_error, stuck.iter().min_by_key(|&&i| s.meta[i as usize].issued)) {
        let m = s.meta[oldest as usize];
        let (target, offset, op) = (m.target as usize, m.offset, m.op);
        s.first_error = Some(FailedIo { target, offset, op, errno: libc::ETIMEDOUT, at_ns: now });
    }
    let mut targets: Vec<usize> = stuck.iter().map(|&i| s.meta[i as usize].target as usize).collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}
